// SPDX-License-Identifier: Apache-2.0
// What a technique leaves in the indexer cache, in one form for all of them: a list of entries,
// each scored as one key and standing for a contiguous range of tokens. Per-token techniques
// (pruning, quantisation, pooling along `vectors`) have one entry per token whose key is the
// reconstruction the indexer effectively scores; pooling along `tokens` has one entry per group.
#pragma once

#include <cstdint>
#include <vector>

namespace indexsim::sim::functional {

struct Stored {
  int dim = 0;
  std::vector<float> keys;            // entries × dim, in the original key space
  std::vector<int64_t> begin;         // entries + 1 offsets: entry e covers tokens [begin[e], begin[e+1])
  std::vector<uint8_t> always;        // entries: 1 = always selected (the tail pool)
  double stored_values = 0;           // values kept in the cache (for the memory column)
  double bytes_per_value = 2;         // storage precision (fp16 unless quantised)
  double extra_bytes = 0;             // scales, a pruning basis, and so on (whole cache)
  int kept_dims = 0;                  // pruning: dimensions kept (0 = not pruned)

  int64_t entries() const { return int64_t(always.size()); }
  // One entry per token, its key the given reconstruction.
  static Stored per_token(std::vector<float> keys, int64_t tokens, int dim);
};

}  // namespace indexsim::sim::functional
