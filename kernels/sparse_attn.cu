// SPDX-License-Identifier: Apache-2.0
// Sparse MLA decode attention over the top-k selected KV rows, shaped like FlashMLA's sparse
// decode: a CTA owns 64 heads of one query and a contiguous share (split) of its selected rows.
// 32-row tiles are gathered by index into shared memory (cp.async, two stages, invalid rows
// zero-filled and masked). Eight warps: warp w owns heads 16·(w % 4) .. +15 and, for P·V, value
// columns 256·(w / 4) .. +255, so the 64 × 512 FP32 output accumulator fits in registers
// (128 per thread). Q·Kᵀ is split over keys between the two warps of a head group and exchanged
// through shared memory; the online softmax keeps a running max and sum per head. Splits write a
// normalised partial output and its log-sum-exp, and a combine kernel merges them.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <algorithm>
#include <string>

#include "kernels/common.cuh"
#include "kernels/cpu/numeric.hpp"
#include "traces/kernel_geometry.hpp"

namespace indexsim::kernels {
namespace {

// Tiles, threads and shared memory come from traces/kernel_geometry.hpp, which the emulated traces
// read too (a captured and an emulated trace of one shape describe the same launches).
namespace geo = trace::geometry;
constexpr int kHb = geo::kAttnHeadsPerCta;   // heads per CTA
constexpr int kTile = geo::kAttnTileRows;    // gathered rows per tile
constexpr int kThreads = geo::kAttnThreads;
constexpr int kRowBytes = kAttnDk * 2;     // 1152
constexpr int kPitch = kRowBytes + 16;     // 1168: rows 4 banks apart, conflict-free fragments
constexpr int kChunks = kRowBytes / 16;    // 72 cp.async per row
constexpr int kSPitch = kTile + 1;         // floats
constexpr int kPPitch = (kTile + 8) * 2;   // bytes: 80, rows 20 banks apart
constexpr int kNt = kAttnDv / 2 / 8;       // 32 n8 tiles of value columns per warp

constexpr size_t kQsBytes = size_t(kHb) * kPitch;
constexpr size_t kKsBytes = size_t(2) * kTile * kPitch;
constexpr size_t kSsBytes = size_t(kHb) * kSPitch * 4;
constexpr size_t kPsBytes = size_t(kHb) * kPPitch;
constexpr size_t kSmem = kQsBytes + kKsBytes + kSsBytes + kPsBytes + 3 * kHb * 4 + 2 * kTile * 4;
// FP8 rows are gathered raw into two staging stages and dequantised into one BF16 tile.
constexpr int kF8Chunks = kKvFp8RowBytes / 16;  // 41
constexpr size_t kStageBytes = size_t(kTile) * kKvFp8RowBytes;
constexpr size_t kSmemFp8 = kSmem - kKsBytes / 2 + 2 * kStageBytes;
static_assert(kSmem == geo::kAttnSmemBf16 && kSmemFp8 == geo::kAttnSmemFp8, "kernel_geometry.hpp: shared memory");
static_assert(kAttnDk == geo::kAttnDk && kAttnDv == geo::kAttnDv && kKvFp8RowBytes == geo::kKvFp8RowBytes &&
                  kKvBf16RowBytes == geo::kKvBf16RowBytes,
              "kernel_geometry.hpp: row layout");

struct AttnParams {
  SparseAttnArgs a;
  int splits, per_split;
  float* o_part;    // nq × splits × heads × 512
  float* lse_part;  // nq × splits × heads
};

// Two E4M3 codes (the low byte first) to two scaled BF16 values (packed low first). From sm_89 on,
// the hardware chain e4m3x2 -> f16x2 -> f32, times the scale, -> bf16x2: the chain whose cost the
// simulator charges (hardware fp8_dequant_cycles_per_value). The first two steps are exact and the
// last rounds to nearest even, as num::float_to_bf16 does, so the CPU reference's bits still match.
__device__ __forceinline__ uint32_t dequant2(uint16_t codes, float scale) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
  const __half2_raw h = __nv_cvt_fp8x2_to_halfraw2(static_cast<__nv_fp8x2_storage_t>(codes), __NV_E4M3);
  const float2 f = __half22float2(__half2(h));
  const __nv_bfloat162 r = __floats2bfloat162_rn(f.x * scale, f.y * scale);
  return *reinterpret_cast<const uint32_t*>(&r);
#else
  const uint16_t lo = num::float_to_bf16(num::fp8_e4m3_to_float(uint8_t(codes)) * scale);
  const uint16_t hi = num::float_to_bf16(num::fp8_e4m3_to_float(uint8_t(codes >> 8)) * scale);
  return uint32_t(lo) | (uint32_t(hi) << 16);
#endif
}

template <bool kFp8>
__global__ void __launch_bounds__(kThreads, 1) sparse_attn_kernel(AttnParams p, CtaStamp* stamps) {
  dev::Stamp stamp(stamps);
  extern __shared__ __align__(16) uint8_t smem[];
  const SparseAttnArgs a = p.a;
  uint8_t* qs = smem;
  uint8_t* ks = qs + kQsBytes;
  // FP8: one BF16 tile, then the raw staging stages
  uint8_t* raw = ks + (kFp8 ? kKsBytes / 2 : kKsBytes);
  float* ss = reinterpret_cast<float*>(raw + (kFp8 ? 2 * kStageBytes : 0));
  uint8_t* ps = reinterpret_cast<uint8_t*>(ss) + kSsBytes;
  float* ms = reinterpret_cast<float*>(ps + kPsBytes);
  float* ls = ms + kHb;
  float* as = ls + kHb;
  int* idx_s = reinterpret_cast<int*>(as + kHb);  // 2 stages × kTile

  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, g = lane >> 2, t = lane & 3;
  const int mt = warp & 3, half = warp >> 2;
  const int qi = blockIdx.y;
  const int hb = blockIdx.x / p.splits, split = blockIdx.x % p.splits;
  const int head0 = hb * kHb;
  const int begin = split * p.per_split;
  const int end = min(begin + p.per_split, a.topk);
  const int ntiles = end > begin ? (end - begin + kTile - 1) / kTile : 0;

  const uint8_t* qg = reinterpret_cast<const uint8_t*>(a.q);
  for (int c = threadIdx.x; c < kHb * kChunks; c += kThreads) {
    const int r = c / kChunks, head = head0 + r;
    const bool valid = head < a.heads;
    dev::cp_async16(qs + r * kPitch + (c % kChunks) * 16,
                    qg + (valid ? (size_t(qi) * a.heads + head) * kRowBytes : 0) + (c % kChunks) * 16, valid);
  }
  if (threadIdx.x < kHb) {
    ms[threadIdx.x] = -INFINITY;
    ls[threadIdx.x] = 0.0f;
  }
  constexpr int src_row_bytes = kFp8 ? kKvFp8RowBytes : kRowBytes;
  constexpr int src_chunks = kFp8 ? kF8Chunks : kChunks;
  const uint8_t* kv = static_cast<const uint8_t*>(a.kv) + size_t(qi) * a.kv_rows_per_query * src_row_bytes;
  const int32_t* idx = a.idx + size_t(qi) * a.topk;
  auto load_tile = [&](int tile, int stage) {
    const int j0 = begin + tile * kTile;
    for (int c = threadIdx.x; c < kTile * src_chunks; c += kThreads) {
      const int r = c / src_chunks, j = j0 + r;
      const int row = j < end ? idx[j] : -1;
      uint8_t* dst = kFp8 ? raw + stage * kStageBytes + r * kKvFp8RowBytes + (c % src_chunks) * 16
                          : ks + (stage * kTile + r) * kPitch + (c % src_chunks) * 16;
      dev::cp_async16(dst, kv + (row >= 0 ? size_t(row) * src_row_bytes : 0) + (c % src_chunks) * 16, row >= 0);
    }
    if (threadIdx.x < kTile) {
      const int j = j0 + threadIdx.x;
      idx_s[stage * kTile + threadIdx.x] = j < end ? idx[j] : -1;
    }
  };

  float o[kNt][4];
#pragma unroll
  for (int j = 0; j < kNt; ++j)
#pragma unroll
    for (int e = 0; e < 4; ++e) o[j][e] = 0.0f;

  if (ntiles > 0) load_tile(0, 0);
  dev::cp_async_commit();
  for (int tile = 0; tile < ntiles; ++tile) {
    const int stage = tile & 1;
    dev::cp_async_wait<0>();
    __syncthreads();  // tile landed; every warp is past the P·V that read the other stage
    if (tile + 1 < ntiles) load_tile(tile + 1, stage ^ 1);
    dev::cp_async_commit();
    const uint8_t* kt = ks + (kFp8 ? 0 : stage * kTile * kPitch);
    if constexpr (kFp8) {
      // Dequantise the raw rows: 8 latent values per step (one 16-byte BF16 store), then RoPE.
      const uint8_t* src = raw + stage * kStageBytes;
      for (int c = threadIdx.x; c < kTile * (kAttnDv / 8); c += kThreads) {
        const int r = c / (kAttnDv / 8), col = (c % (kAttnDv / 8)) * 8;
        const uint8_t* row = src + r * kKvFp8RowBytes;
        const float scale = reinterpret_cast<const float*>(row + kAttnDv)[col / 128];
        const uint2 codes = *reinterpret_cast<const uint2*>(row + col);
        uint32_t packed[4];
#pragma unroll
        for (int e = 0; e < 4; ++e)
          packed[e] = dequant2(uint16_t((e < 2 ? codes.x : codes.y) >> ((e & 1) * 16)), scale);
        *reinterpret_cast<uint4*>(ks + r * kPitch + col * 2) = make_uint4(packed[0], packed[1], packed[2], packed[3]);
      }
      for (int c = threadIdx.x; c < kTile * 8; c += kThreads) {  // 64 BF16 RoPE values = 8 × 16 bytes
        const int r = c / 8, part = c % 8;
        *reinterpret_cast<uint4*>(ks + r * kPitch + kAttnDv * 2 + part * 16) =
            *reinterpret_cast<const uint4*>(src + r * kKvFp8RowBytes + kAttnDv + 16 + part * 16);
      }
      __syncthreads();
    }

    // S = scale · Q Kᵀ for heads of mt, keys 16·half .. +15.
    {
      float s[2][4] = {{0, 0, 0, 0}, {0, 0, 0, 0}};
#pragma unroll 4
      for (int kb = 0; kb < kRowBytes; kb += 32) {
        uint32_t af[4], b[2];
        dev::load_a(af, qs, kPitch, mt * 16, kb, lane);
#pragma unroll
        for (int j = 0; j < 2; ++j) {
          dev::load_b(b, kt, kPitch, half * 16 + j * 8, kb, lane);
          dev::mma<dev::Mma::bf16>(s[j], af, b);
        }
      }
#pragma unroll
      for (int j = 0; j < 2; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int row = mt * 16 + g + (e >= 2 ? 8 : 0);
          const int key = half * 16 + j * 8 + 2 * t + (e & 1);
          ss[row * kSPitch + key] = idx_s[stage * kTile + key] >= 0 ? s[j][e] * a.scale : -INFINITY;
        }
    }
    __syncthreads();

    // Online softmax, one warp per head group: two lanes per head, 16 keys each.
    if (half == 0) {
      const int row = mt * 16 + (lane >> 1), kh = lane & 1;
      float v[kTile / 2];
      float mx = -INFINITY;
#pragma unroll
      for (int c = 0; c < kTile / 2; ++c) {
        v[c] = ss[row * kSPitch + kh * (kTile / 2) + c];
        mx = fmaxf(mx, v[c]);
      }
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
      const float m_old = ms[row], m_new = fmaxf(m_old, mx);
      const bool none = m_new == -INFINITY;
      const float alpha = none ? 1.0f : expf(m_old - m_new);
      float psum = 0.0f;
      uint16_t* prow = reinterpret_cast<uint16_t*>(ps + row * kPPitch) + kh * (kTile / 2);
#pragma unroll
      for (int c = 0; c < kTile / 2; ++c) {
        const float pc = none ? 0.0f : expf(v[c] - m_new);
        psum += pc;
        prow[c] = num::float_to_bf16(pc);
      }
      psum += __shfl_xor_sync(0xffffffffu, psum, 1);
      if (kh == 0) {
        ms[row] = m_new;
        ls[row] = ls[row] * alpha + psum;
        as[row] = alpha;
      }
    }
    __syncthreads();

    // O = alpha · O + P V over value columns 256·half .. +255; V = the first 512 columns of K.
    {
      const float a0 = as[mt * 16 + g], a1 = as[mt * 16 + g + 8];
#pragma unroll
      for (int j = 0; j < kNt; ++j) {
        o[j][0] *= a0;
        o[j][1] *= a0;
        o[j][2] *= a1;
        o[j][3] *= a1;
      }
#pragma unroll
      for (int kstep = 0; kstep < kTile / 16; ++kstep) {
        uint32_t pa[4];
        dev::load_a(pa, ps, kPPitch, mt * 16, kstep * 32, lane);
        const int mi = lane >> 3;
        const int key = kstep * 16 + (mi & 1) * 8 + (lane & 7);
#pragma unroll
        for (int jj = 0; jj < kNt / 2; ++jj) {
          const int col = half * (kAttnDv / 2) + jj * 16 + (mi >> 1) * 8;
          uint32_t r[4];
          dev::ldmatrix_x4_trans(r, kt + key * kPitch + col * 2);
          const uint32_t b0[2] = {r[0], r[1]}, b1[2] = {r[2], r[3]};
          dev::mma<dev::Mma::bf16>(o[2 * jj], pa, b0);
          dev::mma<dev::Mma::bf16>(o[2 * jj + 1], pa, b1);
        }
      }
    }
  }
  dev::cp_async_wait<0>();
  __syncthreads();  // ms/ls are final (and initialised, for a CTA without tiles)

  const int r0 = mt * 16 + g;
#pragma unroll
  for (int hi = 0; hi < 2; ++hi) {
    const int r = r0 + hi * 8, head = head0 + r;
    if (head < a.heads) {
      const float l = ls[r];
      const float inv = l > 0.0f ? 1.0f / l : 0.0f;
      float* dst = p.splits == 1 ? a.out + (size_t(qi) * a.heads + head) * kAttnDv
                                 : p.o_part + ((size_t(qi) * p.splits + split) * a.heads + head) * kAttnDv;
#pragma unroll
      for (int j = 0; j < kNt; ++j) {
        const int col = half * (kAttnDv / 2) + j * 8 + 2 * t;
        *reinterpret_cast<float2*>(dst + col) = make_float2(o[j][hi * 2] * inv, o[j][hi * 2 + 1] * inv);
      }
      if (p.splits > 1 && half == 0 && t == 0)
        p.lse_part[(size_t(qi) * p.splits + split) * a.heads + head] = l > 0.0f ? ms[r] + logf(l) : -INFINITY;
    }
  }
  stamp.end(stamps);
}

constexpr int kCombineThreads = geo::kAttnCombineThreads;

// out = Σ_s e^(lse_s − max) · O_s / Σ_s e^(lse_s − max); zeros when no split saw a valid row.
__global__ void __launch_bounds__(kCombineThreads) sparse_attn_combine(AttnParams p, CtaStamp* stamps) {
  dev::Stamp stamp(stamps);
  const int head = blockIdx.x, qi = blockIdx.y, heads = p.a.heads;
  const float* lse = p.lse_part + size_t(qi) * p.splits * heads + head;
  float mx = -INFINITY;
  for (int s = 0; s < p.splits; ++s) mx = fmaxf(mx, lse[size_t(s) * heads]);
  float acc[kAttnDv / kCombineThreads] = {};
  float wsum = 0.0f;
  if (mx != -INFINITY) {
    for (int s = 0; s < p.splits; ++s) {
      const float w = expf(lse[size_t(s) * heads] - mx);
      wsum += w;
      const float* src = p.o_part + ((size_t(qi) * p.splits + s) * heads + head) * kAttnDv;
#pragma unroll
      for (int j = 0; j < kAttnDv / kCombineThreads; ++j) acc[j] += w * src[threadIdx.x + j * kCombineThreads];
    }
  }
  float* dst = p.a.out + (size_t(qi) * heads + head) * kAttnDv;
#pragma unroll
  for (int j = 0; j < kAttnDv / kCombineThreads; ++j)
    dst[threadIdx.x + j * kCombineThreads] = wsum > 0.0f ? acc[j] / wsum : 0.0f;
  stamp.end(stamps);
}

int ceil_div(int a, int b) { return (a + b - 1) / b; }

}  // namespace

