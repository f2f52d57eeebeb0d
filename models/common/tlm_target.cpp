// SPDX-License-Identifier: Apache-2.0
#include "models/common/tlm_target.hpp"

#include <cmath>
#include <stdexcept>

namespace indexsim::model {

Tick sc_now_ps() { return static_cast<Tick>(std::llround(sc_core::sc_time_stamp().to_seconds() * 1e12)); }

MemRequest request_of(const tlm::tlm_generic_payload& gp, uint64_t id) {
  MemRequest req;
  req.id = id;
  req.addr = gp.get_address();
  req.bytes = gp.get_data_length();
  req.write = gp.is_write();
  if (const auto* who = gp.get_extension<RequesterExtension>()) {
    req.source = who->source;
    req.tag = who->tag;
  }
  return req;
}

MemoryTarget::MemoryTarget(sc_core::sc_module_name name, MemoryDevice& core)
    : sc_core::sc_module(name), socket("socket"), core_(core) {
  socket.register_b_transport(this, &MemoryTarget::b_transport);
}

void MemoryTarget::b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
  const Tick start = sc_now_ps() + static_cast<Tick>(std::llround(delay.to_seconds() * 1e12));
  const MemRequest req = request_of(gp, next_id_++);
  Tick now = start;
  // A refused request is retried as the core drains; completions of other requests cannot
  // exist, since b_transport holds one request at a time.
  while (!core_.try_enqueue(req, now)) {
    now = core_.next_retry();
    if (now == kNever) throw std::logic_error("memory core refused a request while idle");
    core_.advance(now, done_);
  }
  for (;;) {
    for (const auto& c : done_)
      if (c.id == req.id) {
        done_.clear();
        delay += sc_core::sc_time(static_cast<double>(c.done - start), sc_core::SC_PS);
        gp.set_response_status(tlm::TLM_OK_RESPONSE);
        return;
      }
    done_.clear();
    now = core_.next_event();
    if (now == kNever) throw std::logic_error("memory core went idle without completing a request");
    core_.advance(now, done_);
  }
}

}  // namespace indexsim::model
