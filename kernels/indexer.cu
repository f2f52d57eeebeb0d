// SPDX-License-Identifier: Apache-2.0
// Lightning-indexer scores over the indexer cache. One CTA = one query × a run of 64-key tiles;
// the query's heads × dim block stays in shared memory while key tiles stream through a two-stage
// cp.async pipeline. Each of the 4 warps owns 16 keys of a tile and all heads, so the sum over
// heads of w_h · ReLU(q_h · k) is a register + shuffle reduction with no shared-memory round trip
// (DeepGEMM's fp8_paged_mqa_logits has the same shape of work: M = heads, N = keys, K = dim).
#include <algorithm>
#include <string>

#include "kernels/common.cuh"
#include "traces/kernel_geometry.hpp"

namespace indexsim::kernels {
namespace {

constexpr int kTile = kIndexerPageTokens;  // 64 keys: one page of a paged cache
constexpr int kThreads = 128;
constexpr int kMaxMt = 4;                  // up to 64 heads = 4 m16 tiles

struct IndexerParams {
  IndexerArgs a;
  int row_bytes, pitch, tiles_per_cta, n_tiles, pages_per_seq;
};

template <dev::Mma M>
__global__ void __launch_bounds__(kThreads) indexer_kernel(IndexerParams p, CtaStamp* stamps) {
  dev::Stamp stamp(stamps);
  extern __shared__ __align__(16) uint8_t smem[];
  const IndexerArgs a = p.a;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, g = lane >> 2, t = lane & 3;
  const int qi = blockIdx.y;
  const int seq = qi / a.q_per_seq;
  const int mt = a.heads / 16;
  uint8_t* qs = smem;                                   // heads × pitch
  uint8_t* ks = qs + a.heads * p.pitch;                 // 2 stages × kTile × pitch
  float* ws = reinterpret_cast<float*>(ks + 2 * kTile * p.pitch);  // heads

  const int chunks = p.row_bytes / 16;
  const uint8_t* qg = static_cast<const uint8_t*>(a.q) + size_t(qi) * a.heads * p.row_bytes;
  for (int c = threadIdx.x; c < a.heads * chunks; c += kThreads)
    dev::cp_async16(qs + (c / chunks) * p.pitch + (c % chunks) * 16, qg + size_t(c) * 16, true);
  for (int h = threadIdx.x; h < a.heads; h += kThreads) ws[h] = a.w[size_t(qi) * a.heads + h];

  const uint8_t* keys = static_cast<const uint8_t*>(a.keys);
  auto key_row = [&](int64_t s) -> int64_t {  // physical row of key s of this sequence
    if (a.block_table)
      return int64_t(a.block_table[int64_t(seq) * p.pages_per_seq + s / kTile]) * kTile + s % kTile;
    return int64_t(seq) * a.n + s;
  };
  auto load_tile = [&](int tile, int stage) {
    uint8_t* dst = ks + stage * kTile * p.pitch;
    for (int c = threadIdx.x; c < kTile * chunks; c += kThreads) {
      const int r = c / chunks;
      const int64_t s = int64_t(tile) * kTile + r;
      const bool valid = s < a.n;
      const uint8_t* src = keys + (valid ? key_row(s) : 0) * p.row_bytes + (c % chunks) * 16;
      dev::cp_async16(dst + r * p.pitch + (c % chunks) * 16, src, valid);
    }
  };

  const int tile0 = blockIdx.x * p.tiles_per_cta;
  const int tile_end = min(tile0 + p.tiles_per_cta, p.n_tiles);
  if (tile0 < tile_end) load_tile(tile0, 0);
  dev::cp_async_commit();

  for (int tile = tile0; tile < tile_end; ++tile) {
    const int stage = (tile - tile0) & 1;
    if (tile + 1 < tile_end) load_tile(tile + 1, stage ^ 1);
    dev::cp_async_commit();
    dev::cp_async_wait<1>();  // everything but the newest group (the prefetch) has landed
    __syncthreads();

    const uint8_t* kt = ks + stage * kTile * p.pitch;
    float acc[kMaxMt][2][4];
#pragma unroll
    for (int m = 0; m < kMaxMt; ++m)
#pragma unroll
      for (int j = 0; j < 2; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) acc[m][j][e] = 0.0f;

    for (int kb = 0; kb < p.row_bytes; kb += 32) {
      uint32_t b[2][2];
#pragma unroll
      for (int j = 0; j < 2; ++j) dev::load_b(b[j], kt, p.pitch, warp * 16 + j * 8, kb, lane);
#pragma unroll
      for (int m = 0; m < kMaxMt; ++m) {
        if (m < mt) {
          uint32_t af[4];
          dev::load_a(af, qs, p.pitch, m * 16, kb, lane);
#pragma unroll
          for (int j = 0; j < 2; ++j) dev::mma<M>(acc[m][j], af, b[j]);
        }
      }
    }

    // Rows of the accumulators are heads, columns keys: weight, ReLU, sum over the heads this
    // lane holds, then over the 8 lanes (g) that share a column.
    float part[2][2];
#pragma unroll
    for (int j = 0; j < 2; ++j)
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        float s = 0.0f;
#pragma unroll
        for (int m = 0; m < kMaxMt; ++m)
          if (m < mt)
            s += ws[m * 16 + g] * fmaxf(acc[m][j][e], 0.0f) + ws[m * 16 + g + 8] * fmaxf(acc[m][j][e + 2], 0.0f);
        s += __shfl_xor_sync(0xffffffffu, s, 4);
        s += __shfl_xor_sync(0xffffffffu, s, 8);
        s += __shfl_xor_sync(0xffffffffu, s, 16);
        part[j][e] = s;
      }
    if (g == 0) {
#pragma unroll
      for (int j = 0; j < 2; ++j)
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const int64_t s = int64_t(tile) * kTile + warp * 16 + j * 8 + 2 * t + e;
          if (s < a.n) {
            float v = part[j][e];
            if (a.key_scale) v *= a.key_scale[key_row(s)];
            if (a.causal_base >= 0 && s > a.causal_base + qi % a.q_per_seq) v = -INFINITY;
            a.out[int64_t(qi) * a.n + s] = v;
          }
        }
    }
    __syncthreads();  // the stage just read is the next prefetch's target
  }
  dev::cp_async_wait<0>();
  stamp.end(stamps);
}

}  // namespace

