// SPDX-License-Identifier: Apache-2.0
// Storage formats of the attention path: FP8 E4M3 (OCP "E4M3FN": bias 7, max 448, no infinity,
// S.1111.111 = NaN), BF16 and FP16, converted with round-to-nearest-even. Header-only and usable
// from CUDA device code, so the kernels, their tests and the CPU references round identically.
//
// FP8 encoding always saturates to ±448 (the format has no infinity; this matches
// __nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E4M3)). BF16/FP16 overflow to infinity as IEEE
// and CUDA's __float2bfloat16_rn / __float2half_rn do, unless `saturate` asks for the largest
// finite value instead.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#define INDEXSIM_HD __host__ __device__ __forceinline__
#else
#define INDEXSIM_HD inline
#endif

namespace indexsim::kernels::num {

constexpr float kFp8E4M3Max = 448.0f;
constexpr float kFp16Max = 65504.0f;

INDEXSIM_HD uint32_t float_bits(float x) {
  uint32_t u;
  std::memcpy(&u, &x, 4);
  return u;
}
INDEXSIM_HD float bits_float(uint32_t u) {
  float x;
  std::memcpy(&x, &u, 4);
  return x;
}

// q = a / quantum rounded to nearest-even, for a quantum that is a power of two (exact scaling).
INDEXSIM_HD float rne_quanta(float a, int quantum_exp) { return rintf(ldexpf(a, -quantum_exp)); }

INDEXSIM_HD uint8_t float_to_fp8_e4m3(float x) {
  const uint8_t sign = (float_bits(x) >> 24) & 0x80;
  if (x != x) return sign | 0x7F;
  const float a = fabsf(x);
  if (a >= kFp8E4M3Max) return sign | 0x7E;
  int ex;
  frexpf(a, &ex);  // a = m * 2^ex, m in [0.5, 1): the unbiased exponent is ex - 1
  const int e = ex - 1;
  uint32_t code;
  if (a < 0.015625f) {  // below 2^-6: subnormal, quantum 2^-9; q = 8 lands exactly on the smallest normal
    code = uint32_t(rne_quanta(a, -9));
  } else {
    // q in [8, 16]; q = 16 carries into the next exponent, which the sum below does by itself
    code = uint32_t((e + 7) << 3) + uint32_t(rne_quanta(a, e - 3)) - 8u;
  }
  if (code > 0x7E) code = 0x7E;
  return uint8_t(sign | code);
}

INDEXSIM_HD float fp8_e4m3_to_float(uint8_t c) {
  const int E = (c >> 3) & 15, M = c & 7;
  float v;
  if (E == 15 && M == 7)
    v = NAN;
  else if (E == 0)
    v = ldexpf(float(M), -9);
  else
    v = ldexpf(float(8 + M), E - 10);
  return (c & 0x80) ? -v : v;
}

INDEXSIM_HD uint16_t float_to_bf16(float x, bool saturate = false) {
  uint32_t u = float_bits(x);
  if (x != x) return uint16_t((u >> 16) | 0x40);  // keep a quiet NaN
  u += 0x7FFFu + ((u >> 16) & 1u);
  uint16_t h = uint16_t(u >> 16);
  if (saturate && (h & 0x7FFF) == 0x7F80) h = uint16_t((h & 0x8000) | 0x7F7F);
  return h;
}

INDEXSIM_HD float bf16_to_float(uint16_t h) { return bits_float(uint32_t(h) << 16); }

INDEXSIM_HD uint16_t float_to_fp16(float x, bool saturate = false) {
  const uint16_t sign = uint16_t((float_bits(x) >> 16) & 0x8000);
  if (x != x) return sign | 0x7E00;
  const float a = fabsf(x);
  const uint16_t overflow = saturate ? 0x7BFF : 0x7C00;
  if (a > 65520.0f) return sign | overflow;  // 65520 is the midpoint above 65504; ties go to even = inf
  int ex;
  frexpf(a, &ex);
  const int e = ex - 1;
  uint32_t code;
  if (a < 6.103515625e-05f)  // below 2^-14: subnormal, quantum 2^-24
    code = uint32_t(rne_quanta(a, -24));
  else
    code = uint32_t((e + 15) << 10) + uint32_t(rne_quanta(a, e - 10)) - 1024u;
  if (code >= 0x7C00) code = overflow;
  return uint16_t(sign | code);
}

INDEXSIM_HD float fp16_to_float(uint16_t h) {
  const int E = (h >> 10) & 31, M = h & 1023;
  float v;
  if (E == 31)
    v = M ? NAN : INFINITY;
  else if (E == 0)
    v = ldexpf(float(M), -24);
  else
    v = ldexpf(float(1024 + M), E - 25);
  return (h & 0x8000) ? -v : v;
}

// A float mapped to an unsigned key with the same order (larger float, larger key); -0 maps to +0
// so that equal scores are equal keys. The GPU top-k selects on these keys.
INDEXSIM_HD uint32_t order_key(float x) {
  uint32_t u = x == 0.0f ? 0u : float_bits(x);
  return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

}  // namespace indexsim::kernels::num
