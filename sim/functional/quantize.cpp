// SPDX-License-Identifier: Apache-2.0
#include "sim/functional/quantize.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "kernels/cpu/reference.hpp"

namespace indexsim::sim::functional {

namespace cpu = kernels::cpu;

namespace {
constexpr float kE2M1Max = 6.0f;
}

const char* name(Format f) {
  switch (f) {
    case Format::fp32: return "fp32";
    case Format::fp16: return "fp16";
    case Format::bf16: return "bf16";
    case Format::fp8_e4m3: return "fp8_e4m3";
    case Format::fp4_e2m1: return "fp4_e2m1";
  }
  return "?";
}

Format parse_format(const std::string& s) {
  for (Format f : {Format::fp32, Format::fp16, Format::bf16, Format::fp8_e4m3, Format::fp4_e2m1})
    if (s == name(f)) return f;
  throw std::invalid_argument("format '" + s + "': must be one of fp32, fp16, bf16, fp8_e4m3, fp4_e2m1");
}

float round_e2m1(float x) {
  const float a = std::fabs(x);
  if (!(a < kE2M1Max)) return std::copysign(kE2M1Max, x);
  // One mantissa bit and a smallest exponent of 0: the step is 2^(max(floor(log2 a), 0) - 1),
  // which also covers the subnormal 0.5. Dividing by a power of two is exact, so rint rounds the
  // true value, to even on ties (the default rounding mode).
  int ex;
  std::frexp(a, &ex);
  const int step_exp = std::max(ex - 1, 0) - 1;
  return std::copysign(std::ldexp(std::rint(std::ldexp(a, -step_exp)), step_exp), x);
}

std::vector<float> store_and_load(const float* x, int64_t rows, int dim, Format f) {
  const int64_t n = rows * dim;
  switch (f) {
    case Format::fp32: return std::vector<float>(x, x + n);
    case Format::fp16: return cpu::round_fp16(x, n);
    case Format::bf16: return cpu::round_bf16(x, n);
    case Format::fp8_e4m3: return cpu::dequantize_rows_fp8(cpu::quantize_rows_fp8(x, rows, dim), dim);
    case Format::fp4_e2m1: {
      std::vector<float> out(static_cast<size_t>(n));
      for (int64_t r = 0; r < rows; ++r) {
        const float* xr = x + r * dim;
        float amax = 0;
        for (int j = 0; j < dim; ++j) amax = std::max(amax, std::fabs(xr[j]));
        const float scale = amax > 0 ? amax / kE2M1Max : 1.0f;
        for (int j = 0; j < dim; ++j) out[size_t(r * dim + j)] = round_e2m1(xr[j] / scale) * scale;
      }
      return out;
    }
  }
  throw std::invalid_argument("store_and_load: unknown format");
}

double plain_value_bytes(Format f, const char* what) {
  if (f == Format::fp32) return 4;
  if (f == Format::fp16) return 2;
  throw std::invalid_argument(std::string(what) + " precision '" + name(f) + "': must be fp16 or fp32");
}

Stored quantize_keys(const float* keys, int64_t tokens, int dim, Format f) {
  Stored s = Stored::per_token(store_and_load(keys, tokens, dim, f), tokens, dim);
  switch (f) {
    case Format::fp32: s.bytes_per_value = 4; break;
    case Format::fp16:
    case Format::bf16: s.bytes_per_value = 2; break;
    case Format::fp8_e4m3: s.bytes_per_value = 1; s.extra_bytes = 4.0 * double(tokens); break;
    case Format::fp4_e2m1: s.bytes_per_value = 0.5; s.extra_bytes = 4.0 * double(tokens); break;
  }
  return s;
}

}  // namespace indexsim::sim::functional
