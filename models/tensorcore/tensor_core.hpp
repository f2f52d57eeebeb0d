// SPDX-License-Identifier: Apache-2.0
// Tensor Core throughput and pipeline latency per precision, on the tensor clock.
//
// One SM's tensor cores retire `flops_per_clk[p]` FLOPs per tensor-clock cycle at precision p when
// the pipeline is full. A CTA's matrix work of F FLOPs therefore takes F / rate cycles plus one
// pipeline fill (latency_cycles) per dependent chain; SIMT work runs on the CUDA cores at the SM
// clock, or at the power-limited clock beside matrix work. The peak of the whole GPU is
// sm_count × rate × clock: the roofline the replay checks against.
#pragma once

#include <array>
#include <string>

#include "models/common/time.hpp"
#include "models/common/params.hpp"
#include "traces/records.hpp"

namespace indexsim::model {

struct TensorCoreParams {
  double tensor_clock_MHz = 0;
  double sm_clock_MHz = 0;
  // FLOPs per clock per SM, indexed by trace::Precision (simt = CUDA-core FP32 FMA x2, SM clock).
  std::array<double, trace::kPrecisionCount> flops_per_clk{};
  double pipeline_latency_cycles = 0;   // fill latency of one MMA chain (tensor clock)
  // CUDA-core cycles one SM spends turning one FP8 (E4M3) value into a scaled BF16 one: the
  // conversion chain's instructions at the architecture's throughputs (SM clock).
  double fp8_dequant_cycles_per_value = 0;
  // Fraction of the issue slots a real mainloop keeps busy (operand staging, barriers).
  double issue_efficiency = 1.0;
  // The SM clock while the Tensor Cores are loaded: a part at its power limit clocks the whole SM
  // down, so the CUDA-core work of a kernel that also does matrix work runs at this clock, not at
  // sm_clock_MHz. sm_clock_MHz when the file does not say.
  double matrix_load_sm_clock_MHz = 0;

  static TensorCoreParams load(const config::Node& gpu);
};

class TensorCore {
 public:
  explicit TensorCore(const TensorCoreParams& p);
  // Time for one SM to retire `flops` (per precision), pipeline fill included: the larger of the
  // Tensor Core time and the CUDA-core time when the kernel overlaps the two pipes, their sum when
  // its phases alternate (trace::KernelRecord::simt_overlaps_mma). Precisions the GPU
  // lacks (rate 0, e.g. FP8 on A100) run at the next wider precision it has, as libraries do.
  Tick compute_ps(const std::array<double, trace::kPrecisionCount>& flops, bool overlap = true) const;
  // Peak rate of the whole GPU at one precision, FLOP/s (after the fallback above).
  double peak_flops(trace::Precision p, int sm_count) const;
  const TensorCoreParams& params() const { return p_; }

 private:
  int effective(int precision) const;
  // Whether an effective precision runs on the CUDA cores (SM clock), not the Tensor Cores.
  static bool on_cuda_cores(int e) { return e == int(trace::Precision::simt) || e == int(trace::Precision::fp32); }
  TensorCoreParams p_;
  Clock tensor_clock_, sm_clock_, matrix_load_clock_;
};

}  // namespace indexsim::model
