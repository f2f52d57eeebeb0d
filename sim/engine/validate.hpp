// SPDX-License-Identifier: Apache-2.0
// Validation of the model against a captured trace: each kernel's simulated time against the time
// it ran on the GPU. The reference is the kernel's in-kernel time, its first CTA's start to its
// last CTA's end (the capture's CTA stamps), which is what the model times; CUDA events around a
// lone kernel add the launch and the events' own cost (3.3 us for a one-element kernel on an H200,
// traces/captured/probe_torch.tsv), which a step of back-to-back kernels does not pay as such (the
// model's gpu.kernel_launch_ns stands for that). A kernel without stamps (a cuBLAS GEMM) is
// compared with its events' median.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "sim/engine/run_result.hpp"
#include "traces/trace_data.hpp"

namespace indexsim::sim {

struct KernelError {
  std::string name, kind;
  double simulated_ns = 0, measured_ns = 0;  // measured: the reference below
  double events_ns = 0;                      // the CUDA events' median
  std::string reference = "events";          // "cta span" or "events"
  double error = 0;  // (simulated - measured) / measured
};

struct Validation {
  std::vector<KernelError> kernels;          // kernels with a measured time
  double mape = 0;                           // mean |error| over them
  std::map<std::string, double> mape_by_kind;
};

// `in_kernel_ns`: each kernel id's CTA span, where the trace has CTA stamps (cta_spans below).
// Throws std::invalid_argument when no kernel of the run carries a measured time (not a captured trace).
Validation validate_run(const RunResult& r, const std::map<uint32_t, double>& in_kernel_ns = {});
// First CTA start to last CTA end of every kernel with CTA records, by kernel id.
std::map<uint32_t, double> cta_spans(const trace::TraceData& t);

}  // namespace indexsim::sim
