// SPDX-License-Identifier: Apache-2.0
#include "traces/generators/micro_batches.hpp"

#include <algorithm>

namespace indexsim::trace {

MicroBatchSplit split_micro_batches(const ModelShape& m, const StepParams& step) {
  MicroBatchSplit split;
  split.parts = {step};
  if (!m.deployment.two_batch_overlap) return split;
  const bool decode = step.phase == Phase::decode;
  const auto& dep = m.deployment;
  if (!decode && dep.expert_parallel > dep.attention_tensor_parallel && dep.low_latency_ep(false)) {
    split.how = "none: a prefill with low-latency dispatch";
    return split;
  }
  StepParams a = step, b = step;
  if (step.batch >= 2) {
    a.batch = decode ? step.batch / 2 : (step.batch + 1) / 2;
    b.batch = step.batch - a.batch;
    split.second_first_sequence = a.batch;
    split.how = "sequences";
  } else if (!decode && step.chunk_tokens >= 2) {
    a.chunk_tokens = step.chunk_tokens / 2;
    b.chunk_tokens = step.chunk_tokens - a.chunk_tokens;
    a.context = step.context - b.chunk_tokens;
    split.by_tokens = true;
    split.how = "tokens";
  } else {
    split.how = "none: a decode step of one sequence";
    return split;
  }
  split.parts = {a, b};
  return split;
}

void interleave_stages(TraceData& t) {
  auto& ks = t.kernels;
  const size_t n = ks.size();
  uint32_t parts = 1;
  for (const auto& k : ks) parts = std::max(parts, k.stream + 1);
  std::vector<uint64_t> stage(n);
  std::vector<uint64_t> current(parts, 0);
  std::vector<bool> after_comm(parts, false);
  for (size_t i = 0; i < n; ++i) {
    const uint32_t mb = ks[i].stream;
    const bool comm = is_communication(ks[i].kind);
    if (!comm && after_comm[mb]) ++current[mb];
    after_comm[mb] = comm;
    stage[i] = current[mb];
  }
  std::vector<uint32_t> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = uint32_t(i);
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    return stage[a] != stage[b] ? stage[a] < stage[b] : ks[a].stream < ks[b].stream;
  });
  std::vector<uint32_t> renamed(n);
  for (size_t i = 0; i < n; ++i) renamed[order[i]] = uint32_t(i);
  std::vector<KernelRecord> out;
  out.reserve(n);
  int64_t last_compute = -1;
  for (uint32_t old : order) {
    KernelRecord k = std::move(ks[old]);
    k.id = renamed[old];
    for (uint32_t& d : k.deps) d = renamed[d];
    if (is_communication(k.kind)) {
      k.stream = 1 + k.stream;
    } else {
      k.stream = 0;
      if (last_compute >= 0 && std::find(k.deps.begin(), k.deps.end(), uint32_t(last_compute)) == k.deps.end())
        k.deps.push_back(uint32_t(last_compute));
      last_compute = k.id;
    }
    out.push_back(std::move(k));
  }
  ks = std::move(out);
  for (AccessRecord& a : t.accesses) a.kernel = renamed[a.kernel];
}

}  // namespace indexsim::trace
