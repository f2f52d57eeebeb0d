// SPDX-License-Identifier: Apache-2.0
// Two-batch overlap (workload deployment.two_batch_overlap, SGLang's --enable-two-batch-overlap):
//  - The split (SGLang's): a decode batch by its sequences, B / 2 to the first micro-batch; a prefill
//    of one sequence by its tokens (the second half attending to the first's keys, so its attention
//    waits for the first's append); a decode step of one sequence not at all; a prefill whose
//    dispatch runs DeepEP's low-latency kernels not at all.
//  - The order: each micro-batch's kernels are cut into stages that end with its communication;
//    stages are enqueued alternately, compute on stream 0, micro-batch i's communication on stream
//    1 + i. So the kernel enqueued right after a micro-batch's communication is the other's.
//  - The model's weights are one tensor for both; each micro-batch's caches are its own.
//  - Exposed communication: |U_comm| - |U_comm ∩ U_other|, U the union of kernel intervals.
//  - The techniques act on each micro-batch's chain; IndexShare's first-layer pin, which names one
//    cache, refuses a split step.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <map>
#include <set>
#include <stdexcept>

#include "models/common/params.hpp"
#include "sim/engine/simulation.hpp"
#include "sim/techniques/techniques.hpp"
#include "tests/cpp/test_trace_util.hpp"
#include "traces/generators/emulate.hpp"
#include "traces/generators/micro_batches.hpp"
#include "traces/generators/model_shape.hpp"

using namespace indexsim;

namespace {

trace::ModelShape shape(const std::string& workload, const std::vector<std::string>& sets) {
  auto doc = config::Document::load_file(test::workload_file(workload));
  for (const auto& s : sets) doc->set(s);
  return trace::load_model_shape(doc->root());
}

const std::vector<std::string> kDpAttentionTbo = {"deployment.attention_tensor_parallel=1",
                                                  "deployment.two_batch_overlap=true"};

trace::TraceData decode(const std::vector<std::string>& sets, uint32_t batch) {
  trace::StepParams p;
  p.phase = trace::Phase::decode;
  p.context = 4096;
  p.batch = batch;
  return trace::emulate_step(shape("deepseek-v3.2", sets), p, test::hopper_limits());
}

bool second(const trace::KernelRecord& k) { return k.name.rfind("mb1.", 0) == 0; }

std::set<uint32_t> tensors_of(const trace::TraceData& t, uint32_t kernel, trace::TensorClass cls) {
  std::set<uint32_t> out;
  for (const auto& a : t.accesses)
    if (a.kernel == kernel && t.tensors[a.tensor].cls == cls) out.insert(a.tensor);
  return out;
}

}  // namespace

TEST(TwoBatchOverlap, ABatchSplitsBySequencesIntoTwoChainsThatShareTheWeights) {
  const auto whole = decode({"deployment.attention_tensor_parallel=1"}, 8);
  const auto t = decode(kDpAttentionTbo, 8);
  ASSERT_EQ(t.metadata["two_batch_overlap"]["micro_batches"], 2);
  EXPECT_EQ(t.metadata["two_batch_overlap"]["split"], "sequences");
  ASSERT_EQ(t.kernels.size(), 2 * whole.kernels.size());
  std::map<std::string, const trace::KernelRecord*> by_name;
  for (const auto& k : t.kernels) by_name[k.name] = &k;
  for (const auto& k : whole.kernels) {
    ASSERT_TRUE(by_name.count(k.name)) << k.name;
    ASSERT_TRUE(by_name.count("mb1." + k.name)) << k.name;
    const auto& a = *by_name[k.name];
    const auto& b = *by_name["mb1." + k.name];
    EXPECT_EQ(a.kind, b.kind) << k.name;
    // Compute shares stream 0; each micro-batch's communication has a stream of its own.
    EXPECT_EQ(a.stream, trace::is_communication(k.kind) ? 1u : 0u) << k.name;
    EXPECT_EQ(b.stream, trace::is_communication(k.kind) ? 2u : 0u) << k.name;
    // One weight tensor for both: the model is not copied.
    EXPECT_EQ(tensors_of(t, a.id, trace::TensorClass::weights), tensors_of(t, b.id, trace::TensorClass::weights)) << k.name;
  }
  // Each micro-batch's four sequences have their own KV cache, half the whole batch's.
  std::map<std::string, uint64_t> kv;
  for (const auto& x : t.tensors)
    if (x.cls == trace::TensorClass::kv_cache) kv[x.name] = x.bytes;
  for (const auto& x : whole.tensors)
    if (x.cls == trace::TensorClass::kv_cache) {
      EXPECT_EQ(kv.at(x.name), x.bytes / 2) << x.name;
      EXPECT_EQ(kv.at("mb1." + x.name), x.bytes / 2) << x.name;
    }
}

