// SPDX-License-Identifier: Apache-2.0
// Where each tensor of a step lives, among the regions of the hardware's address map.
//
// Each region has a tier (`noc.regions[].tier` in the hardware file): `primary` regions (the GPU's
// HBM) take tensors up to the strategy's budget (a share of their capacity), `overflow` regions (a
// CXL pool) take what does not fit when overflow is enabled (`cxl_enabled`, the seeds' CXL_ENABLED),
// `pinned` regions (an NPU SRAM, a flash tier) take only the tensors a technique pins there, by name
// or by class (`placement.class_regions`: weights or frozen caches on high-bandwidth flash). Within
// a tier, regions fill in the table's order. `fabric` regions (the NVLink window onto the peers'
// memory) take the peer tensors of collectives, and only those. Tensors are placed in priority order (the bytes read
// per byte stored, highest first: activations, weights, indexer caches, linear state, KV caches);
// pins (e.g. IndexShare's first-layer index cache) are honoured first. Each region is carved into pages; fragmentation is the
// share of allocated bytes that no tensor uses (page rounding), the seeds' "memory fragmentation".
#pragma once

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/common/params.hpp"
#include "traces/records.hpp"

namespace indexsim::sim {

// The tensors of a step do not fit the hardware's memories as the policy allows: what failed, in
// GiB, and the setting that would fix it where there is one.
class PlacementError : public std::runtime_error {
 public:
  explicit PlacementError(const std::string& what) : std::runtime_error("placement: " + what) {}
};

enum class Tier { primary, overflow, pinned, fabric };
// "primary", "overflow", "pinned" or "fabric"; std::invalid_argument naming the text otherwise.
Tier parse_tier(const std::string& text);

struct RegionInfo {
  std::string name;
  Tier tier = Tier::primary;
  uint64_t base = 0;
  uint64_t capacity_bytes = 0;
  double peak_GBps = 0;
};

struct PlacementPolicy {
  std::string hbm_alloc_strategy = "performance";  // performance | balanced | conservative
  bool cxl_enabled = false;
  std::string npu_cache_policy = "hardware";       // hardware (the SRAM section's own) | lru | fifo | scratchpad
  double hbm_budget_fraction = 1.0;                // from the strategy table of the config
  std::map<std::string, double> strategy_fractions;  // the whole table: what another strategy would allow
  uint64_t page_bytes = 2u << 20;
  // What placing `bytes` allocates: whole pages (page_bytes is a power of two, checked on loading).
  uint64_t allocated_bytes(uint64_t bytes) const { return (bytes + page_bytes - 1) / page_bytes * page_bytes; }
  // The allocation granule the seeds' "automatic fallback" re-places with when fragmentation
  // exceeds its threshold (`fallback_page_bytes`): sub-allocation inside shared segments.
  uint64_t fallback_page_bytes = 512;
  std::map<std::string, std::string> pins;         // tensor name → region
  // Tensor class → region (`class_regions`, e.g. weights: hbf): every tensor of the class goes there
  // after the pins, while it fits; what does not falls back to the normal order (and is spilled).
  std::map<trace::TensorClass, std::string> class_regions;
  std::vector<trace::KernelKind> npu_kernels;      // kernel kinds the NPU runs (`npu_kernels`)
  std::vector<std::string> env_overrides;          // which environment variables changed the policy

  // Reads `placement:` (strategies table included) and applies HBM_ALLOC_STRATEGY, CXL_ENABLED and
  // NPU_CACHE_POLICY from the environment, which win over the file.
  static PlacementPolicy load(const config::Node& placement);
};

struct Placement {
  std::vector<uint32_t> region_of;      // per tensor id: index into regions
  std::vector<uint64_t> address;        // per tensor id: physical base address
  std::vector<RegionInfo> regions;
  std::vector<uint64_t> used_bytes;     // per region: requested bytes placed there
  std::vector<uint64_t> allocated_bytes;
  double fragmentation = 0;             // (allocated - used) / allocated, all regions
  std::vector<std::string> spilled;     // tensors that did not fit their preferred region
  // What became of each pin a technique asked for: placed there, or not (then placed by the
  // normal order, and listed in `spilled` too).
  struct PinOutcome {
    std::string tensor, region;
    uint64_t bytes = 0, free_bytes = 0;   // the tensor, and what the region had left for it
    bool placed = false;
  };
  std::vector<PinOutcome> pins;
  uint64_t bytes_in(const std::string& region, const std::vector<trace::TensorRecord>& tensors,
                    trace::TensorClass cls) const;
};

// Throws std::runtime_error naming the tensor, its size and the space left when nothing fits.
Placement place(const std::vector<trace::TensorRecord>& tensors, const std::vector<RegionInfo>& regions,
                const PlacementPolicy& policy);

}  // namespace indexsim::sim
