// SPDX-License-Identifier: Apache-2.0
#include "models/common/tlm_link.hpp"

#include <stdexcept>

#include "models/common/tlm_target.hpp"

namespace indexsim::model {

void require_ps_resolution() {
  if (sc_core::sc_get_time_resolution() != sc_core::sc_time(1, sc_core::SC_PS))
    throw std::invalid_argument("the SystemC time resolution is " + sc_core::sc_get_time_resolution().to_string() +
                                "; IndexSim's units count picoseconds and need SystemC's default, 1 ps");
}

void fresh_sc_context() {
  static auto* replaced = new std::vector<sc_core::sc_simcontext*>();  // never freed, as SystemC's own
  replaced->push_back(sc_core::sc_curr_simcontext);
  sc_core::sc_curr_simcontext = new sc_core::sc_simcontext();
  sc_core::sc_default_global_context = sc_core::sc_curr_simcontext;
}

MemoryLinkTarget::MemoryLinkTarget(sc_core::sc_module_name name, MemoryDevice& core)
    : sc_core::sc_module(name), socket("socket"), timing("timing"), core_(core) {
  socket.register_nb_transport_fw(this, &MemoryLinkTarget::nb_transport_fw);
  socket.register_transport_dbg(this, &MemoryLinkTarget::transport_dbg);
  timing.bind(*this);
}

tlm::tlm_sync_enum MemoryLinkTarget::nb_transport_fw(tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase,
                                                     sc_core::sc_time& delay) {
  if (phase != tlm::BEGIN_REQ) {
    SC_REPORT_ERROR("MemoryLinkTarget", "nb_transport_fw: only BEGIN_REQ comes forward (BEGIN_RESP is answered TLM_COMPLETED)");
    return tlm::TLM_COMPLETED;
  }
  const auto* link = gp.get_extension<LinkExtension>();
  if (!link) {
    SC_REPORT_ERROR("MemoryLinkTarget", "a request without LinkExtension (the requester's id)");
    return tlm::TLM_COMPLETED;
  }
  const Tick at = sc_now_ps() + static_cast<Tick>(delay.value());
  if (!core_.try_enqueue(request_of(gp, link->id), at)) {
    ++refused_;
    gp.get_extension<LinkExtension>()->refused_per_source = core_.refused_per_source();
    gp.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    return tlm::TLM_COMPLETED;
  }
  ++accepted_;
  in_core_.emplace(link->id, &gp);
  phase = tlm::END_REQ;
  return tlm::TLM_UPDATED;
}

void MemoryLinkTarget::advance(Tick now) {
  done_.clear();
  core_.advance(now, done_);
  for (const MemCompletion& c : done_) {
    auto it = in_core_.find(c.id);
    if (it == in_core_.end()) throw std::logic_error("memory link: a completion for a request the core never accepted");
    tlm::tlm_generic_payload& gp = *it->second;
    in_core_.erase(it);
    gp.get_extension<LinkExtension>()->done = c.done;
    gp.set_response_status(tlm::TLM_OK_RESPONSE);
    tlm::tlm_phase phase = tlm::BEGIN_RESP;
    sc_core::sc_time delay = sc_core::sc_time::from_value(c.done > now ? c.done - now : 0);
    socket->nb_transport_bw(gp, phase, delay);  // TLM_COMPLETED: nothing follows
  }
}

unsigned MemoryLinkTarget::transport_dbg(tlm::tlm_generic_payload& gp) {
  core_.warm(request_of(gp, 0));
  return gp.get_data_length();
}

// A payload with its extensions, reused request after request.
struct MemoryLink::Payload : tlm::tlm_generic_payload {
  RequesterExtension who;
  LinkExtension link;
  Payload() {
    set_extension(&who);
    set_extension(&link);
  }
  ~Payload() override {
    clear_extension<RequesterExtension>();  // members, not the payload's to free
    clear_extension<LinkExtension>();
  }
};

MemoryLink::MemoryLink(sc_core::sc_module_name name, const MemoryDevice& info)
    : sc_core::sc_module(name), socket("socket"), timing("timing"), info_(info) {
  socket.register_nb_transport_bw(this, &MemoryLink::nb_transport_bw);
}

MemoryLink::~MemoryLink() = default;

void MemoryLink::bind(MemoryLinkTarget& target) {
  socket.bind(target.socket);
  timing.bind(target.timing);
}

MemoryLink::Payload& MemoryLink::take(const MemRequest& req) {
  Payload& p = pool_.take(req);
  p.link.id = req.id;
  p.link.done = 0;
  p.link.refused_per_source = false;
  return p;
}

bool MemoryLink::try_enqueue(const MemRequest& req, Tick now) {
  Payload& p = take(req);
  tlm::tlm_phase phase = tlm::BEGIN_REQ;
  const Tick sc = sc_now_ps();
  sc_core::sc_time delay = sc_core::sc_time::from_value(now > sc ? now - sc : 0);
  const tlm::tlm_sync_enum r = socket->nb_transport_fw(p, phase, delay);
  if (r == tlm::TLM_UPDATED && phase == tlm::END_REQ) return true;  // BEGIN_RESP follows
  pool_.give_back(p);
  refused_per_source_ = p.link.refused_per_source;
  if (r == tlm::TLM_COMPLETED && p.get_response_status() == tlm::TLM_INCOMPLETE_RESPONSE) return false;
  throw std::logic_error("memory link: the target answered BEGIN_REQ outside the link's protocol");
}

void MemoryLink::advance(Tick now, std::vector<MemCompletion>& done) {
  collect_ = &done;
  timing->advance(now);
  collect_ = nullptr;
}

tlm::tlm_sync_enum MemoryLink::nb_transport_bw(tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase, sc_core::sc_time&) {
  if (phase != tlm::BEGIN_RESP || !collect_) {
    SC_REPORT_ERROR("MemoryLink", "nb_transport_bw: only BEGIN_RESP, and only while the link advances its target");
    return tlm::TLM_COMPLETED;
  }
  const LinkExtension& link = *gp.get_extension<LinkExtension>();
  collect_->push_back({link.id, link.done});
  pool_.give_back(static_cast<Payload&>(gp));  // every payload on this socket is one of ours
  return tlm::TLM_COMPLETED;
}

void MemoryLink::warm(const MemRequest& req) {
  Payload& p = take(req);
  socket->transport_dbg(p);
  pool_.give_back(p);
}

namespace {

// Owns the core and both modules; the parent calls the link.
class Linked : public MemoryDevice {
 public:
  Linked(std::unique_ptr<MemoryDevice> owned, MemoryDevice& core, const std::string& name)
      : owned_(std::move(owned)), core_(&core) {
    const std::string base = sc_core::sc_gen_unique_name(name.c_str(), true);
    target_ = std::make_unique<MemoryLinkTarget>((base + "_target").c_str(), *core_);
    link_ = std::make_unique<MemoryLink>((base + "_link").c_str(), *core_);
    link_->bind(*target_);
  }
  bool try_enqueue(const MemRequest& req, Tick now) override { return link_->try_enqueue(req, now); }
  bool refused_per_source() const override { return link_->refused_per_source(); }
  uint64_t refused_queue() const override { return core_->refused_queue(); }  // the refusal just made
  bool may_take(uint64_t key) const override { return core_->may_take(key); }  // the core is advanced to now
  uint64_t slots_freed() const override { return core_->slots_freed(); }
  Tick next_event() const override { return link_->next_event(); }
  Tick next_retry() const override { return link_->next_retry(); }
  void advance(Tick now, std::vector<MemCompletion>& done) override { link_->advance(now, done); }
  void warm(const MemRequest& req) override { link_->warm(req); }
  uint64_t warm_reach_bytes() const override { return core_->warm_reach_bytes(); }
  double peak_bandwidth_GBps() const override { return core_->peak_bandwidth_GBps(); }
  Tick idle_read_latency_ps() const override { return core_->idle_read_latency_ps(); }
  uint64_t capacity_bytes() const override { return core_->capacity_bytes(); }
  Tick last_write_issued_ps() const override { return core_->last_write_issued_ps(); }
  void report(StatSink& sink, const std::string& component) const override { core_->report(sink, component); }

 private:
  std::unique_ptr<MemoryDevice> owned_;  // null when someone else owns the core
  MemoryDevice* core_;
  std::unique_ptr<MemoryLinkTarget> target_;
  std::unique_ptr<MemoryLink> link_;
};

}  // namespace

std::unique_ptr<MemoryDevice> linked(std::unique_ptr<MemoryDevice> core, const std::string& name) {
  MemoryDevice& c = *core;
  return std::make_unique<Linked>(std::move(core), c, name);
}

std::unique_ptr<MemoryDevice> linked(MemoryDevice& core, const std::string& name) {
  return std::make_unique<Linked>(nullptr, core, name);
}

}  // namespace indexsim::model
