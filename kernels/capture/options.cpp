// SPDX-License-Identifier: Apache-2.0
#include "kernels/capture/options.hpp"

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <stdexcept>
#include <type_traits>

namespace indexsim::capture {

namespace {

[[noreturn]] void usage(const std::string& why) {
  std::cerr << "indexsim-capture: " << why << "\n"
            << "usage: indexsim-capture --workload decode|prefill|copy|gemm --out FILE.itr [--summary FILE.tsv]\n"
               "  decode/prefill: --context N --index-heads H --index-dim D --topk K --attn-heads H\n"
               "                  [--batch B] [--chunk C (prefill)] [--key-type fp8|fp16|bf16]\n"
               "                  [--kv-format bf16|fp8 (1152 or 656 bytes per KV row)]\n"
               "                  [--pool-ratio R] [--prune-dim P]\n"
               "  copy: --bytes N      gemm: --mnk M,N,K\n"
               "  [--warmup 5] [--reps 50] [--flush-MiB 256] [--flush-mode write|read] [--seed 1]\n";
  std::exit(2);
}

}  // namespace

Options parse(int argc, char** argv) {
  Options o;
  std::map<std::string, std::string> kv;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.rfind("--", 0) != 0 || i + 1 >= argc) usage("expected --key value, got '" + a + "'");
    kv[a.substr(2)] = argv[++i];
  }
  auto take = [&](const char* key, auto& field) {
    auto it = kv.find(key);
    if (it == kv.end()) return false;
    try {
      using T = std::decay_t<decltype(field)>;
      if constexpr (std::is_same_v<T, std::string>) field = it->second;
      else field = T(std::stoll(it->second));
    } catch (const std::exception&) {
      usage(std::string("--") + key + ": not a number: '" + it->second + "'");
    }
    kv.erase(it);
    return true;
  };
  take("workload", o.workload);
  take("out", o.out);
  take("summary", o.summary);
  take("context", o.context);
  take("batch", o.batch);
  take("chunk", o.chunk);
  take("index-heads", o.index_heads);
  take("index-dim", o.index_dim);
  take("topk", o.topk);
  take("attn-heads", o.attn_heads);
  take("key-type", o.key_type);
  take("kv-format", o.kv_format);
  take("pool-ratio", o.pool_ratio);
  take("prune-dim", o.prune_dim);
  take("bytes", o.bytes);
  take("warmup", o.warmup);
  take("reps", o.reps);
  take("flush-MiB", o.flush_MiB);
  take("flush-mode", o.flush_mode);
  take("seed", o.seed);
  std::string mnk;
  if (take("mnk", mnk) && std::sscanf(mnk.c_str(), "%d,%d,%d", &o.m, &o.n, &o.kdim) != 3)
    usage("--mnk: expected M,N,K, got '" + mnk + "'");
  if (!kv.empty()) usage("unknown option --" + kv.begin()->first);
  if (o.out.empty()) usage("--out is required");
  if (o.flush_mode != "write" && o.flush_mode != "read") usage("--flush-mode: write or read, got '" + o.flush_mode + "'");
  const bool attn = o.workload == "decode" || o.workload == "prefill";
  if (attn && (o.context <= 0 || o.index_heads <= 0 || o.index_dim <= 0 || o.topk <= 0 || o.attn_heads <= 0))
    usage(o.workload + " needs --context, --index-heads, --index-dim, --topk and --attn-heads (positive)");
  if (o.workload == "prefill" && (o.chunk <= 0 || o.chunk > o.context)) usage("prefill needs 0 < --chunk <= --context");
  if (o.workload == "copy" && (o.bytes == 0 || o.bytes % 16)) usage("copy needs --bytes, a positive multiple of 16");
  if (o.workload == "gemm" && (o.m <= 0 || o.n <= 0 || o.kdim <= 0)) usage("gemm needs --mnk M,N,K");
  if (!attn && o.workload != "copy" && o.workload != "gemm") usage("unknown workload '" + o.workload + "'");
  if (o.reps < 1 || o.warmup < 0) usage("--reps must be >= 1 and --warmup >= 0");
  if (o.kv_format != "bf16" && o.kv_format != "fp8") usage("--kv-format: bf16 or fp8");
  if (o.key_type != "fp8" && o.key_type != "fp16" && o.key_type != "bf16") usage("--key-type: fp8, fp16 or bf16");
  return o;
}

}  // namespace indexsim::capture
