// SPDX-License-Identifier: Apache-2.0
#include "sim/engine/roofline.hpp"

#include <algorithm>
#include <map>

namespace indexsim::sim {

KernelRoofline kernel_roofline(const trace::KernelRecord& k, const std::vector<const trace::AccessRecord*>& accesses,
                               const std::vector<uint32_t>& region_of, const std::vector<double>& region_peak_GBps,
                               const std::vector<uint64_t>& tensor_bytes,
                               const std::function<double(trace::Precision)>& peak_flops) {
  std::map<uint32_t, double> by_tensor;
  for (const auto* a : accesses) by_tensor[a->tensor] += double(a->total_bytes());
  std::vector<double> by_region(region_peak_GBps.size(), 0.0);
  for (const auto& [t, b] : by_tensor) {
    const double cap = t < tensor_bytes.size() ? double(tensor_bytes[t]) : b;
    by_region[region_of[t]] += std::min(b, std::max(cap, 1.0));
  }
  KernelRoofline r;
  for (size_t g = 0; g < by_region.size(); ++g)
    if (region_peak_GBps[g] > 0) r.memory_ns = std::max(r.memory_ns, by_region[g] / region_peak_GBps[g]);  // B / (GB/s) = ns
  for (int p = 0; p < trace::kPrecisionCount; ++p)
    if (k.flops[p] > 0) r.compute_ns += k.flops[p] / peak_flops(trace::Precision(p)) * 1e9;
  return r;
}

double critical_path_roofline(const std::vector<trace::KernelRecord>& ks, const std::vector<KernelResult>& res) {
  std::map<uint32_t, double> lb;
  double best = 0;
  for (size_t i = 0; i < ks.size(); ++i) {
    double start = 0;
    for (uint32_t d : ks[i].deps) start = std::max(start, lb[d]);
    lb[ks[i].id] = start + res[i].roofline_ns;
    best = std::max(best, lb[ks[i].id]);
  }
  return best;
}

}  // namespace indexsim::sim