TEST(TwoBatchOverlap, StagesAlternateAtEachCommunicationAndNoChainWaitsForTheOthers) {
  const auto t = decode(kDpAttentionTbo, 8);
  size_t handed_over = 0;
  for (const auto& k : t.kernels) {
    for (uint32_t d : k.deps) {
      EXPECT_LT(d, k.id) << k.name << " waits for a kernel enqueued after it";
      // Across micro-batches only the compute stream's order: never the other's communication.
      if (second(t.kernels[d]) != second(k)) {
        EXPECT_FALSE(trace::is_communication(t.kernels[d].kind)) << k.name << " waits for " << t.kernels[d].name;
      }
    }
    // The last kernel of a run of communication hands the compute stream to the other micro-batch.
    if (trace::is_communication(k.kind) && k.id + 1 < t.kernels.size()) {
      const auto& next = t.kernels[k.id + 1];
      if (!trace::is_communication(next.kind)) {
        EXPECT_NE(second(next), second(k)) << k.name << " then " << next.name;
        ++handed_over;
      }
    }
  }
  // Dispatch and combine of every MoE layer, for each micro-batch but the very last combine.
  EXPECT_GT(handed_over, 2u * 2u * 50u);
}

TEST(TwoBatchOverlap, APrefillOfOneSequenceSplitsItsTokensAndTheSecondHalfWaitsForTheFirstsKeys) {
  trace::StepParams p;
  p.phase = trace::Phase::prefill;
  p.context = 8192;
  p.chunk_tokens = 1024;
  const auto t = trace::emulate_step(shape("deepseek-v3.2", kDpAttentionTbo), p, test::hopper_limits());
  EXPECT_EQ(t.metadata["two_batch_overlap"]["split"], "tokens");
  std::map<std::string, const trace::KernelRecord*> by_name;
  for (const auto& k : t.kernels) by_name[k.name] = &k;
  const auto& append = *by_name.at("L0.kv_append");
  const auto& attn = *by_name.at("mb1.L0.sparse_attn");
  EXPECT_NE(std::find(attn.deps.begin(), attn.deps.end(), append.id), attn.deps.end());
  // The waits across micro-batches keep the enqueue order: every kernel waits for earlier ones.
  for (const auto& k : t.kernels)
    for (uint32_t d : k.deps) EXPECT_LT(d, k.id) << k.name;
  // One KV cache for the sequence, as large as its whole context; each half appends its own rows.
  uint64_t caches = 0;
  for (const auto& x : t.tensors)
    if (x.cls == trace::TensorClass::kv_cache && x.layer == 0) {
      ++caches;
      EXPECT_EQ(x.name, "L0.kv_cache");
      EXPECT_EQ(x.bytes, 8192u * 656u);
    }
  EXPECT_EQ(caches, 1u);
  uint64_t first_row = ~0ull, second_row = ~0ull;
  for (const auto& a : t.accesses) {
    if (a.kernel == append.id) first_row = a.base / 656;
    if (a.kernel == by_name.at("mb1.L0.kv_append")->id) second_row = a.base / 656;
  }
  EXPECT_EQ(first_row, 8192u - 1024u);
  EXPECT_EQ(second_row, 8192u - 512u);
}

TEST(TwoBatchOverlap, ADecodeStepOfOneSequenceAndALowLatencyPrefillRunWhole) {
  const auto t = decode(kDpAttentionTbo, 1);
  const auto whole = decode({"deployment.attention_tensor_parallel=1"}, 1);
  EXPECT_EQ(t.metadata["two_batch_overlap"]["micro_batches"], 1);
  ASSERT_EQ(t.kernels.size(), whole.kernels.size());
  for (size_t i = 0; i < t.kernels.size(); ++i) {
    EXPECT_EQ(t.kernels[i].name, whole.kernels[i].name);
    EXPECT_EQ(t.kernels[i].stream, whole.kernels[i].stream);
  }
  // An odd decode batch: B / 2 = 1 sequence to the first micro-batch, 2 to the second.
  const auto odd = decode(kDpAttentionTbo, 3);
  ASSERT_EQ(odd.metadata["two_batch_overlap"]["micro_batches"], 2);
  std::map<std::string, uint64_t> kv;
  for (const auto& x : odd.tensors)
    if (x.cls == trace::TensorClass::kv_cache) kv[x.name] = x.bytes;
  EXPECT_EQ(kv.at("mb1.L0.kv_cache"), 2 * kv.at("L0.kv_cache"));
  auto sets = kDpAttentionTbo;
  sets.push_back("deployment.expert_parallel_kernels=low_latency");
  trace::StepParams p;
  p.phase = trace::Phase::prefill;
  p.context = 4096;
  p.chunk_tokens = 512;
  const auto ll = trace::emulate_step(shape("deepseek-v3.2", sets), p, test::hopper_limits());
  EXPECT_EQ(ll.metadata["two_batch_overlap"]["micro_batches"], 1);
}

