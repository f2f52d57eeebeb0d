// SPDX-License-Identifier: Apache-2.0
#include "sim/placement/placement.hpp"

#include <algorithm>
#include <cstdlib>
#include <numeric>
#include <stdexcept>

#include "models/common/units.hpp"

namespace indexsim::sim {

using config::Rule;
using trace::TensorClass;

namespace {
// What a user can change so that a tensor that did not fit does: the setting first, the hardware last.
std::string fit_hint(const std::vector<RegionInfo>& regions, const PlacementPolicy& policy) {
  const bool has_overflow = std::any_of(regions.begin(), regions.end(), [](const RegionInfo& r) { return r.tier == Tier::overflow; });
  std::string hint;
  if (has_overflow && !policy.cxl_enabled) hint = "--set techniques.placement.cxl_enabled=true puts what does not fit on the overflow tier";
  std::string roomiest = policy.hbm_alloc_strategy;
  for (const auto& [name, fraction] : policy.strategy_fractions)
    if (fraction > policy.strategy_fractions.at(roomiest)) roomiest = name;
  if (roomiest != policy.hbm_alloc_strategy)
    hint += std::string(hint.empty() ? "" : ", or ") + "--set techniques.placement.hbm_alloc_strategy=" + roomiest +
            " gives the HBM a larger budget";
  if (hint.empty()) hint = "a smaller context or batch, a technique that shrinks the caches, or a hardware with more memory or a CXL pool";
  return "; hint: " + hint;
}
}  // namespace

PlacementPolicy PlacementPolicy::load(const config::Node& n) {
  PlacementPolicy p;
  const std::vector<std::string> strategies = {"performance", "balanced", "conservative"};
  p.hbm_alloc_strategy = n.opt<std::string>("hbm_alloc_strategy", "performance", Rule::choice(strategies));
  p.cxl_enabled = n.opt<bool>("cxl_enabled", false);
  p.npu_cache_policy = n.opt<std::string>("npu_cache_policy", "hardware", Rule::choice({"hardware", "lru", "fifo", "scratchpad"}));
  p.page_bytes = n.opt<uint64_t>("page_bytes", 2u << 20, Rule::power_of_two());
  p.fallback_page_bytes = n.opt<uint64_t>("fallback_page_bytes", 512, Rule::power_of_two());
  if (n.has("class_regions")) {
    const config::Node cr = n.child("class_regions");
    for (const std::string& cls : cr.keys()) {
      TensorClass c;
      if (!trace::tensor_class_from_string(cls, c) || c == TensorClass::peer)
        throw config::ConfigError(cr.file(), cr.key_path(cls), cls,
                                  "a tensor class: weights, kv_cache, indexer_cache, linear_state, activations, "
                                  "topk_indices or scratch");
      p.class_regions[c] = cr.req<std::string>(cls);
    }
  }
  if (n.has("npu_kernels"))
    for (const auto& kind : n.req_list<std::string>("npu_kernels")) {
      try {
        p.npu_kernels.push_back(trace::kernel_kind(kind));
      } catch (const std::invalid_argument& e) {
        throw config::ConfigError(n.file(), n.key_path("npu_kernels"), kind, e.what());
      }
    }
  // The seeds' environment variables win over the file (and the run records that they did).
  if (const char* e = std::getenv("HBM_ALLOC_STRATEGY")) {
    if (std::find(strategies.begin(), strategies.end(), e) == strategies.end())
      throw config::ConfigError("environment", "HBM_ALLOC_STRATEGY", e, Rule::choice(strategies).describe());
    p.hbm_alloc_strategy = e;
    p.env_overrides.push_back("HBM_ALLOC_STRATEGY");
  }
  if (const char* e = std::getenv("CXL_ENABLED")) {
    const std::string v = e;
    if (v == "true" || v == "1") p.cxl_enabled = true;
    else if (v == "false" || v == "0") p.cxl_enabled = false;
    else throw config::ConfigError("environment", "CXL_ENABLED", v, "must be true, false, 1 or 0");
    p.env_overrides.push_back("CXL_ENABLED");
  }
  if (const char* e = std::getenv("NPU_CACHE_POLICY")) {
    const std::string v = e;
    if (v != "lru" && v != "fifo" && v != "scratchpad")
      throw config::ConfigError("environment", "NPU_CACHE_POLICY", v, "must be one of {lru, fifo, scratchpad}");
    p.npu_cache_policy = v;
    p.env_overrides.push_back("NPU_CACHE_POLICY");
  }
  auto table = n.child("strategies");
  for (const auto& s : strategies) {
    const double f = table.child(s).req<double>("hbm_budget_fraction", Rule::range(0.05, 1.0));
    if (s == p.hbm_alloc_strategy) p.hbm_budget_fraction = f;
    p.strategy_fractions[s] = f;
  }
  return p;
}

namespace {
// Bytes read per byte stored in one step, highest first: what most deserves the fastest memory.
int priority(TensorClass c) {
  switch (c) {
    case TensorClass::activations: return 0;
    case TensorClass::topk_indices: return 1;
    case TensorClass::scratch: return 2;
    case TensorClass::weights: return 3;
    case TensorClass::indexer_cache: return 4;   // scanned whole every step
    case TensorClass::linear_state: return 5;
    case TensorClass::kv_cache: return 6;        // only the top-k rows are gathered
    case TensorClass::peer: return 7;            // not this GPU's memory: the fabric tier
  }
  return 7;
}
}  // namespace

Tier parse_tier(const std::string& text) {
  if (text == "primary") return Tier::primary;
  if (text == "overflow") return Tier::overflow;
  if (text == "pinned") return Tier::pinned;
  if (text == "fabric") return Tier::fabric;
  throw std::invalid_argument("tier '" + text + "': must be primary, overflow, pinned or fabric");
}

uint64_t Placement::bytes_in(const std::string& region, const std::vector<trace::TensorRecord>& tensors,
                             TensorClass cls) const {
  uint64_t s = 0;
  for (const auto& t : tensors)
    if (t.cls == cls && regions[region_of[t.id]].name == region) s += t.bytes;
  return s;
}

Placement place(const std::vector<trace::TensorRecord>& tensors, const std::vector<RegionInfo>& regions,
                const PlacementPolicy& policy) {
  Placement pl;
  pl.regions = regions;
  pl.region_of.assign(tensors.size(), 0);
  pl.address.assign(tensors.size(), 0);
  pl.used_bytes.assign(regions.size(), 0);
  pl.allocated_bytes.assign(regions.size(), 0);
  auto index = [&](const std::string& name) -> int {
    for (size_t i = 0; i < regions.size(); ++i)
      if (regions[i].name == name) return int(i);
    return -1;
  };
  // A region the hardware lacks: the error says who asked for it and lists the regions there are.
  auto missing = [&](const std::string& who, const std::string& name) {
    std::string names;
    for (const auto& g : regions) names += (names.empty() ? "" : ", ") + g.name;
    return PlacementError(who + " region '" + name + "', which the hardware does not have (its regions: " + names + ")");
  };
  std::vector<int> primary, overflow, fabric;
  for (size_t i = 0; i < regions.size(); ++i) {
    if (regions[i].tier == Tier::primary) primary.push_back(int(i));
    if (regions[i].tier == Tier::fabric) fabric.push_back(int(i));
    if (regions[i].tier == Tier::overflow && policy.cxl_enabled) overflow.push_back(int(i));
  }
  if (primary.empty()) throw PlacementError("no region of the hardware has tier: primary (noc.regions)");
  if (policy.cxl_enabled && overflow.empty())
    throw PlacementError("cxl_enabled is true but no region of the hardware has tier: overflow (noc.regions); hint: "
                         "--set techniques.placement.cxl_enabled=false, or a hardware with a CXL pool");

  std::vector<uint64_t> budget(regions.size());
  for (size_t i = 0; i < regions.size(); ++i) budget[i] = regions[i].capacity_bytes;
  for (int r : primary) budget[r] = uint64_t(double(regions[r].capacity_bytes) * policy.hbm_budget_fraction);

  const auto pages = [&](uint64_t bytes) { return policy.allocated_bytes(bytes); };
  auto put = [&](const trace::TensorRecord& t, int r) {
    const uint64_t a = pages(std::max<uint64_t>(t.bytes, 1));
    pl.region_of[t.id] = uint32_t(r);
    pl.address[t.id] = regions[r].base + pl.allocated_bytes[r];
    pl.allocated_bytes[r] += a;
    pl.used_bytes[r] += t.bytes;
  };
  auto fits = [&](const trace::TensorRecord& t, int r) {
    return r >= 0 && pl.allocated_bytes[r] + pages(std::max<uint64_t>(t.bytes, 1)) <= budget[r];
  };

  std::vector<uint32_t> order(tensors.size());
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t a, uint32_t b) { return priority(tensors[a].cls) < priority(tensors[b].cls); });
  // Pins first: a technique asked for this placement explicitly.
  std::vector<bool> done(tensors.size(), false);
  for (uint32_t id : order) {
    auto it = policy.pins.find(tensors[id].name);
    if (it == policy.pins.end()) continue;
    const int r = index(it->second);
    if (r < 0) throw missing("tensor " + tensors[id].name + " is pinned to", it->second);
    Placement::PinOutcome pin{tensors[id].name, it->second, tensors[id].bytes,
                              budget[r] > pl.allocated_bytes[r] ? budget[r] - pl.allocated_bytes[r] : 0, false};
    if (!fits(tensors[id], r)) {
      pl.spilled.push_back(tensors[id].name);  // falls back to the normal order below
      pl.pins.push_back(pin);
      continue;
    }
    put(tensors[id], r);
    done[id] = true;
    pin.placed = true;
    pl.pins.push_back(pin);
  }
  // Then the classes a policy sends to a region of their own, in priority order, while they fit.
  for (uint32_t id : order) {
    if (done[id]) continue;
    auto it = policy.class_regions.find(tensors[id].cls);
    if (it == policy.class_regions.end()) continue;
    const int r = index(it->second);
    if (r < 0) throw missing(std::string("placement.class_regions sends ") + trace::to_string(tensors[id].cls) + " to", it->second);
    if (regions[r].tier == Tier::fabric)
      throw PlacementError("placement.class_regions: region '" + it->second + "' is the fabric window onto the peers' memory");
    if (!fits(tensors[id], r)) {
      pl.spilled.push_back(tensors[id].name);
      continue;
    }
    put(tensors[id], r);
    done[id] = true;
  }
  for (uint32_t id : order) {
    if (done[id]) continue;
    const auto& t = tensors[id];
    const auto first_fit = [&](const std::vector<int>& tier) {
      for (int r : tier)
        if (fits(t, r)) return r;
      return -1;
    };
    if (t.cls == TensorClass::peer) {  // peers' buffers live behind the fabric, nowhere else
      if (fabric.empty())
        throw PlacementError("tensor " + t.name +
                             " is in another GPU's memory but no region of the hardware has tier: fabric (noc.regions)");
      const int r = first_fit(fabric);
      if (r < 0) throw PlacementError("peer buffer " + t.name + " (" + human_bytes(double(t.bytes)) + ") exceeds the fabric window");
      put(t, r);
      continue;
    }
    if (const int r = first_fit(primary); r >= 0) {
      put(t, r);
    } else if (const int o = first_fit(overflow); o >= 0) {
      put(t, o);
      pl.spilled.push_back(t.name);
    } else {
      std::string where;
      for (int r : primary)
        where += (where.empty() ? "" : "; ") + regions[r].name + " budget " + human_bytes(double(budget[r])) + " (" +
                 policy.hbm_alloc_strategy + " strategy), " + human_bytes(double(pl.allocated_bytes[r])) + " already allocated";
      throw PlacementError("tensor " + t.name + " (" + human_bytes(double(t.bytes)) + ") does not fit: " + where +
                           (overflow.empty() ? ", overflow disabled" : ", and the overflow tier is full") +
                           fit_hint(regions, policy));
    }
  }
  // Fragmentation is of this GPU's memories: the fabric window maps the peers'.
  double alloc = 0, used = 0;
  for (size_t i = 0; i < regions.size(); ++i) {
    if (regions[i].tier == Tier::fabric) continue;
    alloc += double(pl.allocated_bytes[i]);
    used += double(pl.used_bytes[i]);
  }
  pl.fragmentation = alloc > 0 ? (alloc - used) / alloc : 0;
  return pl;
}

}  // namespace indexsim::sim
