// SPDX-License-Identifier: Apache-2.0
// The SystemC face of the DRAM core: a TLM-2.0 target whose b_transport enqueues the payload into
// the core at the initiator's time and waits until the core reports it complete. One SC_METHOD is
// woken at the core's next_event() and nothing else runs: no clock, no idle cycles. Several
// initiator threads may be inside b_transport at once; that is how the queues fill.
#pragma once

#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_target_socket.h>

#include "models/common/memory_device.hpp"

namespace indexsim::model::dram {

class DramSc : public sc_core::sc_module {
 public:
  tlm_utils::simple_target_socket<DramSc> socket;

  DramSc(sc_core::sc_module_name name, std::unique_ptr<MemoryDevice> core);
  MemoryDevice& core() { return *core_; }
  uint64_t wakeups() const { return wakeups_; }

 private:
  struct Waiter {
    sc_core::sc_event done;
    Tick at = 0;
    bool finished = false;
  };
  void b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
  void on_wake();
  void rearm(Tick now);
  static Tick now_ps();

  std::unique_ptr<MemoryDevice> core_;
  sc_core::sc_event wake_, space_;
  std::unordered_map<uint64_t, Waiter*> waiting_;
  std::vector<MemCompletion> done_;
  uint64_t next_id_ = 0;
  uint64_t wakeups_ = 0;
  uint32_t refused_ = 0;   // transactions waiting for queue space: wake at each DRAM command then
};

}  // namespace indexsim::model::dram
