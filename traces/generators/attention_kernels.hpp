// SPDX-License-Identifier: Apache-2.0
// The emulated attention kernels (internal to the generators): the project's split-KV sparse MLA
// (kernels/sparse_attn.cu's geometry), emitted by the step emulator for every sparse layer and by
// the standalone decode benchmark.
#pragma once

#include "traces/generators/trace_builder.hpp"
#include "traces/launch_limits.hpp"

namespace indexsim::trace::detail {

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
