// SPDX-License-Identifier: Apache-2.0
// The SystemC face of the DRAM core: a TLM-2.0 target in both coding styles.
//  - Loosely timed: b_transport enqueues the payload into the core at the initiator's time and
//    waits until the core reports it complete. Several initiator threads may be inside b_transport
//    at once; that is how the queues fill.
//  - Approximately timed (nb_transport_fw, the base protocol's four phases): BEGIN_REQ is answered
//    with END_REQ when the core accepts the request, at once or, while its queue is full, when it
//    frees an entry (back-pressure: the base protocol lets an initiator send its next request only
//    after END_REQ); BEGIN_RESP goes back when the core completes it, and END_RESP (or
//    TLM_COMPLETED) ends it. Refused requests are retried in arrival order.
// One SC_METHOD is woken at the core's next_event() and nothing else runs: no clock, no idle cycles.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <unordered_map>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/peq_with_cb_and_phase.h>
#include <tlm_utils/simple_target_socket.h>

#include "models/common/memory_device.hpp"

namespace indexsim::model::dram {

class DramSc : public sc_core::sc_module {
 public:
  tlm_utils::simple_target_socket<DramSc> socket;

  DramSc(sc_core::sc_module_name name, std::unique_ptr<MemoryDevice> core);
  // Around a core someone else owns (any memory unit: the adapter needs only its MemoryDevice face).
  DramSc(sc_core::sc_module_name name, MemoryDevice& core);
  MemoryDevice& core() { return *core_; }
  uint64_t wakeups() const { return wakeups_; }
  // Approximately-timed requests whose END_REQ waited for queue space.
  uint64_t delayed_end_req() const { return delayed_end_req_; }

 private:
  struct Waiter {
    sc_core::sc_event done;
    Tick at = 0;
    bool finished = false;
  };
  void b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
  tlm::tlm_sync_enum nb_transport_fw(tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase, sc_core::sc_time& delay);
  void on_begin_req(tlm::tlm_generic_payload& gp, const tlm::tlm_phase& phase);
  bool try_accept(tlm::tlm_generic_payload& gp);  // AT: into the core, and END_REQ, if it has room
  void on_wake();
  void rearm(Tick now);

  std::unique_ptr<MemoryDevice> owned_;
  MemoryDevice* core_;
  sc_core::sc_event wake_, space_;
  std::unordered_map<uint64_t, Waiter*> waiting_;
  tlm_utils::peq_with_cb_and_phase<DramSc> peq_;                  // AT requests, at their time
  std::unordered_map<uint64_t, tlm::tlm_generic_payload*> at_;    // AT requests in the core
  std::deque<tlm::tlm_generic_payload*> at_refused_;              // AT requests waiting for room
  uint64_t delayed_end_req_ = 0;
  std::vector<MemCompletion> done_;
  uint64_t next_id_ = 0;
  uint64_t wakeups_ = 0;
  uint32_t refused_ = 0;   // transactions waiting for queue space: wake at each DRAM command then
};

}  // namespace indexsim::model::dram