// Exposed communication, on intervals: comm [0, 10) with compute [5, 8) and [9, 20) beside it
// leaves 10 - 3 - 1 = 6 ns exposed; comm [30, 40) alone 10 ns; two comm kernels that overlap one
// another, [50, 60) and [55, 65), count their union once: 15 ns. Total 31 ns.
TEST(TwoBatchOverlap, ExposedCommunicationIsTheCommunicationNoOtherKernelOverlaps) {
  auto kernel = [](const char* kind, double a, double b) {
    sim::KernelResult k;
    k.kind = kind;
    k.start_ns = a;
    k.end_ns = b;
    return k;
  };
  const std::vector<sim::KernelResult> ks = {kernel("all_reduce", 0, 10), kernel("gemm", 5, 8),
                                             kernel("gemm", 9, 20),       kernel("ep_dispatch", 30, 40),
                                             kernel("ep_combine", 50, 60), kernel("ep_combine", 55, 65)};
  EXPECT_DOUBLE_EQ(sim::exposed_communication_ns(ks), 31.0);
}

// Replayed: the second micro-batch computes while the first's dispatch or combine is in flight, so
// part of the communication is hidden (exposed < summed); without the overlap every nanosecond of
// communication is exposed (one chain: nothing runs beside it).
TEST(TwoBatchOverlap, TheReplayHidesPartOfTheCommunicationBehindTheOtherMicroBatch) {
  auto spec = [](bool tbo) {
    sim::RunSpec s;
    s.hardware = "h200";
    s.workload = "deepseek-v3.2";
    s.step.context = 4096;
    s.step.batch = 8;
    s.fast = true;
    s.sets = {"workload.model.num_layers=2",
              "workload.layers=[{first: 0, last: 1, attention: dsa, indexer: full, mlp: moe}]",
              "workload.model.vocab_size=2048",
              "workload.model.hidden_size=1024",
              "workload.attention.num_heads=16",
              "workload.attention.q_lora_rank=512",
              "workload.mlp.moe_intermediate_size=512",
              "workload.deployment.attention_tensor_parallel=1",
              std::string("workload.deployment.two_batch_overlap=") + (tbo ? "true" : "false")};
    return s;
  };
  const auto one = sim::simulate(spec(false));
  const auto two = sim::simulate(spec(true));
  ASSERT_EQ(one.status, "ok") << one.error;
  ASSERT_EQ(two.status, "ok") << two.error;
  EXPECT_NEAR(one.get_metric("communication_exposed_time"), one.get_metric("communication_time"), 1e-6);
  EXPECT_LT(two.get_metric("communication_exposed_time"), 0.9 * two.get_metric("communication_time"));
  bool overlapped = false;
  for (const auto& c : two.kernels)
    if (trace::is_communication(trace::kernel_kind(c.kind)) && c.name.rfind("mb1.", 0) != 0)
      for (const auto& k : two.kernels)
        overlapped |= k.name.rfind("mb1.", 0) == 0 && !trace::is_communication(trace::kernel_kind(k.kind)) &&
                      k.start_ns < c.end_ns && k.end_ns > c.start_ns;
  EXPECT_TRUE(overlapped);
  // Every technique runs on the split step (IndexShare's prefetch, IndexPool's gate, pruning's
  // projection on each micro-batch's chain), but IndexShare's first-layer pin, which names one
  // cache: refused, naming the key.
  auto with_all = spec(true);
  with_all.techniques = "all";
  try {
    sim::simulate(with_all);
    ADD_FAILURE() << "the first-layer pin ran on a split step";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("first_layer_sram"), std::string::npos) << e.what();
  }
  with_all.sets.push_back("techniques.index_share.first_layer_sram=false");
  const auto all = sim::simulate(with_all);
  ASSERT_EQ(all.status, "ok") << all.error;
  std::set<std::string> added;
  for (const auto& k : all.kernels)
    if (k.kind == "kv_prefetch" || k.kind == "pool_gate" || k.kind == "prune_proj") added.insert(k.name);
  for (const char* name : {"L1.kv_prefetch", "mb1.L1.kv_prefetch", "L1.pool_gate", "mb1.L1.pool_gate", "L1.prune_proj",
                           "mb1.L1.prune_proj"})
    EXPECT_TRUE(added.count(name)) << name;
}

