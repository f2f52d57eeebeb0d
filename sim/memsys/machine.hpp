// SPDX-License-Identifier: Apache-2.0
// The processors of a hardware file (`system.processors`), built over one memory system.
//
// Each slot's processor is built from its section through the processor registry. With several,
// each gets its own port of the memory (model::MemoryPorts), and slot i's requests take the
// interconnect ports after the units of slots 0..i-1: the source offsets are derived here, not
// written in the files. A slot's `local_region` gives its processor that region's address window.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "models/common/memory_ports.hpp"
#include "models/common/processor.hpp"
#include "sim/memsys/memory_system.hpp"

namespace indexsim::sim {

struct Machine {
  std::unique_ptr<model::MemoryPorts> ports;                // only with more than one processor
  std::vector<std::unique_ptr<model::Processor>> processors;  // in slot order
  // Slot 0: runs every kernel that no technique or placement moves.
  model::Processor& main() const { return *processors.front(); }
};

// ConfigError naming `system.processors` when there is none; the interconnect's requester ports
// are checked against the processors' units. `link`, where given, stands between each slot and its
// memory port (the SystemC engine's TLM-2.0 links): the processor is built over what it returns.
using PortLink = std::function<model::MemoryDevice&(uint32_t slot, model::MemoryDevice& port)>;
Machine build_machine(const config::Node& hw_root, BuiltTarget& memory, const PortLink& link = {});

}  // namespace indexsim::sim
