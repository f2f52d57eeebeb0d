// SPDX-License-Identifier: Apache-2.0
// The whole chunked prefill. A prompt of C tokens in chunks of T is ceil(C/T) chunks, the last
// one partial; time to first token = the sum of the chunks' times. Sampled: the chunks not
// simulated take the least-squares line a + b · end through the simulated full chunks; the
// estimate agrees with simulating every chunk within the 3 %.
#include <gtest/gtest.h>

#include <functional>
#include <numeric>

#include "sim/engine/prefill.hpp"
#include "sim/placement/placement.hpp"

using namespace indexsim;
using namespace indexsim::sim;

namespace {

PrefillSpec tiny(uint64_t context, uint32_t chunk, uint32_t sampled) {
  PrefillSpec s;
  s.run.hardware = "h200";
  s.run.workload = std::string(INDEXSIM_TEST_DATA) + "/workloads/tiny-dsa.yaml";
  s.run.step.context = context;
  s.run.step.chunk_tokens = chunk;
  s.run.fast = true;
  s.sampled_chunks = sampled;
  return s;
}

}  // namespace

TEST(PrefillPlan, ChunksCoverThePromptAndTheSampleSpreadsOverIt) {
  const auto c = plan_prefill_chunks(1000, 128, 3);
  ASSERT_EQ(c.size(), 8u);  // ceil(1000 / 128)
  EXPECT_EQ(c.back().begin, 896u);
  EXPECT_EQ(c.back().end, 1000u);
  for (size_t i = 1; i < c.size(); ++i) EXPECT_EQ(c[i].begin, c[i - 1].end);
  // Three spread over the 7 full chunks (0, 3, 6) and the partial last one.
  std::vector<uint64_t> sim;
  for (const auto& x : c)
    if (x.simulated) sim.push_back(x.index);
  EXPECT_EQ(sim, (std::vector<uint64_t>{0, 3, 6, 7}));
  for (const auto& x : plan_prefill_chunks(1000, 128, 0)) EXPECT_TRUE(x.simulated);
}

TEST(PrefillPlan, AChunkLargerThanTheContextIsRefusedNamingBoth) {
  try {
    plan_prefill_chunks(4096, 8192, 4);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("8192"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("4096"), std::string::npos);
  }
}

TEST(PrefillPlan, RefinementFindsABendAndInterpolatesAroundIt) {
  // 64 chunks of 64 tokens whose time bends at 2048 tokens (a tier filling):
  //   t(end) = 100 + end up to 2048, then 2148 + 5 (end - 2048); TTFT = 274,688.
  // Four chunks (0, 21, 42, 63) put a straight line over the bend: the chunk at 21 (t 1508) lies
  // 93 % off the line through 0 and 42 (2916), which over the 40 chunks of its two gaps would move
  // the TTFT by ~10 %: the middles on both sides are simulated, and so on until no chunk matters
  // by 0.5 % or 16 are simulated. TTFT then lies within 1 % of the exact sum; without refinement
  // (at most 4 chunks) more than 3 % off. A straight cost with 0.5 % jitter per chunk is not a bend:
  // its 4 chunks stay 4.
  const auto bent = [](uint64_t end) { return end <= 2048 ? 100.0 + end : 2148.0 + 5.0 * double(end - 2048); };
  const auto jittery = [](uint64_t end) { return (100.0 + end) * (end / 64 % 2 ? 1.005 : 0.995); };
  const auto estimate = [](const std::function<double(uint64_t)>& cost, uint32_t max_simulated, uint32_t* simulated) {
    std::vector<PrefillChunk> chunks = plan_prefill_chunks(4096, 64, 4);
    PrefillSpec spec;
    spec.sampled_chunks = 4;
    spec.max_simulated_chunks = max_simulated;
    *simulated = 0;
    const ChunkLine line = refine_chunks(chunks, [](const PrefillChunk&) { return true; }, spec,
                                         [&](const std::vector<size_t>& todo) {
                                           for (size_t i : todo) chunks[i].time_ns = cost(chunks[i].end), ++*simulated;
                                         });
    double t = 0;
    for (const auto& c : chunks) t += c.simulated ? c.time_ns : line.between(chunks, c, [](const PrefillChunk& x) { return x.time_ns; });
    return t;
  };
  const auto exact = [](const std::function<double(uint64_t)>& cost) {
    double t = 0;
    for (const auto& c : plan_prefill_chunks(4096, 64, 0)) t += cost(c.end);
    return t;
  };
  uint32_t refined_n = 0, plain_n = 0, jitter_n = 0;
  const double refined = estimate(bent, 16, &refined_n), plain = estimate(bent, 4, &plain_n);
  EXPECT_EQ(plain_n, 4u);
  EXPECT_GT(refined_n, 4u);
  EXPECT_LE(refined_n, 16u);
  EXPECT_NEAR(refined / exact(bent), 1.0, 0.01) << refined << " against " << exact(bent);
  EXPECT_GT(std::abs(plain / exact(bent) - 1.0), 0.03) << plain << " against " << exact(bent);
  EXPECT_NEAR(estimate(jittery, 16, &jitter_n) / exact(jittery), 1.0, 0.01);
  EXPECT_EQ(jitter_n, 4u);
}

