// SPDX-License-Identifier: Apache-2.0
// indexsim-capture's command line: what to capture, and the checks on it (capture_main.cpp).
#pragma once

#include <cstdint>
#include <string>

namespace indexsim::capture {

struct Options {
  std::string workload, out, summary;
  int64_t context = 0;
  int batch = 1, chunk = 0;
  int index_heads = 0, index_dim = 0, topk = 0, attn_heads = 0;
  std::string key_type = "fp8", kv_format = "bf16";
  int pool_ratio = 0, prune_dim = 0;
  uint64_t bytes = 0;
  int m = 0, n = 0, kdim = 0;
  int warmup = 5, reps = 50;
  uint64_t flush_MiB = 256;
  // How the L2 is flushed before each repetition: write (a memset: the L2 is left full of the flush
  // buffer's dirty lines, which later misses write back) or read (a read-only pass: left full of
  // clean lines).
  std::string flush_mode = "write";
  uint32_t seed = 1;
};

// Reads argv; a missing or bad option prints the usage with the reason and exits with status 2.
Options parse(int argc, char** argv);

}  // namespace indexsim::capture
