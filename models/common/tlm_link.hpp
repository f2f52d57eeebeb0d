// SPDX-License-Identifier: Apache-2.0
// The SystemC link between a processor and the memory it sends to: a TLM-2.0 initiator on the
// processor's side (MemoryLink, a MemoryDevice for the processor's timing core) bound to a target
// around the memory's timing core (MemoryLinkTarget). `run --engine systemc` puts one between each
// processor and its memory port; every request and every completion crosses it as a generic
// payload.
//
// The protocol, on the base protocol's phases:
//  - BEGIN_REQ forward, at the request's time (sc_time_stamp() + delay). The target answers on the
//    return path, at once: TLM_UPDATED with END_REQ when its core accepted the request, or
//    TLM_COMPLETED with TLM_INCOMPLETE_RESPONSE when the core's queue was full (the target did not
//    attempt it; the initiator tries again at next_retry(), as MemoryDevice::try_enqueue says).
//  - BEGIN_RESP backward, when the core reports the request done; the initiator answers
//    TLM_COMPLETED (no END_RESP). LinkExtension carries the requester's id and the exact done time
//    (a completion may be reported after it happened, which a delay annotation cannot say).
//  - Warming (functional, no time) is the debug transport.
// When to look at the core is the timing interface (next_event, next_retry, advance) that the
// target exports beside its socket: the replay's SystemC thread asks it, so the core is advanced at
// the times the native loop advances it and the two engines agree bit for bit.
#pragma once

#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include "models/common/memory_device.hpp"
#include "models/common/tlm_target.hpp"

namespace indexsim::model {

// When a memory core next has something to say, and the call that lets it say it.
class MemoryTimingIf : public virtual sc_core::sc_interface {
 public:
  virtual Tick next_event() const = 0;
  virtual Tick next_retry() const = 0;
  // Runs the core's events up to `now`; what completed goes back as BEGIN_RESP on the socket.
  virtual void advance(Tick now) = 0;
};

// The requester's id of a request and, in BEGIN_RESP, when it completed.
struct LinkExtension : tlm::tlm_extension<LinkExtension> {
  uint64_t id = 0;
  Tick done = 0;
  bool refused_per_source = false;  // a refused BEGIN_REQ: the core's MemoryDevice::refused_per_source()
  tlm::tlm_extension_base* clone() const override { return new LinkExtension(*this); }
  void copy_from(const tlm::tlm_extension_base& e) override { *this = static_cast<const LinkExtension&>(e); }
};

// The SystemC engine's links annotate delays in ps, SystemC's default resolution:
// std::invalid_argument naming the resolution otherwise.
void require_ps_resolution();
// Makes a fresh SystemC context current (SystemC elaborates once per context, and a process may run
// several simulations). The one it replaces is kept reachable, never destroyed: modules of earlier
// runs may still refer to it.
void fresh_sc_context();

class MemoryLinkTarget : public sc_core::sc_module, public MemoryTimingIf {
 public:
  tlm_utils::simple_target_socket<MemoryLinkTarget> socket;
  sc_core::sc_export<MemoryTimingIf> timing;

  // Around a core someone else owns (the memory system, or one processor's port of it).
  MemoryLinkTarget(sc_core::sc_module_name name, MemoryDevice& core);

  Tick next_event() const override { return core_.next_event(); }
  Tick next_retry() const override { return core_.next_retry(); }
  void advance(Tick now) override;
  uint64_t accepted() const { return accepted_; }
  uint64_t refused() const { return refused_; }

 private:
  tlm::tlm_sync_enum nb_transport_fw(tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase, sc_core::sc_time& delay);
  unsigned transport_dbg(tlm::tlm_generic_payload& gp);

  MemoryDevice& core_;
  // By the requester's id; a requester may have several requests of one id in flight (a coarse
  // request cut into lines): any of them answers a completion of that id.
  std::unordered_multimap<uint64_t, tlm::tlm_generic_payload*> in_core_;
  std::vector<MemCompletion> done_;
  uint64_t accepted_ = 0, refused_ = 0;
};

// The processor's side: a MemoryDevice whose requests leave through `socket`. What a processor asks
// of the memory besides its timing (peak, capacity, statistics) is read from `info`, the device the
// target wraps: it does not change during a run.
class MemoryLink : public sc_core::sc_module, public MemoryDevice {
 public:
  tlm_utils::simple_initiator_socket<MemoryLink> socket;
  sc_core::sc_port<MemoryTimingIf> timing;

  MemoryLink(sc_core::sc_module_name name, const MemoryDevice& info);
  ~MemoryLink() override;
  // Binds socket and timing interface to `target`.
  void bind(MemoryLinkTarget& target);

  bool try_enqueue(const MemRequest& req, Tick now) override;
  Tick next_event() const override { return timing->next_event(); }
  Tick next_retry() const override { return timing->next_retry(); }
  bool refused_per_source() const override { return refused_per_source_; }
  void advance(Tick now, std::vector<MemCompletion>& done) override;
  void warm(const MemRequest& req) override;
  uint64_t warm_reach_bytes() const override { return info_.warm_reach_bytes(); }
  double peak_bandwidth_GBps() const override { return info_.peak_bandwidth_GBps(); }
  Tick idle_read_latency_ps() const override { return info_.idle_read_latency_ps(); }
  uint64_t capacity_bytes() const override { return info_.capacity_bytes(); }
  Tick last_write_issued_ps() const override { return info_.last_write_issued_ps(); }
  void report(StatSink& sink, const std::string& component) const override { info_.report(sink, component); }

 private:
  struct Payload;
  tlm::tlm_sync_enum nb_transport_bw(tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase, sc_core::sc_time& delay);
  Payload& take(const MemRequest& req);

  const MemoryDevice& info_;
  PayloadPool<Payload> pool_;
  std::vector<MemCompletion>* collect_ = nullptr;  // during advance(): where BEGIN_RESP's completions go
  bool refused_per_source_ = false;  // what the target said of the latest refusal
};

// A unit reached through a TLM-2.0 link: `core` behind a MemoryLinkTarget, and a MemoryLink in
// front for the unit above it (the SystemC engine puts one between each unit of the memory system and
// its parent). What the parent reads besides timing (peak, capacity, statistics) is the core's.
// `name` names the two modules (unique in the SystemC context: a suffix is added where needed); made
// during elaboration.
std::unique_ptr<MemoryDevice> linked(std::unique_ptr<MemoryDevice> core, const std::string& name);
// The same around a core someone else owns (a processor's memory port).
std::unique_ptr<MemoryDevice> linked(MemoryDevice& core, const std::string& name);

}  // namespace indexsim::model
