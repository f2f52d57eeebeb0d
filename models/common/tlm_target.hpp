// SPDX-License-Identifier: Apache-2.0
// The thin SystemC adapter shared by every memory unit (L2, NoC, CXL, SRAM, HBF, and the DRAM
// core): a loosely-timed TLM-2.0 target around a MemoryDevice timing core. b_transport enqueues
// the payload at the initiator's local time (sc_time_stamp() + delay), runs the core's events
// until that request completes, and adds the core's latency to `delay`, as LT targets do.
// The core keeps all timing; the adapter owns none.
#pragma once

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_target_socket.h>

#include "models/common/memory_device.hpp"

namespace indexsim::model {

class MemoryTarget : public sc_core::sc_module {
 public:
  tlm_utils::simple_target_socket<MemoryTarget> socket;

  MemoryTarget(sc_core::sc_module_name name, MemoryDevice& core);
  uint64_t transactions() const { return next_id_; }

 private:
  void b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);

  MemoryDevice& core_;
  uint64_t next_id_ = 0;
  std::vector<MemCompletion> done_;
};

}  // namespace indexsim::model
