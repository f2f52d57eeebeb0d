// SPDX-License-Identifier: Apache-2.0
// IndexPool's gated pooling and DimPrune's projection of the indexer keys.
//
// Pooling is memory-bound (a few FLOPs per byte): one warp per group of `ratio` rows, lanes across
// the dimension so every row read is coalesced, gate logits by warp reductions; the optional FP8
// output quantises each pooled row with its own scale in the same pass (pool before quantising).
// The projection is a skinny GEMM (K = dim_in ≤ 256, N = dim_out ≤ 128) over up to 1M rows: P stays
// in shared memory for the CTA's lifetime and 64-row tiles of x stream past it through m16n8k16
// BF16 MMAs.
#include <algorithm>
#include <string>

#include "kernels/common.cuh"
#include "kernels/cpu/numeric.hpp"

namespace indexsim::kernels {
namespace {

constexpr int kPoolThreads = 256;  // 8 groups per CTA
constexpr int kMaxDimPerLane = 8;  // dim ≤ 256

__global__ void __launch_bounds__(kPoolThreads) pool_kernel(PoolArgs a, CtaStamp* stamps) {
  dev::Stamp stamp(stamps);
  const int lane = threadIdx.x & 31;
  const int64_t groups = (a.n + a.ratio - 1) / a.ratio;
  const int64_t g = int64_t(blockIdx.x) * (kPoolThreads / 32) + (threadIdx.x >> 5);
  if (g < groups) {
    const int64_t first = g * a.ratio;
    const int len = int(a.n - first < a.ratio ? a.n - first : int64_t(a.ratio));
    const float* gv = a.softmax_gate ? a.gate_w : a.gate_w + a.dim;  // weights on v
    float hdot = 0.0f;
    if (!a.softmax_gate && a.h)
      for (int d = lane; d < a.dim; d += 32) hdot += a.gate_w[d] * a.h[d];
    hdot = dev::warp_sum(hdot);
    // Logits of the group's rows: lane i keeps row i's (ratio ≤ 32).
    float z_mine = -INFINITY;
    for (int i = 0; i < len; ++i) {
      const float* v = a.rows + (first + i) * a.dim;
      float z = 0.0f;
      for (int d = lane; d < a.dim; d += 32) z += gv[d] * v[d];
      z = dev::warp_sum(z);
      z += a.softmax_gate ? (a.ape ? a.ape[i] : 0.0f) : hdot + a.gate_b;
      if (lane == i) z_mine = z;
    }
    float wt;
    if (a.softmax_gate) {
      const float mx = dev::warp_max(z_mine);
      wt = lane < len ? expf(z_mine - mx) : 0.0f;
    } else {
      wt = lane < len ? 1.0f / (1.0f + expf(-z_mine)) : 0.0f;
    }
    const float wsum = dev::warp_sum(wt);
    float acc[kMaxDimPerLane];
#pragma unroll
    for (int j = 0; j < kMaxDimPerLane; ++j) acc[j] = 0.0f;
    for (int i = 0; i < len; ++i) {
      const float c = __shfl_sync(0xffffffffu, wt, i) / wsum;
      const float* v = a.rows + (first + i) * a.dim;
#pragma unroll
      for (int j = 0; j < kMaxDimPerLane; ++j)
        if (lane + 32 * j < a.dim) acc[j] += c * v[lane + 32 * j];
    }
    float amax = 0.0f;
#pragma unroll
    for (int j = 0; j < kMaxDimPerLane; ++j)
      if (lane + 32 * j < a.dim) {
        a.out[g * a.dim + lane + 32 * j] = acc[j];
        amax = fmaxf(amax, fabsf(acc[j]));
      }
    if (a.out_fp8) {
      amax = dev::warp_max(amax);
      const float scale = amax > 0.0f ? amax / num::kFp8E4M3Max : 1.0f;
#pragma unroll
      for (int j = 0; j < kMaxDimPerLane; ++j)
        if (lane + 32 * j < a.dim) a.out_fp8[g * a.dim + lane + 32 * j] = num::float_to_fp8_e4m3(acc[j] / scale);
      if (lane == 0) a.out_scale[g] = scale;
    }
  }
  stamp.end(stamps);
}

constexpr int kProjThreads = 128;  // 4 warps × 16 rows
constexpr int kProjRows = 64;
constexpr int kProjMaxNt = 16;     // dim_out ≤ 128

struct ProjParams {
  ProjectArgs a;
  int row_bytes, pitch, n_tiles;
};

__global__ void __launch_bounds__(kProjThreads) project_kernel(ProjParams p, CtaStamp* stamps) {
  dev::Stamp stamp(stamps);
  extern __shared__ __align__(16) uint8_t smem[];
  const ProjectArgs a = p.a;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, g = lane >> 2, t = lane & 3;
  uint8_t* ps = smem;                         // dim_out × pitch
  uint8_t* xs = ps + a.dim_out * p.pitch;     // kProjRows × pitch
  const int chunks = p.row_bytes / 16;
  const uint8_t* pt = reinterpret_cast<const uint8_t*>(a.pt);
  for (int c = threadIdx.x; c < a.dim_out * chunks; c += kProjThreads)
    dev::cp_async16(ps + (c / chunks) * p.pitch + (c % chunks) * 16, pt + size_t(c) * 16, true);
  const uint8_t* x = reinterpret_cast<const uint8_t*>(a.x);
  const int nt = a.dim_out / 8;
  for (int tile = blockIdx.x; tile < p.n_tiles; tile += gridDim.x) {  // persistent: P loaded once
    for (int c = threadIdx.x; c < kProjRows * chunks; c += kProjThreads) {
      const int64_t r = int64_t(tile) * kProjRows + c / chunks;
      dev::cp_async16(xs + (c / chunks) * p.pitch + (c % chunks) * 16,
                      x + (r < a.n ? r : 0) * p.row_bytes + (c % chunks) * 16, r < a.n);
    }
    dev::cp_async_commit();
    dev::cp_async_wait<0>();
    __syncthreads();
    float acc[kProjMaxNt][4];
#pragma unroll
    for (int j = 0; j < kProjMaxNt; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[j][e] = 0.0f;
    for (int kb = 0; kb < p.row_bytes; kb += 32) {
      uint32_t af[4];
      dev::load_a(af, xs, p.pitch, warp * 16, kb, lane);
#pragma unroll
      for (int j = 0; j < kProjMaxNt; ++j)
        if (j < nt) {
          uint32_t b[2];
          dev::load_b(b, ps, p.pitch, j * 8, kb, lane);
          dev::mma<dev::Mma::bf16>(acc[j], af, b);
        }
    }
    const int64_t r0 = int64_t(tile) * kProjRows + warp * 16 + g;
#pragma unroll
    for (int j = 0; j < kProjMaxNt; ++j)
      if (j < nt) {
        const int col = j * 8 + 2 * t;
        if (r0 < a.n) *reinterpret_cast<float2*>(a.y + r0 * a.dim_out + col) = make_float2(acc[j][0], acc[j][1]);
        if (r0 + 8 < a.n)
          *reinterpret_cast<float2*>(a.y + (r0 + 8) * a.dim_out + col) = make_float2(acc[j][2], acc[j][3]);
      }
    __syncthreads();  // xs is overwritten by the next tile
  }
  dev::cp_async_commit();  // a CTA without tiles still has P's copies outstanding
  dev::cp_async_wait<0>();
  stamp.end(stamps);
}

}  // namespace

Plan plan_gated_pool(const PoolArgs& a) {
  if (a.ratio < 1 || a.ratio > 32) throw std::invalid_argument("plan_gated_pool: ratio must be in [1, 32]");
  if (a.dim < 1 || a.dim > 32 * kMaxDimPerLane) throw std::invalid_argument("plan_gated_pool: dim must be in [1, 256]");
  if (a.out_fp8 && !a.out_scale) throw std::invalid_argument("plan_gated_pool: out_fp8 needs out_scale");
  const int64_t groups = (a.n + a.ratio - 1) / a.ratio;
  Step st;
  st.info.name = a.softmax_gate ? "pool_softmax" : "pool_sigmoid";
  st.info.kind = "pool";
  st.info.grid = {uint32_t(std::max<int64_t>(1, (groups + 7) / 8)), 1, 1};
  st.info.block = {kPoolThreads, 1, 1};
  st.info.simt_flops = double(a.n) * a.dim * 4;  // gate dot product and weighted sum: 2 FMAs per element
  set_resources(st.info, reinterpret_cast<const void*>(&pool_kernel), 0);
  const uint32_t grid = st.info.grid[0];
  st.launch = [a, grid](cudaStream_t s, CtaStamp* stamps) {
    pool_kernel<<<grid, kPoolThreads, 0, s>>>(a, stamps);
    check(cudaGetLastError(), "pool launch");
  };
  return {st};
}

Plan plan_project(const ProjectArgs& a) {
  if (a.dim_in % 16 || a.dim_in < 16 || a.dim_in > 256)
    throw std::invalid_argument("plan_project: dim_in must be a multiple of 16 in [16, 256], got " + std::to_string(a.dim_in));
  if (a.dim_out % 8 || a.dim_out < 8 || a.dim_out > 8 * kProjMaxNt)
    throw std::invalid_argument("plan_project: dim_out must be a multiple of 8 in [8, 128], got " + std::to_string(a.dim_out));
  ProjParams p{a, a.dim_in * 2, a.dim_in * 2 + 16, int((a.n + kProjRows - 1) / kProjRows)};
  const uint32_t smem = uint32_t((a.dim_out + kProjRows) * p.pitch);
  Step st;
  st.info.name = "project_bf16";
  st.info.kind = "project";
  st.info.grid = {uint32_t(std::clamp<int64_t>(p.n_tiles, 1, int64_t(sm_count()) * 4)), 1, 1};
  st.info.block = {kProjThreads, 1, 1};
  st.info.tensor_flops_bf16 = 2.0 * double(a.n) * a.dim_in * a.dim_out;
  set_resources(st.info, reinterpret_cast<const void*>(&project_kernel), smem);
  const uint32_t grid = st.info.grid[0];
  st.launch = [p, grid, smem](cudaStream_t s, CtaStamp* stamps) {
    project_kernel<<<grid, kProjThreads, smem, s>>>(p, stamps);
    check(cudaGetLastError(), "project launch");
  };
  return {st};
}

}  // namespace indexsim::kernels
