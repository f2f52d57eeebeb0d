// SPDX-License-Identifier: Apache-2.0
#include "models/dram/dram_sc.hpp"

#include <cmath>

#include "models/common/tlm_target.hpp"

namespace indexsim::model::dram {

DramSc::DramSc(sc_core::sc_module_name name, std::unique_ptr<MemoryDevice> core) : DramSc(name, *core) {
  owned_ = std::move(core);
}

DramSc::DramSc(sc_core::sc_module_name name, MemoryDevice& core)
    : sc_core::sc_module(name), socket("socket"), core_(&core), peq_(this, &DramSc::on_begin_req) {
  socket.register_b_transport(this, &DramSc::b_transport);
  socket.register_nb_transport_fw(this, &DramSc::nb_transport_fw);
  SC_HAS_PROCESS(DramSc);
  SC_METHOD(on_wake);
  sensitive << wake_;
  dont_initialize();
}

void DramSc::rearm(Tick now) {
  const Tick t = refused_ ? core_->next_retry() : core_->next_event();
  if (t == kNever) return;
  // A pending later notification is replaced by an earlier one (IEEE 1666 notify rules).
  wake_.notify(sc_core::sc_time(static_cast<double>(t > now ? t - now : 0), sc_core::SC_PS));
}

tlm::tlm_sync_enum DramSc::nb_transport_fw(tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase, sc_core::sc_time& delay) {
  if (phase == tlm::BEGIN_REQ) {
    peq_.notify(gp, phase, delay);  // taken at the initiator's time, in time order
    return tlm::TLM_ACCEPTED;
  }
  if (phase == tlm::END_RESP) return tlm::TLM_COMPLETED;
  SC_REPORT_ERROR("DramSc", "nb_transport_fw: only BEGIN_REQ and END_RESP come forward");
  return tlm::TLM_COMPLETED;
}

bool DramSc::try_accept(tlm::tlm_generic_payload& gp) {
  const uint64_t id = next_id_;
  if (!core_->try_enqueue(request_of(gp, id), sc_now_ps())) return false;
  ++next_id_;
  at_[id] = &gp;
  tlm::tlm_phase phase = tlm::END_REQ;
  sc_core::sc_time zero = sc_core::SC_ZERO_TIME;
  socket->nb_transport_bw(gp, phase, zero);
  return true;
}

void DramSc::on_begin_req(tlm::tlm_generic_payload& gp, const tlm::tlm_phase&) {
  // Behind requests already refused, a new one waits its turn: arrival order is kept.
  if (!at_refused_.empty() || !try_accept(gp)) {
    at_refused_.push_back(&gp);
    ++refused_;
    ++delayed_end_req_;
  }
  rearm(sc_now_ps());
}

void DramSc::b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
  // Synchronise first, so the core sees requests in time order.
  if (delay != sc_core::SC_ZERO_TIME) {
    sc_core::wait(delay);
    delay = sc_core::SC_ZERO_TIME;
  }
  const MemRequest req = request_of(gp, next_id_++);
  while (!core_->try_enqueue(req, sc_now_ps())) {
    ++refused_;
    rearm(sc_now_ps());
    sc_core::wait(space_);
    --refused_;
  }
  Waiter w;
  waiting_[req.id] = &w;
  rearm(sc_now_ps());
  while (!w.finished) sc_core::wait(w.done);
  gp.set_response_status(tlm::TLM_OK_RESPONSE);
}

void DramSc::on_wake() {
  ++wakeups_;
  const Tick now = sc_now_ps();
  done_.clear();
  core_->advance(now, done_);
  for (const MemCompletion& c : done_) {
    if (auto at = at_.find(c.id); at != at_.end()) {
      tlm::tlm_generic_payload& gp = *at->second;
      at_.erase(at);
      gp.set_response_status(tlm::TLM_OK_RESPONSE);
      tlm::tlm_phase phase = tlm::BEGIN_RESP;
      sc_core::sc_time zero = sc_core::SC_ZERO_TIME;
      socket->nb_transport_bw(gp, phase, zero);  // END_RESP, or TLM_COMPLETED, ends it: nothing follows here
      continue;
    }
    auto it = waiting_.find(c.id);
    if (it == waiting_.end()) continue;
    it->second->finished = true;
    it->second->at = c.done;
    it->second->done.notify();
    waiting_.erase(it);
  }
  // Commands issued free queue entries even before data returns: let refused requests retry, the
  // approximately-timed ones in arrival order.
  while (!at_refused_.empty() && try_accept(*at_refused_.front())) {
    at_refused_.pop_front();
    --refused_;
  }
  space_.notify();
  rearm(now);
}

}  // namespace indexsim::model::dram
