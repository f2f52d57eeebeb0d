// SPDX-License-Identifier: Apache-2.0
// One emulated kernel on one hardware config, and the figures a library's benchmark reports for it
// (TFLOP/s, GB/s, time): what `indexsim bench kernel` prints and what every case of
// `indexsim validate --published` compares with a measurement. The kernel is built for the
// processor's launch limits, so its launch shape follows the device as the library's would.
#pragma once

#include <string>
#include <vector>

#include "models/common/params.hpp"
#include "sim/engine/run_result.hpp"
#include "traces/generators/collective_kernels.hpp"
#include "traces/generators/emulate.hpp"
#include "traces/launch_limits.hpp"
#include "traces/trace_data.hpp"

namespace indexsim::sim {

// A kernel and its shape. Which fields a kernel reads is listed in kKernelShapes (kernel_bench.cpp).
struct KernelCase {
  std::string kernel;        // copy, read, gemm, mla_decode, sparse_mla_decode, flashmla_sparse_decode, a collective, ep_dispatch, ep_combine
  uint64_t bytes = 0;        // copy, read, collectives (the message size as nccl-tests counts it)
  uint32_t gpus = 8;         // collectives and expert-parallel kernels
  uint64_t ctas = 0;         // copy, read: 0 = one CTA per chunk
  uint32_t ctas_per_sm = 0;  // copy, read: else the grid is this many CTAs an SM of the GPU
  uint32_t copy_threads = 256, copy_vector_bytes = 16;  // copy, read: threads a CTA, bytes a thread moves per iteration
  uint32_t copy_sources = 1;  // copy, read: arrays read (bytes is one array's size)
  uint64_t m = 0, n = 0, k = 0;
  trace::Precision dtype = trace::Precision::bf16;
  trace::SparseMlaDecodeShape sparse;  // sparse_mla_decode, flashmla_sparse_decode
  bool crossover = true;               // flashmla_sparse_decode: CTA pairs share dequantised rows
  trace::MlaDecodeShape dense;         // mla_decode
  trace::ExpertParallelShape ep;       // ep_dispatch, ep_combine
  // Every kernel: launches back to back on the same buffers, the figure their time over their count
  // (gpu-stream times two launches and halves them: the second pays the dirty lines the first left
  // in the L2). Simulated without segment reuse, which would repeat the first launch's time.
  uint32_t launches = 1;
};

// The kernels and the shape keys each takes (for usage messages and errors).
std::string kernel_case_usage();
// Reads a case's `shape:` mapping for `kernel`; a missing, unknown or out-of-range key is a
// ConfigError naming the file, the key and the rule.
KernelCase read_kernel_case(const std::string& kernel, const config::Node& shape);

// What the library's own benchmark counts: FLOPs of the nominal problem (2mnk for a GEMM), bytes
// of its operands (read + written). A collective counts nccl-tests' bus bytes (the message times
// 2(n-1)/n for an all-reduce, (n-1)/n otherwise), so that its GB/s is the bus bandwidth; DeepEP's
// kernels the token bytes a rank receives, its own included (its tests' "bottleneck bandwidth").
double nominal_flops(const KernelCase& c);
double nominal_bytes(const KernelCase& c);
bool is_collective(const std::string& kernel);  // an NCCL collective (not DeepEP's kernels)
// nccl-tests' bus bandwidth over algorithm bandwidth: 2(n-1)/n for an all-reduce, (n-1)/n else.
double bus_factor(const KernelCase& c);
trace::TraceData build_kernel_trace(const KernelCase& c, const trace::LaunchLimits& limits);  // c.launches of them

struct KernelRun {
  RunResult run;
  double kernel_ns = 0;  // first CTA of the first kernel to the last CTA of the last (launch gaps inside included), over KernelCase::launches
  double flops = 0, bytes = 0;
  // The figure in one of the units benchmarks report: TFLOP/s, GB/s, TB/s, us, ms.
  double figure(const std::string& unit) const;
};
const std::vector<std::string>& figure_units();

KernelRun run_kernel_case(const KernelCase& c, const std::string& hardware, const std::vector<std::string>& sets,
                          bool fast, const std::string& timeline = "");

}  // namespace indexsim::sim