TEST(Prefill, SampledTimeToFirstTokenAgreesWithEveryChunkSimulated) {
  std::vector<PrefillChunk> all_chunks, sampled_chunks;
  const RunResult all = simulate_prefill(tiny(384, 64, 0), &all_chunks);
  const RunResult sampled = simulate_prefill(tiny(384, 64, 3), &sampled_chunks);
  ASSERT_EQ(all_chunks.size(), 6u);
  double sum = 0;
  for (const auto& c : all_chunks) sum += c.time_ns;
  EXPECT_DOUBLE_EQ(all.step_ns, sum) << "every chunk simulated: TTFT is their sum";
  EXPECT_DOUBLE_EQ(all.get_metric("ttft"), sum / 1e3);
  EXPECT_EQ(sampled.get_metric("simulated_chunks"), 3);
  EXPECT_NEAR(sampled.step_ns / all.step_ns, 1.0, 0.03) << "sampled " << sampled.step_ns << " ns, every chunk " << all.step_ns;
  // Later chunks attend to more: the line rises.
  EXPECT_GT(all_chunks.back().time_ns, all_chunks.front().time_ns);
  // Kernels of the simulated chunks are there, by chunk.
  EXPECT_EQ(sampled.kernels.front().name.rfind("C0.", 0), 0u);
}

TEST(Prefill, TheResultDoesNotDependOnTheNumberOfThreads) {
  const RunResult a = simulate_prefill(tiny(256, 64, 2));
  PrefillSpec two = tiny(256, 64, 2);
  two.workers = 2;
  const RunResult b = simulate_prefill(two);
  EXPECT_EQ(a.step_ns, b.step_ns);  // bit for bit
  EXPECT_EQ(a.key, b.key);
  ASSERT_EQ(a.kernels.size(), b.kernels.size());
  for (size_t i = 0; i < a.kernels.size(); ++i) EXPECT_EQ(a.kernels[i].end_ns, b.kernels[i].end_ns) << a.kernels[i].name;
}

TEST(Prefill, LaterChunksTakeTheFirstChunksWeightKernelsButNotThoseOverTheContext) {
  // Chunks 0 and 1 of 128 tokens in 64: a GEMM of chunk 1 (same weights, same 64 tokens) repeats
  // one of chunk 0 and takes its figures; its sparse attention reads a KV cache of another size
  // (128 tokens against 64) and runs. Without reuse, every kernel runs.
  const RunResult r = simulate_prefill(tiny(128, 64, 0));
  EXPECT_EQ(r.config.at("prefill").at("segment_memos_from_chunk"), 0);
  size_t gemm_reused = 0, attention_run = 0;
  for (const auto& k : r.kernels) {
    if (k.name.rfind("C1.", 0) != 0) continue;
    gemm_reused += k.kind == "gemm" && k.simulated == "reused";
    attention_run += k.kind == "sparse_attn" && k.simulated != "reused";
  }
  EXPECT_GT(gemm_reused, 0u);
  EXPECT_GT(attention_run, 0u);
  PrefillSpec alone = tiny(128, 64, 0);
  alone.run.reuse = false;
  for (const auto& k : simulate_prefill(alone).kernels) EXPECT_NE(k.simulated, "reused") << k.name;
}

TEST(Prefill, TheKeyIsKnownBeforeSimulatingAndNamesTheInputsOnly) {
  // prefill_key(spec) == the key simulate_prefill(spec) stores under, with and without refinement;
  // another sampling or technique is another key. The outcomes are metrics, not configuration.
  for (uint32_t sampled : {0u, 3u}) {
    const PrefillSpec spec = tiny(384, 64, sampled);
    const RunResult r = simulate_prefill(spec);
    EXPECT_EQ(prefill_key(spec), r.key) << sampled;
    EXPECT_FALSE(r.config.at("prefill").contains("simulated"));
    EXPECT_GE(r.get_metric("refine_rounds"), 0.0);
  }
  EXPECT_NE(prefill_key(tiny(384, 64, 0)), prefill_key(tiny(384, 64, 3)));
  PrefillSpec other = tiny(384, 64, 3);
  other.run.techniques = "indexshare";
  EXPECT_NE(prefill_key(other), prefill_key(tiny(384, 64, 3)));
}

TEST(Prefill, APromptThatCannotBePlacedFailsBeforeAnyChunkIsSimulated) {
  // GLM-5.2 at 1M tokens needs the CXL pool on the H200 (its KV and indexer caches overflow the HBM
  // budget); without it the last chunk's placement fails, and it is placed first: no chunk starts.
  PrefillSpec s;
  s.run.hardware = "h200";
  s.run.workload = "glm-5.2";
  s.run.step.context = 1048576;
  s.run.step.chunk_tokens = 4096;
  s.run.fast = true;
  s.sampled_chunks = 4;
  size_t started = 0;
  s.progress = [&started](size_t, uint64_t) { ++started; };
  EXPECT_THROW(simulate_prefill(s), PlacementError);
  EXPECT_EQ(started, 0u);
}

TEST(Prefill, AContextBeyondTheModelsPositionsIsRefusedUnlessOverridden) {
  PrefillSpec s = tiny(131072, 4096, 2);  // tiny-dsa: max_position_embeddings 65536
  try {
    simulate_prefill(s);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("131072"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("max_position_embeddings 65536"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("--set workload.model.max_position_embeddings=N"), std::string::npos) << e.what();
  }
  // The limit is the workload's, as resolved: an override is read (and recorded with the run).
  s = tiny(384, 64, 2);
  s.run.sets = {"workload.model.max_position_embeddings=256"};
  EXPECT_THROW(simulate_prefill(s), std::invalid_argument);
}
