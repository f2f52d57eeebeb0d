// SPDX-License-Identifier: Apache-2.0
#include "sim/memtrace/export.hpp"

#include <limits>
#include <map>
#include <stdexcept>
#include <vector>

#include "models/sm/sm.hpp"
#include "sim/placement/placement.hpp"

namespace indexsim::sim::memtrace {

ExportStats expand_accesses(const trace::TraceData& t, const ExportOptions& o,
                            const std::function<void(const PlainRequest&)>& emit) {
  if (o.bytes == 0 || (o.bytes & (o.bytes - 1)) != 0) throw std::invalid_argument("--bytes must be a power of two");
  auto selected = [&o](const trace::KernelRecord& k) {
    return (o.kernel.empty() || k.name == o.kernel || trace::to_string(k.kind) == o.kernel) && (!o.have_layer || k.layer == o.layer);
  };
  std::map<uint32_t, std::vector<const trace::AccessRecord*>> by_kernel;
  for (const auto& a : t.accesses) {
    // Stores into the peers' memory leave over the fabric: they are not this memory's requests.
    if (a.tensor < t.tensors.size() && t.tensors[a.tensor].cls == trace::TensorClass::peer) continue;
    by_kernel[a.kernel].push_back(&a);
  }

  // Only the tensors the selected kernels touch are placed (renumbered densely for the policy),
  // so that one layer's kernels fit a single stack even when the whole model would not.
  std::vector<int64_t> dense(t.tensors.size(), -1);
  std::vector<trace::TensorRecord> used;
  for (const auto& k : t.kernels) {
    if (!selected(k)) continue;
    auto it = by_kernel.find(k.id);
    if (it == by_kernel.end()) continue;
    for (const auto* a : it->second) {
      if (a->tensor >= t.tensors.size())
        throw std::invalid_argument("access record of kernel " + std::to_string(k.id) + " names unknown tensor " +
                                    std::to_string(a->tensor));
      if (dense[a->tensor] >= 0) continue;
      dense[a->tensor] = static_cast<int64_t>(used.size());
      used.push_back(t.tensors[a->tensor]);
      used.back().id = static_cast<uint32_t>(used.size() - 1);
    }
  }
  RegionInfo target;  // one flat primary region: the exported trace's device-local addresses
  target.name = "target";
  target.capacity_bytes = o.capacity_bytes ? o.capacity_bytes : std::numeric_limits<uint64_t>::max() / 2;
  const Placement pl = place(used, {target}, PlacementPolicy{});
  std::vector<uint64_t> base(t.tensors.size(), 0);
  for (size_t i = 0; i < dense.size(); ++i)
    if (dense[i] >= 0) base[i] = pl.address[static_cast<size_t>(dense[i])];

  ExportStats st;
  bool matched = false;
  PlainRequest pr;
  for (const auto& k : t.kernels) {
    if (!selected(k)) continue;
    matched = true;
    auto it = by_kernel.find(k.id);
    if (it == by_kernel.end()) continue;
    ++st.kernels;
    // As the SM model walks them: loads in the kernel's K steps, an epilogue's stores after them.
    const auto phases = model::epilogue_phases(k, it->second);
    for (uint64_t cta = 0; cta < k.cta_count(); ++cta)
      for (int ph = 0; ph < 2; ++ph) {
        model::AccessCursor cur(&phases[ph], static_cast<uint32_t>(cta), &base, o.line_bytes, o.sector_bytes,
                                o.line_bytes, nullptr, ph == 0 ? k.load_steps : 0);
        while (!cur.done()) {
          const model::CtaRequest r = cur.next();
          const uint64_t end = r.addr + r.bytes;
          for (uint64_t a = r.addr / o.bytes * o.bytes; a < end; a += o.bytes) {
            if (o.limit && st.requests >= o.limit) return st;
            pr.addr = a;
            pr.write = r.write;
            pr.bytes = o.bytes;
            pr.cycle = st.requests * o.interval_cycles;
            emit(pr);
            ++st.requests;
            ++(r.write ? st.writes : st.reads);
          }
        }
      }
  }
  if (!matched)
    throw std::invalid_argument("no kernel matches" + (o.kernel.empty() ? std::string() : " --kernel '" + o.kernel + "'") +
                                (o.have_layer ? " --layer " + std::to_string(o.layer) : std::string()));
  return st;
}

}  // namespace indexsim::sim::memtrace
