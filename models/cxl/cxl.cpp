// SPDX-License-Identifier: Apache-2.0
#include "models/cxl/cxl.hpp"

#include <algorithm>
#include <cmath>

namespace indexsim::model {

using config::Rule;

CxlParams CxlParams::from(const config::Node& n) {
  CxlParams p;
  p.lanes = n.req<uint32_t>("lanes", Rule::power_of_two());
  p.lane_rate_GTps = n.req<double>("lane_rate_GTps", Rule::positive());
  p.encoding_efficiency = n.req<double>("encoding_efficiency", Rule::range(0.5, 1.0));
  p.flit_B = n.req<uint32_t>("flit_B", Rule::positive());
  p.slots_per_flit = n.req<uint32_t>("slots_per_flit", Rule::positive());
  p.slot_B = n.req<uint32_t>("slot_B", Rule::positive());
  p.header_slots_per_line = n.req<double>("header_slots_per_line", Rule::non_negative());
  p.line_B = n.req<uint32_t>("line_B", Rule::power_of_two());
  p.port_latency_ns = n.req<double>("port_latency_ns", Rule::non_negative());
  p.controller_latency_ns = n.req<double>("controller_latency_ns", Rule::non_negative());
  p.queue_depth = n.req<uint32_t>("queue_depth", Rule::positive());
  if (uint64_t{p.slots_per_flit} * p.slot_B > p.flit_B)
    n.fail("slots_per_flit", std::to_string(p.slots_per_flit), "slots_per_flit x slot_B must fit in flit_B");
  if (p.line_B % p.slot_B != 0) n.fail("line_B", std::to_string(p.line_B), "must be a multiple of slot_B");
  return p;
}

namespace {
std::unique_ptr<MemoryDevice> build(const config::Node& n) {
  auto p = CxlParams::from(n);
  return std::make_unique<CxlExpander>(p, make_memory_device(n.child("dram")));
}
}  // namespace

CxlExpander::CxlExpander(const CxlParams& p, std::unique_ptr<MemoryDevice> dram) : p_(p) {
  dram_.reset(std::move(dram));
}

Tick CxlExpander::wire_ps(double wire_bytes) const {
  return static_cast<Tick>(std::ceil(wire_bytes / p_.raw_GBps() * 1000.0));  // GB/s = bytes per ns
}

double CxlExpander::data_wire_B(uint32_t bytes) const {
  const double lines = std::ceil(static_cast<double>(bytes) / p_.line_B);
  return lines * (static_cast<double>(p_.line_B) / p_.slot_B + p_.header_slots_per_line) * p_.slot_wire_B();
}

double CxlExpander::header_wire_B(uint32_t bytes) const {
  const double lines = std::ceil(static_cast<double>(bytes) / p_.line_B);
  return lines * p_.header_slots_per_line * p_.slot_wire_B();
}

bool CxlExpander::try_enqueue(const MemRequest& req, Tick now) {
  if (in_flight_ >= p_.queue_depth) {
    ++refused_;
    return false;
  }
  const double wire = req.write ? data_wire_B(req.bytes) : header_wire_B(req.bytes);
  const Tick start = std::max(now, m2s_free_);
  m2s_free_ = start + wire_ps(wire);
  m2s_wire_B_ += wire;
  uint32_t slot;
  if (free_slots_.empty()) {
    slot = static_cast<uint32_t>(flights_.size());
    flights_.emplace_back();
  } else {
    slot = free_slots_.back();
    free_slots_.pop_back();
  }
  flights_[slot] = {req.id, req.bytes, req.write};
  ++in_flight_;
  MemRequest inner = req;
  inner.id = slot;
  events_.push(m2s_free_ + ns_to_ps(p_.port_latency_ns + p_.controller_latency_ns), {true, inner});
  ++(req.write ? writes_ : reads_);
  (req.write ? data_written_B_ : data_read_B_) += req.bytes;
  return true;
}

void CxlExpander::advance(Tick now, std::vector<MemCompletion>& done) {
  run_until(
      now, dram_, events_, buf_,
      [&](const std::vector<MemCompletion>& batch) {
        for (const auto& c : batch) {
          const Flight& f = flights_[c.id];
          const double wire = f.write ? header_wire_B(f.bytes) : data_wire_B(f.bytes);
          const Tick start = std::max(c.done, s2m_free_);
          s2m_free_ = start + wire_ps(wire);
          s2m_wire_B_ += wire;
          MemRequest r;
          r.id = c.id;
          events_.push(s2m_free_ + ns_to_ps(p_.port_latency_ns), {false, r});
        }
      },
      [&](Tick te) {
        const Event e = events_.pop();
        if (e.to_dram) {
          dram_.send(e.req, te);
        } else {
          done.push_back({flights_[e.req.id].id, te});
          free_slots_.push_back(static_cast<uint32_t>(e.req.id));
          --in_flight_;
        }
      });
}

double CxlExpander::peak_bandwidth_GBps() const {
  return std::min(p_.raw_GBps() * p_.flit_efficiency(), dram_.get()->peak_bandwidth_GBps());
}

Tick CxlExpander::idle_read_latency_ps() const {
  return wire_ps(header_wire_B(p_.line_B)) + ns_to_ps(2 * p_.port_latency_ns + p_.controller_latency_ns) +
         dram_.get()->idle_read_latency_ps() + wire_ps(data_wire_B(p_.line_B));
}

void CxlExpander::report(StatSink& sink, const std::string& c) const {
  sink.add(c, "reads", static_cast<double>(reads_), "count", "");
  sink.add(c, "writes", static_cast<double>(writes_), "count", "");
  sink.add(c, "bytes_read", static_cast<double>(data_read_B_), "bytes", "bytes of read requests accepted");
  sink.add(c, "bytes_written", static_cast<double>(data_written_B_), "bytes", "bytes of write requests accepted");
  sink.add(c, "link_raw_GBps", p_.raw_GBps(), "GB/s", "raw link rate per direction");
  sink.add(c, "flit_efficiency", p_.flit_efficiency(), "fraction", "data bytes / wire bytes for a full line");
  sink.add(c, "m2s_wire_bytes", m2s_wire_B_, "bytes", "host to device, framing included");
  sink.add(c, "s2m_wire_bytes", s2m_wire_B_, "bytes", "device to host, framing included");
  sink.add(c, "refused", static_cast<double>(refused_), "count", "requests refused: controller queue full");
  dram_.get()->report(sink, c + ".dram");
}

INDEXSIM_REGISTER(MemoryRegistry, "memory", "cxl_type3", build);

}  // namespace indexsim::model
