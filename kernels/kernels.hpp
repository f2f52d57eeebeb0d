// SPDX-License-Identifier: Apache-2.0
// Host interface of the CUDA kernels of the attention path (library indexsim_kernels_cuda).
//
// Each operation is planned once for a shape (`plan_*`) and then run any number of times. A plan is
// a list of steps, one kernel launch each, so that the capture harness can time every kernel
// separately (CUDA events between steps) while the steps keep running in their real order. The
// kernels compute what kernels/cpu/reference.hpp defines; tests/cuda/ checks that on a GPU.
//
// All pointers in the argument structs are device pointers. Layouts are row-major.
#pragma once

#include <cuda_runtime.h>

#include <array>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace indexsim::kernels {

class CudaError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
void check(cudaError_t e, const char* what);  // throws CudaError naming `what` and the CUDA error

// One CTA's SM and its start / end on the GPU's global timer (%smid, %globaltimer, in ns),
// written by every kernel launched with a non-null stamp buffer. Indexed by linear CTA id.
struct CtaStamp {
  uint32_t sm = 0;
  uint32_t pad = 0;
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
};

// What one launch is, for the trace: shape, resources and the arithmetic it does.
struct LaunchInfo {
  std::string name;  // e.g. "indexer_score_fp8"
  std::string kind;  // the trace's kernel kind: indexer_score, topk, sparse_attn, pool, project, copy, gemm
  std::array<uint32_t, 3> grid{1, 1, 1};
  std::array<uint32_t, 3> block{1, 1, 1};
  uint32_t smem_bytes = 0;
  uint32_t regs_per_thread = 0;
  double tensor_flops_fp8 = 0, tensor_flops_bf16 = 0, tensor_flops_fp16 = 0, simt_flops = 0;
  double warp_instructions = 0;  // whole kernel, from the counts in traces/kernel_geometry.hpp; 0: not known
  bool stamped = true;     // false for library kernels (cuBLAS) that cannot record their CTAs
  uint64_t cta_count() const { return uint64_t(grid[0]) * grid[1] * grid[2]; }
};

struct Step {
  LaunchInfo info;
  std::function<void(cudaStream_t, CtaStamp*)> launch;  // stamps: null, or cta_count() entries
};
using Plan = std::vector<Step>;

// Runs every step in order on `stream`. stamps: null, or one buffer per step (each cta_count()).
void run(const Plan& plan, cudaStream_t stream, const std::vector<CtaStamp*>* stamps = nullptr);

// Number of SMs of the current device, read once per plan (grids are sized from it).
int sm_count();

enum class KeyType { fp8, fp16, bf16 };
const char* to_string(KeyType t);
int key_bytes(KeyType t);

// Indexer scores I(s) = Σ_h w[h] · ReLU(q[h] · k[s]) · scale[s] for every key s of each query's
// sequence (DeepSeek's lightning indexer; DeepGEMM's fp8_paged_mqa_logits is the production model).
// Tensor cores: m16n8k32 E4M3 or m16n8k16 FP16/BF16, heads × 64-key tiles, 2-stage cp.async.
struct IndexerArgs {
  KeyType type = KeyType::fp8;
  const void* q = nullptr;            // nq × heads × dim, in `type` (FP8: the query scale is folded into w)
  const float* w = nullptr;           // nq × heads
  const void* keys = nullptr;         // contiguous: seqs × n × dim; paged: pages × 64 × dim
  const float* key_scale = nullptr;   // per key, same indexing as keys (rows); null = 1
  const int32_t* block_table = nullptr;  // paged: seqs × ceil(n / 64) page ids; null = contiguous
  int64_t n = 0;                      // keys per sequence
  int nq = 1, heads = 64, dim = 128;  // heads: multiple of 16, at most 64; dim · bytes: multiple of 32, ≤ 256
  int q_per_seq = 1;                  // queries per sequence (1 in decode, the chunk in prefill)
  int64_t causal_base = -1;           // ≥ 0: query i sees keys s ≤ causal_base + i % q_per_seq (others -inf)
  float* out = nullptr;               // nq × n
};
Plan plan_indexer_score(const IndexerArgs& a);
constexpr int kIndexerPageTokens = 64;

// Top-k of each row of scores: indices of the k largest, by descending score, ties by lower index;
// -1 past the row's length. Radix select over all CTAs of the row (three digit passes of
// histograms), an ordered collection of the threshold ties, then a bitonic sort of the k winners.
struct TopkArgs {
  const float* scores = nullptr;  // rows × n
  int rows = 1;
  int64_t n = 0;
  int k = 2048;                   // ≤ 4096
  int32_t* out = nullptr;         // rows × k
  void* workspace = nullptr;      // topk_workspace_bytes()
};
size_t topk_workspace_bytes(int rows, int64_t n, int k);
Plan plan_topk(const TopkArgs& a);

