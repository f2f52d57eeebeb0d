// SPDX-License-Identifier: Apache-2.0
#include "sim/engine/validate.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace indexsim::sim {

std::map<uint32_t, double> cta_spans(const trace::TraceData& t) {
  std::map<uint32_t, std::pair<uint64_t, uint64_t>> range;
  for (const auto& c : t.ctas) {
    auto [it, fresh] = range.try_emplace(c.kernel, c.start_ns, c.end_ns);
    if (!fresh) {
      it->second.first = std::min(it->second.first, c.start_ns);
      it->second.second = std::max(it->second.second, c.end_ns);
    }
  }
  std::map<uint32_t, double> spans;
  for (const auto& [id, r] : range)
    if (r.second > r.first) spans[id] = double(r.second - r.first);
  return spans;
}

Validation validate_run(const RunResult& r, const std::map<uint32_t, double>& in_kernel_ns) {
  Validation v;
  std::map<std::string, std::pair<double, int>> by_kind;
  for (const auto& k : r.kernels) {
    if (k.measured_ns <= 0) continue;
    KernelError e{k.name, k.kind, k.duration_ns(), k.measured_ns, k.measured_ns, "events", 0};
    if (auto it = in_kernel_ns.find(k.id); it != in_kernel_ns.end()) {
      e.measured_ns = it->second;
      e.reference = "cta span";
    }
    e.error = (e.simulated_ns - e.measured_ns) / e.measured_ns;
    v.mape += std::fabs(e.error);
    by_kind[k.kind].first += std::fabs(e.error);
    by_kind[k.kind].second += 1;
    v.kernels.push_back(e);
  }
  if (v.kernels.empty())
    throw std::invalid_argument("no kernel of this trace carries a measured time: validate needs a captured trace");
  v.mape /= double(v.kernels.size());
  for (const auto& [kind, s] : by_kind) v.mape_by_kind[kind] = s.first / s.second;
  return v;
}

}  // namespace indexsim::sim
