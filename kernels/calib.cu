// SPDX-License-Identifier: Apache-2.0
// Plan plumbing, and the calibration kernels: a streaming copy (bandwidth) and a cuBLAS BF16 GEMM
// (tensor throughput). Their measured times pin the memory and tensor models of the simulator.
#include <cublas_v2.h>

#include <memory>
#include <string>

#include "kernels/common.cuh"
#include "kernels/cpu/numeric.hpp"

namespace indexsim::kernels {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw CudaError(std::string(what) + ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")");
}

static void check_cublas(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS) throw CudaError(std::string(what) + ": cuBLAS status " + std::to_string(int(s)));
}

int sm_count() {
  int dev = 0, n = 0;
  check(cudaGetDevice(&dev), "cudaGetDevice");
  check(cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, dev), "cudaDeviceGetAttribute(SM count)");
  return n;
}

void set_resources(LaunchInfo& info, const void* kernel, uint32_t dyn_smem) {
  if (dyn_smem > 48 * 1024)
    check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(dyn_smem)),
          "cudaFuncSetAttribute(max dynamic shared memory)");
  cudaFuncAttributes fa{};
  check(cudaFuncGetAttributes(&fa, kernel), "cudaFuncGetAttributes");
  info.regs_per_thread = uint32_t(fa.numRegs);
  info.smem_bytes = uint32_t(fa.sharedSizeBytes) + dyn_smem;
}

void run(const Plan& plan, cudaStream_t stream, const std::vector<CtaStamp*>* stamps) {
  for (size_t i = 0; i < plan.size(); ++i) plan[i].launch(stream, stamps ? (*stamps)[i] : nullptr);
}

const char* to_string(KeyType t) { return t == KeyType::fp8 ? "fp8" : t == KeyType::fp16 ? "fp16" : "bf16"; }
int key_bytes(KeyType t) { return t == KeyType::fp8 ? 1 : 2; }

namespace {

constexpr int kCopyThreads = 256, kCopyUnroll = 8;  // 32 KiB per CTA, 8 loads in flight per thread

__global__ void __launch_bounds__(kCopyThreads) copy_kernel(int4* dst, const int4* src, uint64_t n16, CtaStamp* stamps) {
  dev::Stamp stamp(stamps);
  const uint64_t base = uint64_t(blockIdx.x) * kCopyThreads * kCopyUnroll + threadIdx.x;
  int4 v[kCopyUnroll];
#pragma unroll
  for (int u = 0; u < kCopyUnroll; ++u) {
    const uint64_t i = base + uint64_t(u) * kCopyThreads;
    if (i < n16) v[u] = __ldcs(src + i);  // streaming: the data is touched once
  }
#pragma unroll
  for (int u = 0; u < kCopyUnroll; ++u) {
    const uint64_t i = base + uint64_t(u) * kCopyThreads;
    if (i < n16) __stcs(dst + i, v[u]);
  }
  stamp.end(stamps);
}

__global__ void __launch_bounds__(kCopyThreads) read_kernel(uint32_t* out, const int4* src, uint64_t n16, CtaStamp* stamps) {
  dev::Stamp stamp(stamps);
  const uint64_t base = uint64_t(blockIdx.x) * kCopyThreads * kCopyUnroll + threadIdx.x;
  uint32_t x = 0;
#pragma unroll
  for (int u = 0; u < kCopyUnroll; ++u) {
    const uint64_t i = base + uint64_t(u) * kCopyThreads;
    if (i < n16) {
      const int4 v = __ldcs(src + i);
      x ^= uint32_t(v.x) ^ uint32_t(v.y) ^ uint32_t(v.z) ^ uint32_t(v.w);
    }
  }
  for (int o = 16; o > 0; o >>= 1) x ^= __shfl_xor_sync(0xffffffffu, x, o);
  __shared__ uint32_t warp_x[kCopyThreads / 32];
  if ((threadIdx.x & 31) == 0) warp_x[threadIdx.x / 32] = x;
  __syncthreads();
  if (threadIdx.x == 0) {
    uint32_t t = 0;
    for (int w = 0; w < kCopyThreads / 32; ++w) t ^= warp_x[w];
    out[blockIdx.x] = t;
  }
  stamp.end(stamps);
}

__device__ __forceinline__ uint64_t mix64(uint64_t x) {  // splitmix64 finaliser
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

__global__ void fill_kernel(void* dst, uint64_t count, FillFormat fmt, uint64_t seed, float sd) {
  for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < count; i += uint64_t(gridDim.x) * blockDim.x) {
    const uint64_t h = mix64(seed * 0x9e3779b97f4a7c15ull + i);
    const float u1 = (float(uint32_t(h >> 40)) + 0.5f) * (1.0f / 16777216.0f);  // (0, 1)
    const float u2 = float(uint32_t(h) & 0xffffffu) * (1.0f / 16777216.0f);
    const float z = sd * sqrtf(-2.0f * logf(u1)) * cospif(2.0f * u2);  // Box-Muller
    switch (fmt) {
      case FillFormat::fp32: static_cast<float*>(dst)[i] = z; break;
      case FillFormat::bf16: static_cast<uint16_t*>(dst)[i] = num::float_to_bf16(z); break;
      case FillFormat::fp16: static_cast<uint16_t*>(dst)[i] = num::float_to_fp16(z, true); break;
      case FillFormat::fp8: static_cast<uint8_t*>(dst)[i] = num::float_to_fp8_e4m3(z); break;
    }
  }
}

}  // namespace

