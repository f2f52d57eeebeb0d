// SPDX-License-Identifier: Apache-2.0
// What a kernel library asks of the device before it picks a launch shape: the number of SMs, the
// shared memory one CTA may opt into, and which tensor precisions run natively. DeepGEMM, FlashMLA
// and CUTLASS size their grids, tiles and pipeline stages from exactly these (cudaDeviceProp's
// multiProcessorCount and sharedMemPerBlockOptin, the compute capability); the emulated kernels of
// traces/generators/ do the same, so that one kernel launches differently on an A100 and an H200.
#pragma once

#include <array>
#include <cstdint>

#include "traces/records.hpp"

namespace indexsim::trace {

struct LaunchLimits {
  uint32_t units = 132;                      // SMs
  uint64_t smem_per_cta_bytes = 227 * 1024;  // largest dynamic shared memory of one CTA (opt-in)
  uint64_t smem_per_unit_bytes = 228 * 1024;
  uint32_t max_threads_per_unit = 2048;
  uint32_t registers_per_unit = 65536;
  // Tensor precisions the hardware runs natively (FP8 from Hopper and Ada on, FP4 from Blackwell).
  std::array<bool, kPrecisionCount> native{true, true, true, true, true, false, true};
  // Hopper's asynchronous warpgroup MMA (wgmma) and TMA: the DeepGEMM/FlashMLA kernel designs.
  bool warpgroup_mma = true;
};

}  // namespace indexsim::trace
