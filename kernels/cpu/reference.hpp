// SPDX-License-Identifier: Apache-2.0
// CPU references of the attention-path kernels. They define what the CUDA kernels must compute,
// and the functional (accuracy) models of the techniques run on them. Plain C++, float math.
//
// Layouts are row-major. "Keys" are indexer keys, one row of `dim` floats per token (or per pooled
// entry); queries have `heads` rows of `dim`.
#pragma once

#include <cstdint>
#include <vector>

namespace indexsim::kernels::cpu {

// I(s) = Σ_h w[h] · ReLU(q[h] · k[s]) for every key s (DeepSeek lightning-indexer score).
// q: heads × dim, w: heads, keys: n × dim. Returns n scores.
std::vector<float> indexer_scores(const float* q, const float* w, int heads, int dim, const float* keys,
                                  int64_t n);

// Indices of the min(k, n) largest scores, ordered by descending score, ties broken by lower index
// (-0 and +0 are equal). Scores must not be NaN.
std::vector<int32_t> topk(const std::vector<float>& scores, int k);

// Gated weighted pooling of `ratio` consecutive rows: out[g] = Σ_i w_i v_i / Σ_i w_i with
// w_i = sigmoid(gate_w · [h; v_i] + gate_b) (sigmoid gates) or a softmax over (gate_w · v_i + ape[i])
// (softmax gates). Rows are grouped along tokens (consecutive rows) or along vectors (the `ratio`
// vectors of one token are consecutive rows as well, so the arithmetic is the same; the axis only
// changes which rows the caller lays out together). A tail group shorter than `ratio` pools what it has.
enum class Gate { sigmoid, softmax };
struct PoolParams {
  int ratio = 4;
  Gate gate = Gate::sigmoid;
  std::vector<float> gate_w;   // sigmoid: 2*dim ([h; v]); softmax: dim
  float gate_b = 0.0f;
  std::vector<float> ape;      // softmax only: ratio position biases (may be empty)
  std::vector<float> h;        // sigmoid only: the current hidden state projected to dim (may be empty = zeros)
};
std::vector<float> gated_pool(const float* rows, int64_t n, int dim, const PoolParams& p);

// y = x · P for each row (n × dim_in) with P: dim_in × dim_out (the dimension-pruning projection).
std::vector<float> project(const float* x, int64_t n, int dim_in, const float* P, int dim_out);

// Sparse attention for one query token: softmax over the selected keys, weighted sum of values.
// q: heads × dk; K: rows × dk; V: rows × dv; idx: the selected rows (-1 = invalid, skipped).
// Returns heads × dv. Scores are scaled by `scale` (usually 1/sqrt(dk)). A head with no valid row
// returns zeros.
std::vector<float> sparse_attention(const float* q, int heads, int dk, const float* K, const float* V, int dv,
                                    const std::vector<int32_t>& idx, float scale);

// Per-row FP8 E4M3 storage as the serving engines keep the indexer cache: one FP32 scale per row,
// scale = max|x| / 448 (1 for an all-zero row), code = e4m3(x / scale) with round-to-nearest-even.
struct Fp8Rows {
  std::vector<uint8_t> codes;   // n × dim
  std::vector<float> scales;    // n
};
Fp8Rows quantize_rows_fp8(const float* x, int64_t n, int dim);
std::vector<float> dequantize_rows_fp8(const Fp8Rows& q, int dim);

// What the read-only stream kernel writes: for each chunk of `chunk_bytes` (the last may be
// shorter), the XOR of its little-endian 32-bit words. `bytes` must be a multiple of 4.
std::vector<uint32_t> xor_words_per_chunk(const uint8_t* data, uint64_t bytes, uint64_t chunk_bytes);

// Round every value through a 16-bit format and back (what storing in BF16 / FP16 does to it).
std::vector<float> round_bf16(const float* x, int64_t n);
std::vector<float> round_fp16(const float* x, int64_t n);

}  // namespace indexsim::kernels::cpu
