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

double critical_path_roofline(const Workload& w, const std::vector<KernelResult>& res) {
  std::vector<double> lb(w.kernels().size(), 0.0);  // by vertex: the chain's end at this kernel
  double best = 0;
  size_t i = 0;
  for (size_t v : w.topological_order()) {
    if (w.kernels()[v].removed) continue;
    double start = 0;
    for (size_t p : w.predecessors(v)) start = std::max(start, lb[p]);
    lb[v] = start + res.at(i++).roofline_ns;
    best = std::max(best, lb[v]);
  }
  return best;
}

}  // namespace indexsim::sim
