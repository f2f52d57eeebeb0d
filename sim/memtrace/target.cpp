// SPDX-License-Identifier: Apache-2.0
#include "sim/memtrace/target.hpp"

#include <stdexcept>

#include "sim/memsys/memory_system.hpp"

namespace indexsim::sim::memtrace {

namespace {

// Recursive, not a loop assigning Nodes: assigning a config::Node rebinds the YAML node inside the
// document (see sim/memsys/memory_system.cpp).
config::Node descend(const config::Node& at, const std::string& rest) {
  const size_t dot = rest.find('.');
  const config::Node next = at.child(rest.substr(0, dot));
  return dot == std::string::npos ? next : descend(next, rest.substr(dot + 1));
}

}  // namespace

config::Node target_section(const config::Node& root, const std::string& target) {
  const auto regions = read_regions(root);
  for (const auto& r : regions)
    if (r.name == target) return descend(root, r.section);
  const std::string cache = read_layout(root).cache;
  if (!cache.empty() && (target == cache || target == "system"))
    for (const auto& r : regions)
      if (r.cached) return descend(root, r.section);
  throw std::invalid_argument("target '" + target + "' has no memory region behind it");
}

}  // namespace indexsim::sim::memtrace