// The techniques on a split step: IndexShare prefetches each micro-batch's attention rows after its
// own latest full layer's top-k, on a stream of each micro-batch's own past the three two-batch
// overlap uses (compute 0, communication 1 and 2); IndexPool's gate and pruning's projection run
// once a micro-batch and layer, reading the layer's one weight tensor.
TEST(TwoBatchOverlap, EachTechniqueActsOnEachMicroBatchsChain) {
  const std::string techniques = "index_share: {group: 4, full_first_layers: 1, overlap: true}\n";
  trace::ModelShape m = shape("deepseek-v3.2", kDpAttentionTbo);
  auto doc = config::Document::load_string(techniques, "t.yaml");
  const auto pipeline = sim::TechniquePipeline::load(doc->root());
  pipeline.reshape(m);
  trace::StepParams p;
  p.phase = trace::Phase::decode;
  p.context = 4096;
  p.batch = 8;
  const trace::TraceData t = trace::emulate_step(m, p, test::hopper_limits());
  sim::Workload w(t.metadata, t.tensors, t.kernels, t.accesses);
  nlohmann::json report;
  sim::PlacementPolicy pol;
  sim::TechniqueContext ctx{&m, &pol, &report};
  pipeline.transform(w, ctx);
  std::array<int, 2> prefetches{0, 0};
  for (size_t v = 0; v < w.kernels().size(); ++v) {
    const auto& k = w.kernels()[v];
    if (k.removed || k.rec.kind != trace::KernelKind::kv_prefetch) continue;
    const uint32_t mb = trace::micro_batch_of(k.rec.name);
    ++prefetches[mb];
    EXPECT_EQ(k.rec.stream, 3u + mb) << k.rec.name;
    // Its top-k: the full layer at or before it (groups of 4 from layer 0), of its micro-batch.
    const int full = k.rec.layer / 4 * 4;
    bool after_own = false;
    for (size_t u : w.predecessors(v)) {
      const auto& d = w.kernels()[u].rec;
      if (d.kind == trace::KernelKind::topk) {
        EXPECT_EQ(trace::micro_batch_of(d.name), mb) << k.rec.name << " after " << d.name;
        after_own |= d.layer == full && trace::micro_batch_of(d.name) == mb;
      }
    }
    EXPECT_TRUE(after_own) << k.rec.name;
  }
  EXPECT_EQ(prefetches[0], prefetches[1]);
  EXPECT_GE(prefetches[0], 60);
  // IndexPool's gate and pruning's projection: a kernel each micro-batch, the layer's weights once;
  // the gate (placed before IndexShare in the pipeline) on a stream of each micro-batch's own.
  auto more = config::Document::load_string(techniques + "index_pool: {ratio: 4, axis: tokens}\ndim_prune: {keep_dims: 64}\n", "t.yaml");
  trace::ModelShape m2 = shape("deepseek-v3.2", kDpAttentionTbo);
  const auto pipeline2 = sim::TechniquePipeline::load(more->root());
  pipeline2.reshape(m2);
  const trace::TraceData t2 = trace::emulate_step(m2, p, test::hopper_limits());
  sim::Workload w3(t2.metadata, t2.tensors, t2.kernels, t2.accesses);
  nlohmann::json report2;
  sim::TechniqueContext ctx2{&m2, &pol, &report2};
  pipeline2.transform(w3, ctx2);
  std::map<std::string, std::array<int, 2>> added;
  for (const auto& k : w3.kernels())
    if (!k.removed && (k.rec.kind == trace::KernelKind::pool_gate || k.rec.kind == trace::KernelKind::prune_proj)) {
      ++added[trace::to_string(k.rec.kind)][trace::micro_batch_of(k.rec.name)];
      if (k.rec.kind == trace::KernelKind::pool_gate) EXPECT_EQ(k.rec.stream, 3u + trace::micro_batch_of(k.rec.name)) << k.rec.name;
    }
  for (const char* kind : {"pool_gate", "prune_proj"}) {
    EXPECT_EQ(added[kind][0], added[kind][1]) << kind;
    EXPECT_EQ(added[kind][0], report2["index_share"]["full_layers"].get<int>()) << kind;  // one a layer that scores
  }
  int gate_weights = 0;
  for (const auto& x : w3.tensors()) gate_weights += x.name == "L0.pool_gate";
  EXPECT_EQ(gate_weights, 1);
  // The first layer's pin names one cache, which a split step has one of a micro-batch: refused.
  auto pinned = config::Document::load_string(
      "index_share: {group: 4, overlap: true, first_layer_sram: true, first_layer_region: sram}\n", "t.yaml");
  sim::Workload w2(t.metadata, t.tensors, t.kernels, t.accesses);
  try {
    sim::TechniquePipeline::load(pinned->root()).transform(w2, ctx);
    ADD_FAILURE() << "first_layer_sram ran on a split step";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("first_layer_sram"), std::string::npos) << e.what();
  }
}
