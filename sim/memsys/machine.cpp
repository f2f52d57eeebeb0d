// SPDX-License-Identifier: Apache-2.0
#include "sim/memsys/machine.hpp"

namespace indexsim::sim {

namespace {
// The interconnect has one port per requester, a unit of a processor (`units[i]` in slot i): a count
// that disagrees folds requesters onto shared ports without a word. ConfigError naming the port
// count and the processors.
void check_requester_ports(const config::Node& root, const SystemLayout& layout, const std::vector<uint32_t>& units) {
  const config::Node noc = root.child(layout.interconnect);
  uint64_t total = 0;
  std::string parts;
  for (size_t i = 0; i < units.size(); ++i) {  // one per slot
    total += units[i];
    parts += (parts.empty() ? "" : " + ") + layout.processors[i].section + " " + std::to_string(units[i]);
  }
  const auto ports = noc.req<uint32_t>("sm_ports", config::Rule::positive());
  if (ports != total)
    noc.fail("sm_ports", std::to_string(ports),
             "must equal the processors' units, " + std::to_string(total) + " (" + parts + "): one port per unit");
}

}  // namespace

Machine build_machine(const config::Node& root, BuiltTarget& memory, const PortLink& link) {
  const SystemLayout layout = read_layout(root);
  if (layout.processors.empty())
    root.child("system").fail("processors", "", "needs at least one processor to run kernels (a memory preset runs `bench memory` only)");
  Machine m;
  std::vector<std::string> regions;
  for (const auto& r : read_regions(root)) regions.push_back(r.name);
  if (layout.processors.size() > 1) m.ports = std::make_unique<model::MemoryPorts>(memory);
  std::vector<uint32_t> units;
  uint32_t first_source = 0;  // the units of the slots before this one
  const auto slots = root.child("system").children("processors");
  for (size_t i = 0; i < layout.processors.size(); ++i) {
    const ProcessorSlot& slot = layout.processors[i];
    model::MemoryDevice& port = m.ports ? m.ports->port(uint32_t(i), first_source) : static_cast<model::MemoryDevice&>(memory);
    auto proc = model::make_processor(root.child(slot.section), link ? link(uint32_t(i), port) : port);
    if (!slot.local_region.empty()) {
      slots[i].req<std::string>("local_region", config::Rule::choice(regions));
      const model::MemoryDevice* local = memory.part(slot.local_region);
      proc->set_local_memory(region_base(root, slot.local_region), local ? local->capacity_bytes() : 0);
    }
    units.push_back(proc->units());
    first_source += proc->units();
    m.processors.push_back(std::move(proc));
  }
  check_requester_ports(root, layout, units);
  return m;
}

}  // namespace indexsim::sim
