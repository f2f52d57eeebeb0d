// SPDX-License-Identifier: Apache-2.0
// Quantize's functional model: keys stored in a narrower format and loaded back. FP16/BF16 and
// FP8 E4M3 with one FP32 scale per token are the kernels' own conversions (kernels/cpu); FP4 E2M1
// (values 0, 0.5, 1, 1.5, 2, 3, 4, 6) with one FP32 scale per token, scale = max|x| / 6, is here.
// All round to nearest, ties to even.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/functional/stored.hpp"

namespace indexsim::sim::functional {

enum class Format { fp32, fp16, bf16, fp8_e4m3, fp4_e2m1 };

const char* name(Format f);
Format parse_format(const std::string& s);   // throws std::invalid_argument naming the choices

// One value rounded to E2M1 (saturating at ±6).
float round_e2m1(float x);

// Rows stored in `f` and loaded back as float (per-row scale for fp8 and fp4).
std::vector<float> store_and_load(const float* x, int64_t rows, int dim, Format f);

// Bytes of one value stored as fp32 or fp16, the two precisions pooled and pruned keys may be kept
// in; anything else throws, naming `what`.
double plain_value_bytes(Format f, const char* what);

Stored quantize_keys(const float* keys, int64_t tokens, int dim, Format f);

}  // namespace indexsim::sim::functional
