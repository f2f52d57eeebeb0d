// SPDX-License-Identifier: Apache-2.0
// The memory system, composed from the hardware config: requesters' ports -> interconnect ->
// (address map) -> shared cache -> the cached regions, and the uncached regions straight from the
// interconnect.
//
// The hardware file's `system:` section says which sections play those roles (and which hold the
// processors); nothing in sim/ reads a section by its name. The address map is the region table
// `regions` of the interconnect's section (`noc.regions` in the presets): each entry names a
// region, the config section that describes its device (built through the registry from that
// section's `impl`), whether the L2 caches it, and optionally the region whose device serves its
// misses (`backing`, for an SRAM used as a cache). Region i occupies the address window
// [i << kRegionWindowBits, (i + 1) << kRegionWindowBits); a device sees window-local addresses.
// Nothing here names a device: a new memory is a new section and a new table row.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "models/common/memory_device.hpp"
#include "models/common/params.hpp"

namespace indexsim::sim {

// 16 TiB per region: larger than any device modelled (an HBF stack is 0.5 TB, a GPU's HBM < 0.2 TB).
constexpr int kRegionWindowBits = 44;

// How the hardware file's sections compose: its `system:` section.
struct ProcessorSlot {
  std::string section;       // the processor's section, e.g. "gpu"; built through its `impl`
  std::string local_region;  // a region beside its units, reached at their local rate (an NPU's SRAM); empty: none
};
struct SystemLayout {
  // What runs kernels, in the interconnect's port order: slot i's units take the ports after slot
  // i-1's. Slot 0 runs every kernel that no technique or placement moves. Empty: a memory preset.
  std::vector<ProcessorSlot> processors;
  std::string interconnect;  // the section in front of the memory; its `regions` are the address map
  std::string cache;         // the shared cache over the cached regions; empty: none
};
SystemLayout read_layout(const config::Node& hw_root);

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

// The names make_target accepts: every region, plus, where the hardware has a shared cache, its
// section's name (e.g. "l2": the cache over the cached regions) and "system" (interconnect, cache
// and every region).
std::vector<std::string> target_names(const config::Node& hw_root);

// A built target: a memory device whose parts (the NoC, the L2, each region's device) can be asked
// for by the name they report under, for their capacity and peak without building them again.
class BuiltTarget : public model::MemoryDevice {
 public:
  virtual const model::MemoryDevice* part(const std::string& name) const = 0;  // nullptr if none
  // The same part, to bind or drive (the SystemC engine binds external regions): the target owns
  // its parts, and they are not const.
  model::MemoryDevice* part(const std::string& name) {
    return const_cast<model::MemoryDevice*>(static_cast<const BuiltTarget&>(*this).part(name));
  }
};

// Builds one bench or simulation target from the hardware root. The returned device reports each
// of its parts under its own component name (the interconnect's and the cache's section names, the
// region names).
// `link`, where given, stands between each unit and the unit above it (the SystemC engine's TLM-2.0
// links, models/common/tlm_link.hpp): the parent is handed what it returns for the child.
using DeviceLink =
    std::function<std::unique_ptr<model::MemoryDevice>(std::unique_ptr<model::MemoryDevice> child, const std::string& name)>;
std::unique_ptr<BuiltTarget> make_target(const config::Node& hw_root, const std::string& target, const DeviceLink& link = {});

}  // namespace indexsim::sim
