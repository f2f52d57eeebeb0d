// SPDX-License-Identifier: Apache-2.0
// The thin SystemC adapter shared by every memory unit (L2, NoC, CXL, SRAM, HBF, and the DRAM
// core): a loosely-timed TLM-2.0 target around a MemoryDevice timing core. b_transport enqueues
// the payload at the initiator's local time (sc_time_stamp() + delay), runs the core's events
// until that request completes, and adds the core's latency to `delay`, as LT targets do.
// The core keeps all timing; the adapter owns none.
#pragma once

#include <memory>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_target_socket.h>

#include "models/common/memory_device.hpp"

namespace indexsim::model {

// Who sent a generic payload, for the units that care: the requesting unit (an SM; the crossbar
// routes by it), the tensor-class tag the caches count by (MemRequest::source, MemRequest::tag),
// and the kernel and stream it belongs to (for tracing; no timing core reads them). A payload
// without it comes from unit 0, untagged.
struct RequesterExtension : tlm::tlm_extension<RequesterExtension> {
  uint32_t source = 0;
  uint8_t tag = 0;
  uint32_t kernel = 0, stream = 0;
  tlm::tlm_extension_base* clone() const override { return new RequesterExtension(*this); }
  void copy_from(const tlm::tlm_extension_base& e) override { *this = static_cast<const RequesterExtension&>(e); }
};

// The SystemC kernel's time in ps, whatever its resolution.
Tick sc_now_ps();

// The MemRequest a payload stands for, with the adapter's id: address, length, direction and the
// requester's extension where it has one.
MemRequest request_of(const tlm::tlm_generic_payload& gp, uint64_t id);

// Timing-only payloads (no data), reused request after request. P is a tlm_generic_payload with a
// RequesterExtension member `who` set on itself; take() fills one in from a request (the inverse of
// request_of, less the id, which each protocol carries its own way).
template <class P>
class PayloadPool {
 public:
  P& take(const MemRequest& req) {
    if (free_.empty()) {
      pool_.push_back(std::make_unique<P>());
      free_.push_back(pool_.back().get());
    }
    P& p = *free_.back();
    free_.pop_back();
    p.set_command(req.write ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND);
    p.set_address(req.addr);
    p.set_data_ptr(nullptr);
    p.set_data_length(req.bytes);
    p.set_streaming_width(req.bytes);
    p.set_byte_enable_ptr(nullptr);
    p.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    p.who.source = req.source;
    p.who.tag = req.tag;
    return p;
  }
  void give_back(P& p) { free_.push_back(&p); }

 private:
  std::vector<std::unique_ptr<P>> pool_;
  std::vector<P*> free_;
};

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
