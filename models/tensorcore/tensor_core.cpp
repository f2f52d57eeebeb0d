// SPDX-License-Identifier: Apache-2.0
#include "models/tensorcore/tensor_core.hpp"

#include <algorithm>
#include <cmath>

namespace indexsim::model {

using config::Rule;
using trace::Precision;

TensorCoreParams TensorCoreParams::load(const config::Node& gpu) {
  TensorCoreParams p;
  p.sm_clock_MHz = gpu.req<double>("sm_clock_MHz", Rule::clock_MHz());
  p.tensor_clock_MHz = gpu.req<double>("tensor_clock_MHz", Rule::clock_MHz());
  auto t = gpu.child("tensor_flops_per_clk_per_sm");
  p.flops_per_clk[int(Precision::tf32)] = t.req<double>("tf32", Rule::non_negative());
  p.flops_per_clk[int(Precision::bf16)] = t.req<double>("bf16", Rule::positive());
  p.flops_per_clk[int(Precision::fp16)] = t.req<double>("fp16", Rule::positive());
  p.flops_per_clk[int(Precision::fp8)] = t.req<double>("fp8", Rule::non_negative());
  p.flops_per_clk[int(Precision::fp4)] = t.req<double>("fp4", Rule::non_negative());
  p.flops_per_clk[int(Precision::simt)] = gpu.req<double>("simt_flops_per_clk_per_sm", Rule::positive());
  // FP32 matrix work without TF32 runs on the CUDA cores.
  p.flops_per_clk[int(Precision::fp32)] = p.flops_per_clk[int(Precision::simt)];
  p.pipeline_latency_cycles = gpu.req<double>("mma_pipeline_latency_cycles", Rule::non_negative());
  p.fp8_dequant_cycles_per_value = gpu.req<double>("fp8_dequant_cycles_per_value", Rule::range(0.001, 100));
  p.issue_efficiency = gpu.req<double>("mma_issue_efficiency", Rule::range(0.05, 1.0));
  p.matrix_load_sm_clock_MHz = gpu.opt<double>("matrix_load_sm_clock_MHz", p.sm_clock_MHz, Rule::clock_MHz());
  if (p.matrix_load_sm_clock_MHz > p.sm_clock_MHz)
    gpu.fail("matrix_load_sm_clock_MHz", std::to_string(p.matrix_load_sm_clock_MHz),
             "must be at most sm_clock_MHz (" + std::to_string(p.sm_clock_MHz) + "): it is the clock the power limit lowers it to");
  return p;
}

TensorCore::TensorCore(const TensorCoreParams& p)
    : p_(p), tensor_clock_(p.tensor_clock_MHz), sm_clock_(p.sm_clock_MHz), matrix_load_clock_(p.matrix_load_sm_clock_MHz) {}

int TensorCore::effective(int precision) const {
  // fp4 → fp8 → bf16 when a GPU lacks the narrow format; tf32 → simt.
  static constexpr int kFallback[trace::kPrecisionCount] = {
      int(Precision::simt), int(Precision::simt), int(Precision::bf16), int(Precision::fp16),
      int(Precision::bf16), int(Precision::fp8),  int(Precision::simt)};
  int p = precision;
  for (int guard = 0; guard < 4 && p_.flops_per_clk[p] <= 0; ++guard) p = kFallback[p];
  return p;
}

Tick TensorCore::compute_ps(const std::array<double, trace::kPrecisionCount>& flops, bool overlap) const {
  // The Tensor Cores and the CUDA cores are separate pipes. In a warp-specialised kernel different
  // warps feed them at once, and the busier pipe sets the time (DeepGEMM promotes one warpgroup's
  // partial sums while the other's WGMMAs run). A kernel whose barriers separate the phases
  // (dequantise a tile, then MMA on it, then softmax) leaves one pipe idle while the other works.
  // Beside matrix work the SM runs at its power-limited clock (matrix_load_sm_clock_MHz): the
  // throttle that issue_efficiency holds for the Tensor Cores slows the CUDA cores as much.
  bool matrix = false;
  for (int i = 0; i < trace::kPrecisionCount; ++i) matrix = matrix || (flops[i] > 0 && !on_cuda_cores(effective(i)));
  const Clock& simt_clock = matrix ? matrix_load_clock_ : sm_clock_;
  double mma_ps = 0, simt_ps = 0;
  for (int i = 0; i < trace::kPrecisionCount; ++i) {
    if (flops[i] <= 0) continue;
    const int e = effective(i);
    if (on_cuda_cores(e)) simt_ps += flops[i] / p_.flops_per_clk[e] * simt_clock.period_ps();
    else mma_ps += flops[i] / (p_.flops_per_clk[e] * p_.issue_efficiency) * tensor_clock_.period_ps();
  }
  double ps = overlap ? std::max(mma_ps, simt_ps) : mma_ps + simt_ps;
  if (mma_ps > 0) ps += p_.pipeline_latency_cycles * tensor_clock_.period_ps();
  return static_cast<Tick>(std::llround(ps));
}

double TensorCore::peak_flops(Precision p, int sm_count) const {
  const int e = effective(int(p));
  const double clk = on_cuda_cores(e) ? p_.sm_clock_MHz : p_.tensor_clock_MHz;
  return p_.flops_per_clk[e] * sm_count * clk * 1e6;
}

}  // namespace indexsim::model
