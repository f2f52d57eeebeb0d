// SPDX-License-Identifier: Apache-2.0
// How an emulated GEMM reads and writes (internal to the generators): the per-CTA panel reads and
// tile writes of a GEMM launched as plan_gemm chose, and the arithmetic it does. The step emulator
// (emulate.cpp) and the standalone GEMM benchmark (emulate_gemm) both emit GEMMs through these.
#pragma once

#include "traces/generators/launch.hpp"
#include "traces/generators/trace_builder.hpp"

namespace indexsim::trace::detail {

// The operands of one GEMM C[m×n] = A[m×k]·B[n×k]ᵀ: where they live and their element sizes.
struct GemmOperands {
  uint32_t a_tensor = 0, b_tensor = 0, c_tensor = 0;
  uint64_t a_base = 0, b_base = 0, c_base = 0;
  uint32_t a_bits = 16, b_bits = 16, c_bits = 16;
};

// How a GEMM's output tiles map to CTAs: tile_m x tile_n, and TMA multicast pairs that share one
// operand's loads (each CTA of the pair fetches half the shared panel for both).
struct GemmTiling {
  uint64_t tm = 128, tn = 256;
  uint32_t multicast = 1;
  bool on_a = true;
};

// Per-CTA reads of the A row-panel and the B column-panel and the write of the C tile, for the CTAs
// [cta0, cta0 + mt·nt) (gemm_kernels.cpp says how multicast pairs are laid out).
void gemm_accesses(Builder& b, uint32_t kernel, uint64_t cta0, uint64_t m, uint64_t n, uint64_t kdim,
                   const GemmTiling& t, const GemmOperands& o);
// The Tensor Core FLOPs of whole tiles, and DeepGEMM's FP8 promotion on the CUDA cores.
void gemm_flops(KernelRecord& k, const GemmLaunch& g, uint64_t kdim, Precision p);
// How a planned GEMM's CTA moves its data: A and B in K blocks, the output tile after its math
// (KernelRecord::load_steps, stores_after_math). Dense and grouped GEMMs alike.
void gemm_pipeline(KernelRecord& k, const GemmLaunch& g, uint64_t kdim);
KernelShape gemm_kernel_shape(const GemmLaunch& g);
GemmTiling gemm_tiling(const GemmLaunch& g);
// One dense GEMM kernel of M×N×K at `precision` as `g` launches it: grid (N tiles, M tiles), its
// arithmetic and its accesses over operands `o`. Returns the kernel id.
uint32_t emit_gemm(Builder& b, const std::string& name, KernelKind kind, int layer, uint64_t m, uint64_t n, uint64_t k,
                   Precision precision, const GemmLaunch& g, const GemmOperands& o, std::vector<uint32_t> deps = {});

}  // namespace indexsim::trace::detail
