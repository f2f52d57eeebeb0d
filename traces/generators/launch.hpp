// SPDX-License-Identifier: Apache-2.0
// Launch shapes as the libraries choose them: from the problem shape and the device's LaunchLimits,
// the tile, pipeline depth, threads, shared memory and grid a real kernel library would launch.
// Each heuristic names the library code it follows (docs/library-heuristics.md has the notes).
#pragma once

#include <cstdint>
#include <string>

#include "traces/launch_limits.hpp"
#include "traces/records.hpp"

namespace indexsim::trace {

enum class GemmLayout { dense, grouped_contiguous, grouped_masked };

struct GemmProblem {
  uint64_t m = 0, n = 0, k = 0;  // per group; masked: m is the expected rows per group
  uint32_t groups = 1;
  Precision precision = Precision::bf16;
  GemmLayout layout = GemmLayout::dense;
};

struct GemmLaunch {
  std::string library;              // "deepgemm-fp8" or "cutlass"
  uint32_t block_m = 0, block_n = 0, block_k = 0, stages = 0;
  uint32_t threads = 0, regs_per_thread = 0;
  uint64_t smem_bytes = 0;
  uint32_t multicast = 1;           // CTAs of a cluster that share one operand's TMA loads (1 or 2)
  bool multicast_on_a = true;       // the pair shares the A panel (else the B panel)
  uint64_t tiles = 0;               // output tiles over all groups
  uint32_t persistent_ctas = 0;     // persistent grid (DeepGEMM: the fewest SMs for the wave count); 0: one CTA per tile
  bool promotion = false;           // FP8 partial sums rescaled on the CUDA cores every block_k of K
  uint64_t waves(uint32_t units) const { return (tiles + units - 1) / units; }
};

// Throws std::invalid_argument naming the limit when no configuration fits the device (e.g. a tile
// whose pipeline does not fit the shared memory of one CTA).
GemmLaunch plan_gemm(const GemmProblem& p, const LaunchLimits& lim);

// Bytes of shared memory DeepGEMM's FP8 kernel asks for (get_smem_config: output tile, A/B stages
// with the A scales, all K-scales of B, two barriers a stage).
uint64_t deepgemm_smem_bytes(uint32_t stages, uint64_t k, uint32_t block_m, uint32_t block_n);

}  // namespace indexsim::trace
