// SPDX-License-Identifier: Apache-2.0
#include "models/external/tlm_region.hpp"

#include <stdexcept>

#include <systemc>

#include "models/common/tlm_link.hpp"
#include "models/common/tlm_target.hpp"

namespace indexsim::model {

using config::Rule;

TlmRegionParams TlmRegionParams::from(const config::Node& n) {
  TlmRegionParams p;
  p.capacity_GiB = n.req<double>("capacity_GiB", Rule::positive());
  p.peak_bandwidth_GBps = n.req<double>("peak_bandwidth_GBps", Rule::positive());
  p.idle_read_latency_ns = n.req<double>("idle_read_latency_ns", Rule::non_negative());
  const auto style = n.req<std::string>("coding_style", Rule::choice({"loosely_timed", "approximately_timed"}));
  p.style = style == "loosely_timed" ? Style::loosely_timed : Style::approximately_timed;
  return p;
}

// A payload with its requester's extension and the id it answers to.
struct TlmRegion::Payload : tlm::tlm_generic_payload {
  RequesterExtension who;
  uint64_t id = 0;
  Tick sent = 0;
  Payload() {
    set_extension(&who);
  }
  ~Payload() override { clear_extension<RequesterExtension>(); }  // a member, not the payload's to free
};

// The region's module: its initiator socket and the backward path of the base protocol.
class TlmRegion::Face : public sc_core::sc_module, public tlm::tlm_bw_transport_if<> {
 public:
  tlm::tlm_initiator_socket<> socket;
  Face(sc_core::sc_module_name name, TlmRegion& owner) : sc_core::sc_module(name), socket("socket"), o_(owner) {
    socket.bind(*this);
  }
  tlm::tlm_sync_enum nb_transport_bw(tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase, sc_core::sc_time& delay) override {
    auto& p = static_cast<Payload&>(gp);  // every payload on this socket is the region's
    if (phase == tlm::END_REQ) {
      o_.end_req(p);
      o_.tell();
      return tlm::TLM_ACCEPTED;
    }
    if (phase == tlm::BEGIN_RESP) {
      if (o_.waiting_end_req_ == &p) o_.end_req(p);  // BEGIN_RESP implies END_REQ
      o_.completed(p, sc_now_ps() + delay.value());
      o_.tell();
      return tlm::TLM_COMPLETED;
    }
    SC_REPORT_ERROR("TlmRegion", "nb_transport_bw: only END_REQ and BEGIN_RESP come back");
    return tlm::TLM_COMPLETED;
  }
  void invalidate_direct_mem_ptr(sc_dt::uint64, sc_dt::uint64) override {}  // no DMI: every access is timed

 private:
  TlmRegion& o_;
};

TlmRegion::TlmRegion(const TlmRegionParams& p, std::string name) : p_(p), name_(std::move(name)) {}
TlmRegion::~TlmRegion() = default;

tlm::tlm_initiator_socket<>& TlmRegion::socket() {
  if (!face_) {
    std::string module = "region_" + name_;
    for (char& c : module)
      if (c == '.') c = '_';
    face_ = std::make_unique<Face>(module.c_str(), *this);
  }
  return face_->socket;
}

bool TlmRegion::bound() const { return face_ && face_->socket.get_interface() != nullptr; }

uint64_t TlmRegion::capacity_bytes() const { return static_cast<uint64_t>(p_.capacity_GiB * double(1ull << 30)); }

TlmRegion::Payload& TlmRegion::take(const MemRequest& req) {
  Payload& p = pool_.take(req);
  p.id = req.id;
  return p;
}

bool TlmRegion::try_enqueue(const MemRequest& req, Tick now) {
  if (!bound())
    throw std::logic_error("region " + name_ + " (impl tlm_target) received a request with no target bound to its socket");
  if (waiting_end_req_) {  // the base protocol's request exclusion rule: the target pushes back
    ++refused_;
    return false;
  }
  Payload& p = take(req);
  const Tick sc = sc_now_ps();
  sc_core::sc_time delay = sc_core::sc_time::from_value(now > sc ? now - sc : 0);
  p.sent = now;
  (req.write ? writes_ : reads_) += 1;
  (req.write ? bytes_written_ : bytes_read_) += req.bytes;
  if (p_.style == TlmRegionParams::Style::loosely_timed) {
    face_->socket->b_transport(p, delay);
    completed(p, sc_now_ps() + delay.value());
    return true;
  }
  tlm::tlm_phase phase = tlm::BEGIN_REQ;
  switch (face_->socket->nb_transport_fw(p, phase, delay)) {
    case tlm::TLM_ACCEPTED:  // END_REQ (or BEGIN_RESP) comes on the backward path
      waiting_end_req_ = &p;
      break;
    case tlm::TLM_UPDATED:
      if (phase == tlm::BEGIN_RESP) {
        // Early completion through the return path: END_RESP goes back at once.
        completed(p, sc_now_ps() + delay.value());
        tlm::tlm_phase end = tlm::END_RESP;
        sc_core::sc_time zero = sc_core::SC_ZERO_TIME;
        face_->socket->nb_transport_fw(p, end, zero);
      } else if (phase != tlm::END_REQ) {
        throw std::logic_error("region " + name_ + ": the target answered BEGIN_REQ with a phase other than END_REQ or BEGIN_RESP");
      }
      break;
    case tlm::TLM_COMPLETED:
      completed(p, sc_now_ps() + delay.value());
      break;
  }
  return true;
}

void TlmRegion::end_req(Payload& p) {
  if (waiting_end_req_ != &p) return;
  waiting_end_req_ = nullptr;
  retry_at_ = sc_now_ps();
}

void TlmRegion::completed(Payload& p, Tick at) {
  if (p.is_response_error())
    throw std::runtime_error("region " + name_ + ": the target answered " + p.get_response_string() + " at address " +
                             std::to_string(p.get_address()));
  latency_ps_sum_ += double(at > p.sent ? at - p.sent : 0);
  done_.push(at, p.id);
  give_back(p);
}

Tick TlmRegion::next_event() const { return done_.top_time(); }

Tick TlmRegion::next_retry() const { return std::min(done_.top_time(), retry_at_); }

void TlmRegion::advance(Tick now, std::vector<MemCompletion>& done) {
  if (retry_at_ <= now) retry_at_ = kNever;  // whoever held a refused request has tried again
  while (done_.top_time() <= now) {
    const Tick t = done_.top_time();
    done.push_back({done_.pop(), t});
  }
}

void TlmRegion::report(StatSink& sink, const std::string& c) const {
  sink.add(c, "reads", static_cast<double>(reads_), "count", "read requests sent to the external target");
  sink.add(c, "writes", static_cast<double>(writes_), "count", "write requests sent to the external target");
  sink.add(c, "bytes_read", static_cast<double>(bytes_read_), "bytes", "");
  sink.add(c, "bytes_written", static_cast<double>(bytes_written_), "bytes", "");
  sink.add(c, "refused", static_cast<double>(refused_), "count", "requests refused while one waited for its END_REQ");
  sink.add(c, "latency_ns_total", latency_ps_sum_ / 1000.0, "ns", "summed over requests, sent to completed");
}

INDEXSIM_REGISTER(MemoryRegistry, "memory", "tlm_target", [](const config::Node& n) -> std::unique_ptr<MemoryDevice> {
  return std::make_unique<TlmRegion>(TlmRegionParams::from(n), n.path());
});

}  // namespace indexsim::model