int sparse_attn_splits(const SparseAttnArgs& a) {
  return geo::sparse_attn_splits(a.topk, a.heads, a.nq, sm_count(), a.splits);
}

size_t sparse_attn_workspace_bytes(const SparseAttnArgs& a) {
  const int splits = sparse_attn_splits(a);
  return splits == 1 ? 0 : size_t(a.nq) * splits * a.heads * (kAttnDv + 1) * sizeof(float);
}

Plan plan_sparse_attn(const SparseAttnArgs& a) {
  if (a.heads <= 0 || a.heads % 16)
    throw std::invalid_argument("plan_sparse_attn: heads must be a positive multiple of 16, got " + std::to_string(a.heads));
  if (a.topk <= 0 || a.nq <= 0) throw std::invalid_argument("plan_sparse_attn: topk and nq must be positive");
  AttnParams p{a, sparse_attn_splits(a), 0, nullptr, nullptr};
  p.per_split = geo::sparse_attn_rows_per_split(a.topk, p.splits);
  if (p.splits > 1) {
    if (!a.workspace) throw std::invalid_argument("plan_sparse_attn: split-KV needs sparse_attn_workspace_bytes()");
    p.o_part = static_cast<float*>(a.workspace);
    p.lse_part = p.o_part + size_t(a.nq) * p.splits * a.heads * kAttnDv;
  }
  Plan plan;
  Step st;
  st.info.name = a.kv_format == KvFormat::fp8 ? "sparse_attn_fp8kv" : "sparse_attn_bf16";
  st.info.kind = "sparse_attn";
  const int hblocks = ceil_div(a.heads, kHb);
  st.info.grid = {uint32_t(hblocks * p.splits), uint32_t(a.nq), 1};
  st.info.block = {kThreads, 1, 1};
  // Every CTA computes 64 head rows, also past `heads`: count what the tensor cores execute.
  st.info.tensor_flops_bf16 = 2.0 * a.nq * hblocks * kHb * double(a.topk) * (kAttnDk + kAttnDv);
  st.info.simt_flops = 4.0 * a.nq * a.heads * double(a.topk);
  const bool fp8 = a.kv_format == KvFormat::fp8;
  st.info.warp_instructions = double(st.info.cta_count()) * geo::sparse_attn_warp_insts(p.per_split / kTile, fp8);
  const size_t smem = fp8 ? kSmemFp8 : kSmem;
  set_resources(st.info,
                fp8 ? reinterpret_cast<const void*>(&sparse_attn_kernel<true>)
                    : reinterpret_cast<const void*>(&sparse_attn_kernel<false>),
                uint32_t(smem));
  const dim3 grid(st.info.grid[0], st.info.grid[1]);
  st.launch = [p, grid, fp8, smem](cudaStream_t s, CtaStamp* stamps) {
    if (fp8)
      sparse_attn_kernel<true><<<grid, kThreads, smem, s>>>(p, stamps);
    else
      sparse_attn_kernel<false><<<grid, kThreads, smem, s>>>(p, stamps);
    check(cudaGetLastError(), "sparse_attn launch");
  };
  plan.push_back(st);
  if (p.splits > 1) {
    Step c;
    c.info.name = "sparse_attn_combine";
    c.info.kind = "sparse_attn";
    c.info.grid = {uint32_t(a.heads), uint32_t(a.nq), 1};
    c.info.block = {uint32_t(kCombineThreads), 1, 1};
    c.info.simt_flops = 2.0 * a.nq * a.heads * double(p.splits) * kAttnDv;
    c.info.warp_instructions = double(c.info.cta_count()) * geo::sparse_attn_combine_warp_insts(p.splits);
    set_resources(c.info, reinterpret_cast<const void*>(&sparse_attn_combine), 0);
    const dim3 cgrid(c.info.grid[0], c.info.grid[1]);
    c.launch = [p, cgrid](cudaStream_t s, CtaStamp* stamps) {
      sparse_attn_combine<<<cgrid, kCombineThreads, 0, s>>>(p, stamps);
      check(cudaGetLastError(), "sparse_attn_combine launch");
    };
    plan.push_back(c);
  }
  return plan;
}

}  // namespace indexsim::kernels
