// SPDX-License-Identifier: Apache-2.0
#include "sim/memsys/machine.hpp"

namespace indexsim::sim {

Machine build_machine(const config::Node& root, BuiltTarget& memory) {
  const SystemLayout layout = read_layout(root);
  if (layout.processors.empty())
    root.child("system").fail("processors", "", "needs at least one processor to run kernels (a memory preset runs `bench memory` only)");
  Machine m;
  std::vector<std::string> regions;
  for (const auto& r : read_regions(root)) regions.push_back(r.name);
  if (layout.processors.size() > 1) m.ports = std::make_unique<model::MemoryPorts>(memory);
  std::vector<uint32_t> units;
  uint32_t first_source = 0;
  const auto slots = root.child("system").children("processors");
  for (size_t i = 0; i < layout.processors.size(); ++i) {
    const ProcessorSlot& slot = layout.processors[i];
    model::MemoryDevice& port = m.ports ? m.ports->port(uint32_t(i), first_source) : static_cast<model::MemoryDevice&>(memory);
    auto proc = model::make_processor(root.child(slot.section), port);
    if (!slot.local_region.empty()) {
      slots[i].req<std::string>("local_region", config::Rule::choice(regions));
      const model::MemoryDevice* local = memory.part(slot.local_region);
      proc->set_local_memory(region_base(root, slot.local_region), local ? local->capacity_bytes() : 0);
    }
    units.push_back(proc->units());
    first_source += proc->units();
    m.processors.push_back(std::move(proc));
  }
  check_requester_ports(root, units);
  return m;
}

}  // namespace indexsim::sim