Plan plan_indexer_score(const IndexerArgs& a) {
  const int eb = key_bytes(a.type);
  const int row_bytes = a.dim * eb;
  if (a.heads <= 0 || a.heads % 16 || a.heads > 64)
    throw std::invalid_argument("plan_indexer_score: heads must be a multiple of 16 in [16, 64], got " +
                                std::to_string(a.heads));
  if (row_bytes % 32 || row_bytes > 256)
    throw std::invalid_argument("plan_indexer_score: dim × key bytes must be a multiple of 32 and ≤ 256, got " +
                                std::to_string(row_bytes));
  if (a.nq <= 0 || a.q_per_seq <= 0 || a.n < 0)
    throw std::invalid_argument("plan_indexer_score: nq and q_per_seq must be positive");
  IndexerParams p{a, row_bytes, row_bytes + 16, 1, int((a.n + kTile - 1) / kTile), int((a.n + kTile - 1) / kTile)};
  // Enough CTAs to fill every SM several times over; longer runs per CTA amortise the query load.
  const int64_t want_ctas = int64_t(sm_count()) * 8;
  p.tiles_per_cta = int(std::clamp<int64_t>(int64_t(p.n_tiles) * a.nq / std::max<int64_t>(want_ctas, 1), 1, 16));
  const uint32_t smem = uint32_t(a.heads * p.pitch + 2 * kTile * p.pitch + a.heads * 4);

  Step st;
  st.info.name = std::string("indexer_score_") + to_string(a.type);
  st.info.kind = "indexer_score";
  st.info.grid = {uint32_t(std::max(1, (p.n_tiles + p.tiles_per_cta - 1) / p.tiles_per_cta)), uint32_t(a.nq), 1};
  st.info.block = {kThreads, 1, 1};
  const double mac = double(a.nq) * a.heads * double(a.n) * a.dim;
  (a.type == KeyType::fp8 ? st.info.tensor_flops_fp8 : a.type == KeyType::fp16 ? st.info.tensor_flops_fp16
                                                                               : st.info.tensor_flops_bf16) = 2 * mac;
  st.info.simt_flops = 3.0 * a.nq * a.heads * double(a.n);
  if (a.type == KeyType::fp8)
    st.info.warp_instructions = double(st.info.cta_count()) * trace::geometry::indexer_fp8_warp_insts(a.heads, a.dim, p.tiles_per_cta);
  const void* fn = a.type == KeyType::fp8    ? reinterpret_cast<const void*>(&indexer_kernel<dev::Mma::e4m3>)
                   : a.type == KeyType::fp16 ? reinterpret_cast<const void*>(&indexer_kernel<dev::Mma::f16>)
                                             : reinterpret_cast<const void*>(&indexer_kernel<dev::Mma::bf16>);
  set_resources(st.info, fn, smem);
  const dim3 grid(st.info.grid[0], st.info.grid[1]);
  const KeyType type = a.type;
  st.launch = [p, grid, smem, type](cudaStream_t s, CtaStamp* stamps) {
    if (type == KeyType::fp8)
      indexer_kernel<dev::Mma::e4m3><<<grid, kThreads, smem, s>>>(p, stamps);
    else if (type == KeyType::fp16)
      indexer_kernel<dev::Mma::f16><<<grid, kThreads, smem, s>>>(p, stamps);
    else
      indexer_kernel<dev::Mma::bf16><<<grid, kThreads, smem, s>>>(p, stamps);
    check(cudaGetLastError(), "indexer_score launch");
  };
  return {st};
}

}  // namespace indexsim::kernels
