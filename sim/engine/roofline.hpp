// SPDX-License-Identifier: Apache-2.0
// Rooflines: the lower bounds every simulated time is checked against. A kernel's is the larger of
// its compulsory bytes over the peak bandwidth of each region they live in, and its FLOPs over the
// processor's peak rate; a step's is the longest dependence chain of kernel rooflines.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "sim/engine/run_result.hpp"
#include "sim/workload/workload.hpp"
#include "traces/records.hpp"

namespace indexsim::sim {

struct KernelRoofline {
  double memory_ns = 0, compute_ns = 0;
};

// `accesses` are the kernel's; tensor t lives in region region_of[t] with peak region_peak_GBps[...]
// and occupies tensor_bytes[t]. Re-reads of a tensor beyond its footprint can be served by the L2 (a
// GEMM's panels), so each tensor contributes at most its size. `peak_flops(p)` is the processor's.
KernelRoofline kernel_roofline(const trace::KernelRecord& k, const std::vector<const trace::AccessRecord*>& accesses,
                               const std::vector<uint32_t>& region_of, const std::vector<double>& region_peak_GBps,
                               const std::vector<uint64_t>& tensor_bytes,
                               const std::function<double(trace::Precision)>& peak_flops);

// The longest dependence chain with every kernel at its roofline; res holds the live kernels'
// results in the workload's topological order (as the replay returns them).
double critical_path_roofline(const Workload& w, const std::vector<KernelResult>& res);

}  // namespace indexsim::sim
