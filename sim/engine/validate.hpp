// SPDX-License-Identifier: Apache-2.0
// Validation of the model against a captured trace: each kernel's simulated time against the
// median time the GPU measured for it.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "sim/engine/run_result.hpp"

namespace indexsim::sim {

struct KernelError {
  std::string name, kind;
  double simulated_ns = 0, measured_ns = 0;
  double error = 0;  // (simulated - measured) / measured
};

struct Validation {
  std::vector<KernelError> kernels;          // kernels with a measured time
  double mape = 0;                           // mean |error| over them
  std::map<std::string, double> mape_by_kind;
};

// Throws std::runtime_error when no kernel of the run carries a measured time (not a captured trace).
Validation validate_run(const RunResult& r);

}  // namespace indexsim::sim