void fill_normal(void* dst, uint64_t count, FillFormat fmt, uint64_t seed, float sd, cudaStream_t stream) {
  if (count == 0) return;
  const uint64_t blocks = std::min<uint64_t>((count + 255) / 256, uint64_t(sm_count()) * 32);
  fill_kernel<<<uint32_t(blocks), 256, 0, stream>>>(dst, count, fmt, seed, sd);
  check(cudaGetLastError(), "fill launch");
}

namespace {

// The copy and the read stream share their shape: 16-byte vectors, one 32 KiB chunk per CTA.
Step stream_step(const char* name, const void* kernel, uint64_t bytes) {
  static_assert(kStreamCtaBytes == uint64_t(kCopyThreads) * kCopyUnroll * 16, "a CTA's chunk");
  Step st;
  st.info.name = name;
  st.info.kind = name;
  st.info.grid = {uint32_t(std::max<uint64_t>(1, (bytes + kStreamCtaBytes - 1) / kStreamCtaBytes)), 1, 1};
  st.info.block = {kCopyThreads, 1, 1};
  set_resources(st.info, kernel, 0);
  return st;
}

}  // namespace

Plan plan_copy(void* dst, const void* src, uint64_t bytes) {
  if (bytes % 16 || reinterpret_cast<uintptr_t>(dst) % 16 || reinterpret_cast<uintptr_t>(src) % 16)
    throw std::invalid_argument("plan_copy: pointers and size must be 16-byte aligned");
  const uint64_t n16 = bytes / 16;
  Step st = stream_step("copy", reinterpret_cast<const void*>(&copy_kernel), bytes);
  const uint32_t grid = st.info.grid[0];
  st.launch = [=](cudaStream_t s, CtaStamp* stamps) {
    copy_kernel<<<grid, kCopyThreads, 0, s>>>(static_cast<int4*>(dst), static_cast<const int4*>(src), n16, stamps);
    check(cudaGetLastError(), "copy launch");
  };
  return {st};
}

Plan plan_read(uint32_t* out, const void* src, uint64_t bytes) {
  if (bytes % 16 || reinterpret_cast<uintptr_t>(src) % 16)
    throw std::invalid_argument("plan_read: pointer and size must be 16-byte aligned");
  const uint64_t n16 = bytes / 16;
  Step st = stream_step("read", reinterpret_cast<const void*>(&read_kernel), bytes);
  const uint32_t grid = st.info.grid[0];
  st.launch = [=](cudaStream_t s, CtaStamp* stamps) {
    read_kernel<<<grid, kCopyThreads, 0, s>>>(out, static_cast<const int4*>(src), n16, stamps);
    check(cudaGetLastError(), "read launch");
  };
  return {st};
}

Plan plan_gemm_bf16(int m, int n, int k, const uint16_t* A, const uint16_t* B, uint16_t* C) {
  auto handle = std::shared_ptr<cublasHandle_t>(new cublasHandle_t, [](cublasHandle_t* h) {
    cublasDestroy(*h);
    delete h;
  });
  check_cublas(cublasCreate(handle.get()), "cublasCreate");
  Step st;
  st.info.name = "gemm_bf16_cublas";
  st.info.kind = "gemm";
  // cuBLAS chooses its kernel; the grid below assumes 128 × 256 output tiles (Hopper's usual BF16
  // tile), for the trace only.
  st.info.grid = {uint32_t((m + 127) / 128), uint32_t((n + 255) / 256), 1};
  st.info.block = {384, 1, 1};
  st.info.tensor_flops_bf16 = 2.0 * m * double(n) * k;
  st.info.stamped = false;
  st.launch = [=](cudaStream_t s, CtaStamp*) {
    const float alpha = 1.0f, beta = 0.0f;
    check_cublas(cublasSetStream(*handle, s), "cublasSetStream");
    check_cublas(cublasGemmEx(*handle, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, A, CUDA_R_16BF, m, B, CUDA_R_16BF,
                              k, &beta, C, CUDA_R_16BF, m, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
                 "cublasGemmEx");
  };
  return {st};
}

}  // namespace indexsim::kernels
