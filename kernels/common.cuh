// SPDX-License-Identifier: Apache-2.0
// Device helpers shared by the kernels: CTA stamps, cp.async, and the mma.sync fragments.
//
// Fragment layout used throughout (PTX ISA, "Matrix fragments for mma.m16n8k16 / m16n8k32"): with
// lane = 4·g + t, an A tile (16 rows × 32 bytes of K) is held as four 32-bit registers
//   a0 = A[g][4t .. 4t+3 bytes], a1 = A[g+8][4t ..], a2 = A[g][16+4t ..], a3 = A[g+8][16+4t ..]
// and a B tile stored as N rows × 32 bytes of K ("col" layout) as
//   b0 = B[g][4t ..], b1 = B[g][16+4t ..]
// for both the 16-bit k16 shapes and the 8-bit k32 shape: the byte positions are the same, so one
// loader serves FP16, BF16 and FP8. The accumulator: c0, c1 = C[g][2t, 2t+1], c2, c3 = C[g+8][..].
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/kernels.hpp"

namespace indexsim::kernels::dev {

__device__ __forceinline__ uint64_t global_ns() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
__device__ __forceinline__ uint32_t sm_id() {
  uint32_t s;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
  return s;
}
__device__ __forceinline__ uint32_t linear_cta() {
  return blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
}

// Start stamp read by thread 0 at entry; end written after every thread of the CTA is done.
// Kernels that stamp must not return early (every thread reaches stamp_end).
struct Stamp {
  uint64_t t0 = 0;
  __device__ __forceinline__ explicit Stamp(const CtaStamp* s) {
    if (s && threadIdx.x == 0 && threadIdx.y == 0) t0 = global_ns();
  }
  __device__ __forceinline__ void end(CtaStamp* s) {
    if (!s) return;
    __syncthreads();
    if (threadIdx.x == 0 && threadIdx.y == 0) {
      CtaStamp r;
      r.sm = sm_id();
      r.start_ns = t0;
      r.end_ns = global_ns();
      s[linear_cta()] = r;
    }
  }
};

// 16-byte asynchronous global → shared copy; src_bytes = 0 zero-fills (out-of-range rows).
__device__ __forceinline__ void cp_async16(void* smem, const void* gmem, bool valid) {
  const uint32_t s = static_cast<uint32_t>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(gmem), "r"(valid ? 16 : 0));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

__device__ __forceinline__ uint32_t lds32(const uint8_t* p) { return *reinterpret_cast<const uint32_t*>(p); }

// A fragment of rows [row0, row0+16) at byte offset kb of a shared tile with `pitch` bytes per row.
__device__ __forceinline__ void load_a(uint32_t a[4], const uint8_t* tile, int pitch, int row0, int kb, int lane) {
  const int g = lane >> 2, t = lane & 3;
  const uint8_t* p = tile + (row0 + g) * pitch + kb + 4 * t;
  a[0] = lds32(p);
  a[1] = lds32(p + 8 * pitch);
  a[2] = lds32(p + 16);
  a[3] = lds32(p + 8 * pitch + 16);
}
// B fragment of rows (N) [row0, row0+8) at byte offset kb.
__device__ __forceinline__ void load_b(uint32_t b[2], const uint8_t* tile, int pitch, int row0, int kb, int lane) {
  const int g = lane >> 2, t = lane & 3;
  const uint8_t* p = tile + (row0 + g) * pitch + kb + 4 * t;
  b[0] = lds32(p);
  b[1] = lds32(p + 16);
}

enum class Mma { e4m3, f16, bf16 };

template <Mma M>
__device__ __forceinline__ void mma(float c[4], const uint32_t a[4], const uint32_t b[2]) {
  if constexpr (M == Mma::e4m3) {
    asm volatile(
        "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  } else if constexpr (M == Mma::f16) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  } else {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  }
}

// Four 8×8 16-bit matrices, transposed on the way (V stored keys × columns, read as the "col" B
// operand). Lane l gives the address of row l & 7 of matrix l >> 3.
__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t r[4], const void* smem_row) {
  const uint32_t s = static_cast<uint32_t>(__cvta_generic_to_shared(smem_row));
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(s));
}

__device__ __forceinline__ float warp_sum(float v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}
__device__ __forceinline__ float warp_max(float v) {
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

}  // namespace indexsim::kernels::dev

namespace indexsim::kernels {
// Fills the resource fields of `info` from the compiled kernel and raises its dynamic shared
// memory limit when it needs more than the default 48 KiB.
void set_resources(LaunchInfo& info, const void* kernel, uint32_t dyn_smem);
}  // namespace indexsim::kernels