// Gated pooling of `ratio` consecutive rows (kernels/cpu/reference.hpp gated_pool), one warp per
// group; optionally also writes the pooled rows as FP8 E4M3 with one scale per row (pool, then
// quantise: one scale per pooled entry).
struct PoolArgs {
  const float* rows = nullptr;  // n × dim
  int64_t n = 0;
  int dim = 128;
  int ratio = 4;                // ≤ 32
  bool softmax_gate = false;
  const float* gate_w = nullptr;  // sigmoid: 2·dim ([h; v]); softmax: dim
  float gate_b = 0.0f;
  const float* ape = nullptr;     // softmax: ratio values or null
  const float* h = nullptr;       // sigmoid: dim values or null (zeros)
  float* out = nullptr;           // ceil(n / ratio) × dim
  uint8_t* out_fp8 = nullptr;     // optional: ceil(n / ratio) × dim codes
  float* out_scale = nullptr;     // with out_fp8: ceil(n / ratio) scales
};
Plan plan_gated_pool(const PoolArgs& a);

// The dimension-pruning projection y = x · P with x: n × dim_in BF16 and P given transposed,
// pt: dim_out × dim_in BF16 (nn.Linear's weight layout); y: n × dim_out FP32. m16n8k16 BF16 MMA,
// 64-row tiles, P resident in shared memory.
struct ProjectArgs {
  const uint16_t* x = nullptr;
  const uint16_t* pt = nullptr;
  int64_t n = 0;
  int dim_in = 128;   // multiple of 16, ≤ 256
  int dim_out = 64;   // multiple of 8, ≤ 128
  float* y = nullptr;
};
Plan plan_project(const ProjectArgs& a);

// Sparse MLA decode attention over selected rows (FlashMLA-sparse-like): per query, softmax over
// the selected rows of scale · q·k and the weighted sum of their first 512 columns (V = the latent
// part of K). BF16 queries, FP32 output. 64-head blocks, 32-row gathered tiles (cp.async, two
// stages), m16n8k16 BF16 MMA for Q·Kᵀ and P·V, online softmax, split-KV plus a combine kernel.
// KV rows are BF16 (576 × 2 = 1152 B) or FlashMLA's FP8 layout (656 B: 512 E4M3 latent values,
// 4 FP32 scales, one per 128 values, then 64 BF16 RoPE values), dequantised to BF16 in shared
// memory (value = bf16(e4m3 · scale)).
constexpr int kAttnDk = 576, kAttnDv = 512;
constexpr int kKvFp8RowBytes = 656, kKvBf16RowBytes = 1152;
enum class KvFormat { bf16, fp8 };
struct SparseAttnArgs {
  const uint16_t* q = nullptr;    // nq × heads × 576
  const void* kv = nullptr;       // rows × row bytes of kv_format (the KV cache, flat)
  KvFormat kv_format = KvFormat::bf16;
  const int32_t* idx = nullptr;   // nq × topk row ids, -1 = invalid
  int64_t kv_rows_per_query = 0;  // query i reads row idx + i · this (a batch of per-sequence caches)
  int nq = 1, heads = 64;         // heads: multiple of 16
  int topk = 2048;
  float scale = 0.0f;             // usually 1/sqrt(576)
  float* out = nullptr;           // nq × heads × 512
  void* workspace = nullptr;      // sparse_attn_workspace_bytes()
  int splits = 0;                 // 0: chosen from the SM count
};
int sparse_attn_splits(const SparseAttnArgs& a);
size_t sparse_attn_workspace_bytes(const SparseAttnArgs& a);
Plan plan_sparse_attn(const SparseAttnArgs& a);

// Calibration kernels: a 16-byte-vector copy (dst and src 16-byte aligned, bytes multiple of 16),
// and an M×N×K BF16 GEMM through cuBLAS (FP32 accumulation, BF16 out), column-major as cuBLAS is.
Plan plan_copy(void* dst, const void* src, uint64_t bytes);
// A read-only stream over the same CTA chunks as the copy (32 KiB of 16-byte streaming loads each):
// CTA c writes the XOR of the 32-bit words of its chunk to out[c], 4 B per 32 KiB read, which keeps
// the loads live without writing what they read. Same alignment rules as plan_copy.
constexpr uint64_t kStreamCtaBytes = 32 * 1024;
Plan plan_read(uint32_t* out, const void* src, uint64_t bytes);

// Seeded Gaussian test data written on the GPU in a storage format (a counter-based hash per
// element, so the same seed gives the same bytes whatever the launch shape). FP8 values are
// N(0, sd) encoded with saturation; choose sd to spread them over the E4M3 range.
enum class FillFormat { fp32, bf16, fp16, fp8 };
void fill_normal(void* dst, uint64_t count, FillFormat fmt, uint64_t seed, float sd, cudaStream_t stream);
Plan plan_gemm_bf16(int m, int n, int k, const uint16_t* A, const uint16_t* B, uint16_t* C);

}  // namespace indexsim::kernels
