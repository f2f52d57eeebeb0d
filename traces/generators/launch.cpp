// SPDX-License-Identifier: Apache-2.0
#include "traces/generators/launch.hpp"

#include <numeric>
#include <stdexcept>
#include <vector>

namespace indexsim::trace {

namespace {

uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

// DeepGEMM's FP8 GEMM (deepseek-ai/DeepGEMM deep_gemm/jit_kernels/gemm.py get_best_configs @ c4a7116,
// kernel fp8_gemm.cuh @ 07ef809): BLOCK_K 128; the block pair with the fewest waves over the SMs,
// ties to the fuller last wave; the deepest pipeline that fits 232448 B; TMA multicast of 2 from
// m >= 512; a persistent grid of the fewest SMs that keeps the wave count.
GemmLaunch deepgemm(const GemmProblem& p, const LaunchLimits& lim) {
  const uint32_t sms = lim.units;
  const bool contiguous = p.layout == GemmLayout::grouped_contiguous;
  const bool masked = p.layout == GemmLayout::grouped_masked;
  const uint64_t m = contiguous ? p.m * p.groups : p.m;  // contiguous: the groups' rows back to back
  const uint32_t groups = contiguous ? 1 : p.groups;
  std::vector<uint32_t> block_ms = contiguous ? std::vector<uint32_t>{128} : std::vector<uint32_t>{64, 128, 256};
  std::vector<uint32_t> block_ns;
  for (uint32_t bn = 16; bn <= 128; bn += 8) block_ns.push_back(bn);
  block_ns.push_back(144);
  block_ns.push_back(160);
  auto tiles = [&](uint32_t bm, uint32_t bn) { return ceil_div(m, bm) * ceil_div(p.n, bn) * groups; };
  auto waves = [&](uint32_t bm, uint32_t bn) { return ceil_div(tiles(bm, bn), sms); };
  auto last_util = [&](uint32_t bm, uint32_t bn) {
    const uint64_t r = tiles(bm, bn) % sms;
    return r == 0 ? uint64_t(sms) : r;
  };
  uint32_t best_m = 0, best_n = 0;
  for (uint32_t bm : block_ms)
    for (uint32_t bn : block_ns) {
      if (bm > 128 && bn > 128) continue;  // at most one side above 128
      bool take = best_m == 0;
      if (!take) {
        const uint64_t w = waves(bm, bn), bw = waves(best_m, best_n);
        if (w < bw) {
          take = true;
        } else if (w == bw) {
          const uint64_t u = last_util(bm, bn), bu = last_util(best_m, best_n);
          take = u > bu;
          if (u == bu)
            take = (bm == best_m && bn < best_n) || (bn == best_n && bm < best_m) || (bm != best_m && bn > best_n);
        }
      }
      if (take) best_m = bm, best_n = bn;
    }
  GemmLaunch g;
  g.library = "deepgemm-fp8";
  g.block_m = best_m;
  g.block_n = best_n;
  g.block_k = 128;
  // Stages: the deepest of 8..1 (no more than K blocks) that fits; 4..1 when a tile's B scales
  // alternate (128 / gcd(128, BN) <= 4 unrolls that many variants).
  const uint64_t kblocks = std::max<uint64_t>(p.k / 128, 1);
  const uint32_t top = (128 % best_n != 0 && 128 / std::gcd(128u, best_n) <= 4) ? 4 : 8;
  const uint64_t capacity = std::min<uint64_t>(lim.smem_per_cta_bytes, 232448);
  for (uint32_t s = top; s >= 1; --s) {
    if (s > kblocks) continue;
    if (deepgemm_smem_bytes(s, p.k, best_m, best_n) <= capacity) {
      g.stages = s;
      break;
    }
  }
  if (g.stages == 0)
    throw std::invalid_argument("deepgemm fp8 gemm " + std::to_string(p.m) + "x" + std::to_string(p.n) + "x" +
                                std::to_string(p.k) + ": one pipeline stage of a " + std::to_string(best_m) + "x" +
                                std::to_string(best_n) + " tile needs " +
                                std::to_string(deepgemm_smem_bytes(1, p.k, best_m, best_n)) +
                                " B of shared memory, the device allows " + std::to_string(capacity) + " per CTA");
  g.smem_bytes = deepgemm_smem_bytes(g.stages, p.k, best_m, best_n);
  // One TMA warpgroup and one math warpgroup per 64 rows; registers reconfigured to 40 (TMA) and
  // 232 (math), one CTA per SM (__launch_bounds__(threads, 1)).
  const uint32_t math_wg = best_m == 64 ? 1 : 2;
  g.threads = 128 + 128 * math_wg;
  g.regs_per_thread = (40 * 128 + 232 * 128 * math_wg) / g.threads;
  // Multicast: cluster of 2 on the larger block side first, from m >= 512 (masked: A only, with an
  // even number of N blocks).
  const bool legal_a = (!masked || ceil_div(p.n, best_n) % 2 == 0) && sms % 2 == 0;
  const bool legal_b = sms % 2 == 0 && !masked;
  const bool a_first = best_m > best_n;
  for (int i = 0; i < 2 && m >= 512; ++i) {
    const bool on_a = (i == 0) == a_first;
    if (on_a ? legal_a : legal_b) {
      g.multicast = 2;
      g.multicast_on_a = on_a;
      break;
    }
  }
  g.tiles = tiles(best_m, best_n);
  const uint64_t min_sms = ceil_div(ceil_div(g.tiles, waves(best_m, best_n)), g.multicast) * g.multicast;
  g.persistent_ctas = uint32_t(min_sms);
  g.promotion = true;
  return g;
}

// CUTLASS-style tiles for the other precisions (cuBLAS's own heuristics are closed): Hopper wgmma
// 128x256x64 with 3 warpgroups, Ampere mma.sync 128x256x32 with 8 warps (CUTLASS's default
// large-tile configurations); decode shapes (m <= 64) take wgmma's smallest M, 64, and the block N
// of the fewest waves, as vLLM's SM90 dispatch does for M <= 64 (64x16 / 64x64 tiles, swap-AB).
GemmLaunch cutlass(const GemmProblem& p, const LaunchLimits& lim) {
  GemmLaunch g;
  g.library = "cutlass";
  const uint32_t bits = p.precision == Precision::fp8 ? 8 : p.precision == Precision::fp4 ? 4
                        : (p.precision == Precision::fp32 || p.precision == Precision::tf32 || p.precision == Precision::simt) ? 32 : 16;
  const uint64_t m = p.layout == GemmLayout::grouped_contiguous ? p.m * p.groups : p.m;
  const uint32_t groups = p.layout == GemmLayout::grouped_contiguous ? 1 : p.groups;
  g.block_k = lim.warpgroup_mma ? 64 : 32;
  g.threads = lim.warpgroup_mma ? 384 : 256;
  g.regs_per_thread = lim.warpgroup_mma ? 168 : 232;
  if (m <= 64) {
    g.block_m = 64;
    g.block_n = 16;
    uint64_t best_w = UINT64_MAX;
    for (uint32_t bn : {16u, 32u, 64u, 128u}) {
      const uint64_t w = ceil_div(ceil_div(p.n, bn) * groups, lim.units);
      if (w < best_w || (w == best_w && bn > g.block_n)) best_w = w, g.block_n = bn;
    }
  } else {
    g.block_m = 128;
    g.block_n = 256;
  }
  const uint64_t stage = uint64_t(g.block_m + g.block_n) * g.block_k * bits / 8;
  const uint64_t fit = lim.smem_per_cta_bytes / std::max<uint64_t>(stage, 1);
  g.stages = uint32_t(std::min<uint64_t>(lim.warpgroup_mma ? 4 : 3, fit));
  if (g.stages == 0)
    throw std::invalid_argument("cutlass gemm: one pipeline stage of a " + std::to_string(g.block_m) + "x" +
                                std::to_string(g.block_n) + " tile needs " + std::to_string(stage) +
                                " B of shared memory, the device allows " + std::to_string(lim.smem_per_cta_bytes));
  g.smem_bytes = stage * g.stages;
  g.tiles = ceil_div(m, g.block_m) * ceil_div(p.n, g.block_n) * groups;
  return g;
}

}  // namespace

uint64_t deepgemm_smem_bytes(uint32_t stages, uint64_t k, uint32_t block_m, uint32_t block_n) {
  const uint64_t d = uint64_t(block_m) * block_n * 2;                // BF16 output tile
  const uint64_t per_stage = uint64_t(block_m) * 128 + uint64_t(block_m) * 4 + uint64_t(block_n) * 128;
  uint64_t scales_b = ceil_div(k, 128) * 4 * (128 % block_n == 0 ? 1 : 2);
  scales_b = (scales_b + 7) / 8 * 8;
  return d + stages * per_stage + scales_b + uint64_t(stages) * 16;
}

GemmLaunch plan_gemm(const GemmProblem& p, const LaunchLimits& lim) {
  if (p.m == 0 || p.n == 0 || p.k == 0 || p.groups == 0)
    throw std::invalid_argument("gemm m, n, k and groups must be > 0");
  if (p.precision == Precision::fp8 && lim.warpgroup_mma && lim.native[size_t(Precision::fp8)])
    return deepgemm(p, lim);
  return cutlass(p, lim);
}

}  // namespace indexsim::trace
