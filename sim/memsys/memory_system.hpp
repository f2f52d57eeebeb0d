// SPDX-License-Identifier: Apache-2.0
// The memory system, composed from the hardware config: SM-side port -> NoC -> (address map) ->
// L2 -> the cached regions, and the uncached regions straight from the NoC.
//
// The address map is the region table `noc.regions` of the hardware file: each entry names a
// region, the config section that describes its device (built through the registry from that
// section's `impl`), whether the L2 caches it, and optionally the region whose device serves its
// misses (`backing`, for an SRAM used as a cache). Region i occupies the address window
// [i << kRegionWindowBits, (i + 1) << kRegionWindowBits); a device sees window-local addresses.
// Nothing here names a device: a new memory is a new section and a new table row.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "models/common/memory_device.hpp"
#include "models/common/params.hpp"

namespace indexsim::sim {

// 16 TiB per region: larger than any device modelled (an HBF stack is 0.5 TB, a GPU's HBM < 0.2 TB).
constexpr int kRegionWindowBits = 44;

struct RegionSpec {
  std::string name;     // e.g. "hbm"
  std::string section;  // e.g. "memory.hbm"
  bool cached = false;  // reached through the L2
  std::string backing;  // region whose device serves this device's misses; empty if none
  std::string tier;     // which tensors placement puts here: primary, overflow or pinned (sim/placement)
};

// The region table, in address order (entry i starts at i << kRegionWindowBits).
std::vector<RegionSpec> read_regions(const config::Node& hw_root);

// The base address of a region, for placement policies; ConfigError naming the choices if unknown.
uint64_t region_base(const config::Node& hw_root, const std::string& region);

// The names make_target accepts: every region, plus "l2" (L2 over the cached regions) and
// "system" (NoC, L2 and every region).
std::vector<std::string> target_names(const config::Node& hw_root);

// A built target: a memory device whose parts (the NoC, the L2, each region's device) can be asked
// for by the name they report under, for their capacity and peak without building them again.
class BuiltTarget : public model::MemoryDevice {
 public:
  virtual const model::MemoryDevice* part(const std::string& name) const = 0;  // nullptr if none
};

// Builds one bench or simulation target from the hardware root. The returned device reports each
// of its parts under its own component name ("noc", "l2", region names).
std::unique_ptr<BuiltTarget> make_target(const config::Node& hw_root, const std::string& target);

}  // namespace indexsim::sim
