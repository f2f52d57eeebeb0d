// SPDX-License-Identifier: Apache-2.0
// The emulated attention kernels (internal to the generators): the project's radix top-k
// (kernels/topk.cu) and split-KV sparse MLA (kernels/sparse_attn.cu's geometry), emitted by the step emulator for every sparse layer and by
// the standalone decode benchmark.
#pragma once

#include "traces/generators/trace_builder.hpp"
#include "traces/launch_limits.hpp"

namespace indexsim::trace::detail {

// Top-k of every query's logits row as the project's radix select runs it (kernels/topk.cu,
// geometry in traces/kernel_geometry.hpp): every pass spreads each row over 4096-score chunks,
// one CTA each, so a million-entry row keeps the whole GPU busy. Rows are as long as the last
// query sees (the kernel scans a fixed n per row). Kernels: init, 3 x (histogram, pick), count of
// the threshold ties, ordered collection, bitonic sort of the k winners.
struct RadixTopk {
  std::string name_prefix;          // of the kernels' names ("L3." + "topk_init", ...)
  int layer = -1;
  uint64_t rows = 0, entries = 0;   // logits rows, and the entries each row scans
  uint64_t kt = 0, row4 = 0;        // entries selected a row; bytes from one logits row to the next
  uint32_t logits = 0, workspace = 0, indices = 0;
};
struct RadixTopkKernels {
  uint32_t sort = 0;                // the last kernel: it writes the indices
  uint64_t workspace_bytes = 0;     // a row's state, histogram, tie counts and winners, for every row
};
RadixTopkKernels radix_topk(Builder& b, const RadixTopk& a);

// Decode indexer scoring as DeepGEMM's fp8_paged_mqa_logits runs it (sm90 kernel and its schedule
// metadata; docs/library-heuristics.md §3): a persistent grid of one CTA per SM; every sequence's
// entries are cut into 256-token splits (4 math warpgroups x 64-token pages), and the flattened
// (sequence, split) list is shared out evenly, SM i taking splits [i·q + min(i, r), ...) of
// q = total / SMs, r = total % SMs. 128 TMA + 512 math threads; shared memory: three query stages
// and three 64-token key stages per math warpgroup (the main terms of its smem formula).
struct PagedMqaLogits {
  std::string name;
  int layer = -1;
  uint64_t batch = 1, queries = 1;            // sequences, and new tokens a sequence
  uint64_t heads = 0, head_dim = 0, entry_dim = 0, entry_bytes = 0;
  uint64_t capacity = 0, entries = 0, row4 = 0;  // entries a sequence's cache holds, those scored; a logits row's bytes
  uint32_t q = 0, cache = 0, logits = 0;
  std::vector<uint32_t> deps;
};
uint64_t paged_mqa_smem(const PagedMqaLogits& a);
void paged_mqa_logits(Builder& b, const PagedMqaLogits& a, const LaunchLimits& lim);

// One sparse MLA attention over selected KV rows, for `batch` sequences of `q_per_seq` queries; the
// queries of one q-tile of a sequence share rows[s · tiles + j].
struct SparseMla {
  std::string name;
  int layer = -1;
  uint64_t heads = 0, batch = 1, q_per_seq = 1, q_tile = 64, context = 0;
  uint64_t kv_row_bytes = 0, d_latent = 512, d_rope = 64, index_entries = 0;
  Precision compute = Precision::bf16;
  uint32_t kv = 0, indices = 0, q = 0, out = 0, workspace = 0;
  std::vector<uint32_t> deps;
  const std::vector<std::vector<uint32_t>>* rows = nullptr;
};

// Sparse MLA decode/prefill over the selected rows as the project's split-KV kernel runs it
// (kernels/sparse_attn.cu, geometry in traces/kernel_geometry.hpp; FlashMLA's sparse decode splits
// the same way): a CTA owns 64 heads of one query and one split of its selected rows; with more
// than one split, a combine kernel merges the partial outputs. Grid (head blocks x splits,
// queries) as CUDA launches it, CTAs numbered as geometry::sparse_attn_cta says (CUDA's order for
// decode-sized grids). Returns the workspace bytes it needs.
uint64_t sparse_mla(Builder& b, const SparseMla& a, const LaunchLimits& lim);

}  // namespace indexsim::trace::detail
