// SPDX-License-Identifier: Apache-2.0
// One memory device shared by several requesters (the SMs and an NPU): each gets a port, a
// MemoryDevice whose completions are its own. Whichever port advances the shared device sorts what
// completed into the ports' buffers; a port reports its buffered completions at its next advance.
//
// A requester that remembers the shared device's next event must be told when another port moved
// it (Processor::memory_moved): the replay does so after every call on another processor.
#pragma once

#include <memory>
#include <vector>

#include "models/common/memory_device.hpp"

namespace indexsim::model {

class MemoryPorts {
 public:
  explicit MemoryPorts(MemoryDevice& shared);
  ~MemoryPorts();
  MemoryPorts(const MemoryPorts&) = delete;
  MemoryPorts& operator=(const MemoryPorts&) = delete;
  // Port i (created on first use); it lives as long as this object. Its requests reach the shared
  // device with `source_base` added to their source: requesters numbered from 0 on each port take
  // distinct interconnect ports.
  MemoryDevice& port(uint32_t i, uint32_t source_base = 0);

 private:
  class Port;
  struct Flight {
    uint32_t port;
    uint64_t id;  // the requester's
  };
  void advance_shared(Tick now);

  MemoryDevice& mem_;
  std::vector<std::unique_ptr<Port>> ports_;
  std::vector<Flight> flights_;    // the shared device sees a request's index here as its id
  std::vector<uint64_t> free_;
  std::vector<MemCompletion> done_;
};

}  // namespace indexsim::model
