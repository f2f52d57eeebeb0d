// SPDX-License-Identifier: Apache-2.0
// The capture harness's L2 flush before each repetition (--flush-MiB, --flush-mode): a memset of the
// flush buffer leaves the L2 full of its dirty lines (later misses write them back), a read pass
// full of clean ones. The replay starts from the same state (sim/engine/capture_state.hpp).
#pragma once

#include <cstdint>
#include <string>

#include <cuda_runtime.h>

#include "kernels/kernels.hpp"

namespace indexsim::capture {

class L2Flush {
 public:
  L2Flush(uint64_t MiB, const std::string& mode);  // MiB 0: no flush
  ~L2Flush();
  L2Flush(const L2Flush&) = delete;
  L2Flush& operator=(const L2Flush&) = delete;
  // Queues the flush on `stream`; a memset writes `value`.
  void operator()(cudaStream_t stream, int value) const;

 private:
  uint64_t bytes_;
  void* buf_ = nullptr;
  uint32_t* sums_ = nullptr;  // the read pass's per-CTA results
  kernels::Plan reads_;       // empty: a memset
};

}  // namespace indexsim::capture
