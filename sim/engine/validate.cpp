// SPDX-License-Identifier: Apache-2.0
#include "sim/engine/validate.hpp"

#include <cmath>
#include <stdexcept>

namespace indexsim::sim {

Validation validate_run(const RunResult& r) {
  Validation v;
  std::map<std::string, std::pair<double, int>> by_kind;
  for (const auto& k : r.kernels) {
    if (k.measured_ns <= 0) continue;
    KernelError e{k.name, k.kind, k.duration_ns(), k.measured_ns, (k.duration_ns() - k.measured_ns) / k.measured_ns};
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
