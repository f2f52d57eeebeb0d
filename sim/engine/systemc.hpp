// SPDX-License-Identifier: Apache-2.0
// The SystemC engine (`run --engine systemc`, RunSpec::engine): the same replay, elaborated as
// SystemC modules and run under sc_start.
//
// Each run gets a fresh SystemC context (SystemC elaborates once per context). In it:
//  - each processor's memory port is a TLM-2.0 link (models/common/tlm_link.hpp): an initiator on
//    the processor's side, a target around the memory system's port; every request and completion
//    crosses it as a generic payload;
//  - regions with `impl: tlm_target` (models/external/tlm_region.hpp) get an initiator socket that
//    the caller binds to its own target (RunSpec::bind);
//  - the replay runs in one SC_THREAD that waits, in SystemC time, until the earliest next event of
//    the engine and the processors (which include their memory's), or until an external target
//    answers. Nothing ticks: the thread wakes once per event time, as the native loop iterates.
// With only the project's own units, the calls reach the timing cores in the native loop's order,
// and results equal the native engine's bit for bit (tests/cpp/test_systemc_engine.cpp).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <tlm>

#include "models/common/memory_device.hpp"

namespace indexsim::model {
class TlmRegion;
}  // namespace indexsim::model

namespace indexsim::sim {

// What the caller binds before the run starts (RunSpec::bind is called with it during
// elaboration; modules the caller makes then belong to the run's context).
class ScBindings {
 public:
  // The initiator socket of the hardware's region `name` (its section path, e.g. memory.sram, or
  // its region name, e.g. sram): std::invalid_argument naming the external regions if none matches.
  tlm::tlm_initiator_socket<>& region(const std::string& name) const;

 private:
  friend class ScRun;
  std::vector<std::pair<std::string, model::TlmRegion*>> regions_;  // region name, device
};

class ScRun {
 public:
  // Makes a fresh SystemC context (model::fresh_sc_context), current from now on;
  // std::invalid_argument if its time resolution is not 1 ps.
  ScRun();
  ~ScRun();
  ScRun(const ScRun&) = delete;
  ScRun& operator=(const ScRun&) = delete;

  // Elaboration: a link between processor slot `slot` and its memory port; the processor is built
  // over the returned device.
  model::MemoryDevice& link(uint32_t slot, model::MemoryDevice& port);
  // An external region (named as in the region table): its socket is made now, and its answers
  // wake the replay.
  void add_region(const std::string& region, model::TlmRegion& dev);
  ScBindings& bindings() { return bindings_; }
  // Every external region has a target bound: std::invalid_argument naming the first that has not.
  void check_bound() const;

  // Runs body(wait_until) in the replay's SC_THREAD under sc_start, and rethrows what it threw.
  // wait_until is ReplayOptions::wait_until. std::runtime_error if the thread was left waiting
  // with nothing scheduled (a deadlock: an external target that never answered).
  using WaitUntil = std::function<model::Tick(model::Tick)>;
  void run(const std::function<void(const WaitUntil&)>& body);

 private:
  class Driver;
  std::vector<std::unique_ptr<model::MemoryDevice>> links_;  // each processor's, to its memory port
  ScBindings bindings_;
  std::unique_ptr<Driver> driver_;
};

}  // namespace indexsim::sim
