// SPDX-License-Identifier: Apache-2.0
#include "models/dram/dram_sc.hpp"

#include <cmath>

namespace indexsim::model::dram {

DramSc::DramSc(sc_core::sc_module_name name, std::unique_ptr<MemoryDevice> core)
    : sc_core::sc_module(name), socket("socket"), core_(std::move(core)) {
  socket.register_b_transport(this, &DramSc::b_transport);
  SC_HAS_PROCESS(DramSc);
  SC_METHOD(on_wake);
  sensitive << wake_;
  dont_initialize();
}

Tick DramSc::now_ps() {
  return static_cast<Tick>(std::llround(sc_core::sc_time_stamp().to_seconds() * 1e12));
}

void DramSc::rearm(Tick now) {
  const Tick t = refused_ ? core_->next_retry() : core_->next_event();
  if (t == kNever) return;
  // A pending later notification is replaced by an earlier one (IEEE 1666 notify rules).
  wake_.notify(sc_core::sc_time(static_cast<double>(t > now ? t - now : 0), sc_core::SC_PS));
}

void DramSc::b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
  // Synchronise first, so the core sees requests in time order.
  if (delay != sc_core::SC_ZERO_TIME) {
    sc_core::wait(delay);
    delay = sc_core::SC_ZERO_TIME;
  }
  MemRequest req;
  req.id = next_id_++;
  req.addr = gp.get_address();
  req.bytes = gp.get_data_length();
  req.write = gp.is_write();
  while (!core_->try_enqueue(req, now_ps())) {
    ++refused_;
    rearm(now_ps());
    sc_core::wait(space_);
    --refused_;
  }
  Waiter w;
  waiting_[req.id] = &w;
  rearm(now_ps());
  while (!w.finished) sc_core::wait(w.done);
  gp.set_response_status(tlm::TLM_OK_RESPONSE);
}

void DramSc::on_wake() {
  ++wakeups_;
  const Tick now = now_ps();
  done_.clear();
  core_->advance(now, done_);
  for (const MemCompletion& c : done_) {
    auto it = waiting_.find(c.id);
    if (it == waiting_.end()) continue;
    it->second->finished = true;
    it->second->at = c.done;
    it->second->done.notify();
    waiting_.erase(it);
  }
  // Commands issued free queue entries even before data returns: let refused requests retry.
  space_.notify();
  rearm(now);
}

}  // namespace indexsim::model::dram
