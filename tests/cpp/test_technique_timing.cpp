// SPDX-License-Identifier: Apache-2.0
// Step-time effects of the techniques come out of the replay (never a formula pasted into a result):
// these tests check their direction on a small GLM-5-shaped model whose step is dominated by the
// indexer scan (8 DSA layers, small projections, 64K tokens of context).
#include <gtest/gtest.h>

#include <cstdio>

#include "sim/engine/simulation.hpp"

using namespace indexsim;

namespace {

sim::RunSpec small(const std::string& techniques, std::vector<std::string> extra = {}, uint64_t context = 65536) {
  sim::RunSpec s;
  s.hardware = "h200";
  s.workload = "glm-5";
  s.techniques = techniques;
  s.step.context = context;
  s.fast = true;
  s.sets = {"workload.model.num_layers=8",
            "workload.layers=[{first: 0, last: 7, attention: dsa, indexer: full, mlp: dense}]",
            "workload.model.vocab_size=2048",
            "workload.model.hidden_size=1024",
            "workload.mlp.dense_intermediate_size=1024",
            "workload.attention.num_heads=8",
            "workload.attention.q_lora_rank=512",
            // GLM-5's 202,752 positions, stretched for the 1M-token scans below (a what-if).
            "workload.model.max_position_embeddings=1048576"};
  for (auto& e : extra) s.sets.push_back(e);
  return s;
}

struct Scan {
  double ns = 0, bytes = 0;
};
Scan indexer_scan(const sim::RunResult& r) {
  Scan s;
  for (const auto& k : r.kernels)
    if (k.kind == "indexer_score") {
      s.ns += k.duration_ns();
      s.bytes += double(k.bytes_read);
    }
  return s;
}

}  // namespace

TEST(TechniqueTiming, IndexShareWithOverlapIsNeverSlowerThanWithout) {
  const auto with = sim::simulate(small("indexshare", {"techniques.index_share.first_layer_sram=false"}));
  const auto without = sim::simulate(small("indexshare", {"techniques.index_share.overlap=false",
                                                          "techniques.index_share.first_layer_sram=false"}));
  EXPECT_LE(with.step_ns, without.step_ns * 1.001) << "overlap " << with.step_ns << " ns vs " << without.step_ns;
  EXPECT_GE(with.step_ns, with.roofline_ns);
}

TEST(TechniqueTiming, IndexShareRunsTheIndexerOnFewerLayersAndIsFaster) {
  const auto base = sim::simulate(small("baseline"));
  const auto share = sim::simulate(small("indexshare", {"techniques.index_share.first_layer_sram=false"}));
  EXPECT_LT(indexer_scan(share).bytes, indexer_scan(base).bytes);
  EXPECT_LT(share.step_ns, base.step_ns);
}

TEST(TechniqueTiming, PoolingShortensTheScanAboutInProportionToItsBytes) {
  // 4:1 pooling reads a quarter of the indexer bytes; while the scan is bandwidth-bound its time
  // should fall by about the same factor: t_pool / t_base ≈ bytes_pool / bytes_base (within 15 %).
  // At 1M tokens even the pooled scan (34 MiB a layer) is long next to the ~1 us of launch and
  // first-request latency that a scan of any size pays; at 64K that fixed part is a third of it.
  constexpr uint64_t kContext = 1048576;
  const auto base = sim::simulate(small("baseline", {}, kContext));
  const auto pool = sim::simulate(small("indexpool", {"techniques.index_pool.recent_full=0"}, kContext));
  const Scan b = indexer_scan(base), p = indexer_scan(pool);
  ASSERT_GT(b.bytes, 0);
  const double byte_ratio = p.bytes / b.bytes, time_ratio = p.ns / b.ns;
  EXPECT_NEAR(byte_ratio, 0.25, 0.02);
  EXPECT_NEAR(time_ratio / byte_ratio, 1.0, 0.15) << "time ratio " << time_ratio << ", byte ratio " << byte_ratio;
  EXPECT_LT(pool.step_ns, base.step_ns);
}

TEST(TechniqueTiming, NoStepBeatsItsRoofline) {
  for (const char* t : {"baseline", "indexpool", "dimprune", "quantize-fp4"}) {
    const auto r = sim::simulate(small(t));
    EXPECT_GE(r.step_ns, r.roofline_ns) << t;
  }
}

TEST(FastMode, AgreesWithTheDetailedModeOnADecodeStep) {
  // The fast mode samples the same models (2 KiB chunks, the last waves of long kernels after
  // functional warming, reused twins); on a step whose kernels it samples, reuses and chunks it
  // must stay within 3 % of the detailed mode: |t_fast - t_detailed| / t_detailed <= 0.03.
  // On an A100: without wgmma the indexer scans in 64-entry tiles (thousands of CTAs, sampled); on
  // Hopper its persistent paged kernel fits one wave and nothing in a decode step is sampled.
  auto spec = small("baseline", {}, 262144);
  spec.hardware = "a100";
  spec.fast = false;
  const auto detailed = sim::simulate(spec);
  spec.fast = true;
  const auto fast = sim::simulate(spec);
  int reused = 0, sampled = 0;
  for (const auto& k : fast.kernels) {
    reused += k.simulated == "reused";
    sampled += k.simulated == "sampled";
  }
  EXPECT_GT(reused, 0);
  EXPECT_GT(sampled, 0);
  std::printf("fast %.1f ns, detailed %.1f ns\n", fast.step_ns, detailed.step_ns);
  EXPECT_NEAR(fast.step_ns / detailed.step_ns, 1.0, 0.03) << "fast " << fast.step_ns << " ns, detailed " << detailed.step_ns;
}

TEST(TechniqueTiming, AFirstLayerCacheLargerThanTheSramIsPinnedInPartAndOnlyNothingFittingWarns) {
  // IndexShare pins the first full layer's index cache (132 B an entry) in the NPU SRAM (12 MiB, six
  // 2 MiB placement pages). At 32K (4.1 MiB) it fits whole. At 256K (33 MiB) the SRAM takes a copy
  // of the first h entries of every page of 64, the largest h whose copy fits in whole pages:
  // 262144 / 64 pages x h x 132 B <= 12 MiB gives h = 23; the scan reads those from the copy and
  // the rest from the HBM, the same bytes as without the pin. With a 1 MiB SRAM not even one entry a
  // page fits: the whole cache is asked for, spills, and the run warns and says placed: false.
  const auto whole = sim::simulate(small("indexshare", {}, 32768));
  ASSERT_EQ(whole.techniques.at("pins").size(), 1u);
  EXPECT_EQ(whole.techniques["pins"][0].at("tensor").get<std::string>(), "L0.indexer_cache");
  EXPECT_TRUE(whole.techniques["pins"][0].at("placed").get<bool>());
  EXPECT_TRUE(whole.warnings.empty());

  const uint64_t context = 262144;
  const auto part = sim::simulate(small("indexshare", {}, context));
  const auto& rep = part.techniques["report"]["index_share"];
  const auto& pins = part.techniques.at("pins");
  ASSERT_EQ(pins.size(), 1u);
  EXPECT_EQ(pins[0].at("tensor").get<std::string>(), "L0.indexer_cache.sram");
  EXPECT_TRUE(pins[0].at("placed").get<bool>());
  EXPECT_EQ(rep.at("first_layer_pin_page_entries").get<uint64_t>(), 64u);
  EXPECT_EQ(rep.at("first_layer_pin_head_entries").get<uint64_t>(), 23u);
  EXPECT_EQ(pins[0].at("bytes").get<uint64_t>(), context / 64 * 23 * 132);
  EXPECT_TRUE(part.warnings.empty());
  EXPECT_EQ(part.get_metric("pins_not_placed"), 0.0);
  const auto unpinned = sim::simulate(small("indexshare", {"techniques.index_share.first_layer_sram=false"}, context));
  const auto scan = [](const sim::RunResult& r) {
    for (const auto& k : r.kernels)
      if (k.name == "L0.indexer_score") return double(k.bytes_read);
    return 0.0;
  };
  EXPECT_GT(scan(unpinned), 0.0);
  EXPECT_NEAR(scan(part), scan(unpinned), 0.01 * scan(unpinned));

  const auto none = sim::simulate(small("indexshare", {"hardware.memory.sram.capacity_KiB=1024"}, context));
  ASSERT_EQ(none.techniques.at("pins").size(), 1u);
  EXPECT_EQ(none.techniques["pins"][0].at("tensor").get<std::string>(), "L0.indexer_cache");
  EXPECT_FALSE(none.techniques["pins"][0].at("placed").get<bool>());
  EXPECT_EQ(none.get_metric("pins_not_placed"), 1.0);
  ASSERT_FALSE(none.warnings.empty());
  EXPECT_NE(none.warnings[0].find("L0.indexer_cache"), std::string::npos) << none.warnings[0];
}

namespace {

// GLM-5.3-Flash with four 64-dimensional indexer vectors a token (configs/workloads/glm-5.3-flash-4v),
// cut to one KDA and three DSA layers with small MLPs.
sim::RunSpec four_vectors(const std::string& techniques, std::vector<std::string> extra = {}) {
  sim::RunSpec s;
  s.hardware = "h200";
  s.workload = "glm-5.3-flash-4v";
  s.techniques = techniques;
  s.step.context = 32768;
  s.fast = true;
  s.sets = {"workload.model.num_layers=4",
            "workload.layers=[{first: 0, last: 3, attention: linear, mlp: dense}, {first: 1, last: 3, attention: dsa, indexer: full}]",
            "workload.model.vocab_size=2048", "workload.mlp.dense_intermediate_size=1024"};
  for (auto& e : extra) s.sets.push_back(e);
  return s;
}

double kind_bytes(const sim::RunResult& r, const std::string& kind, bool written = false) {
  double b = 0;
  for (const auto& k : r.kernels)
    if (k.kind == kind) b += double(written ? k.bytes_written : k.bytes_read);
  return b;
}

double kind_ns(const sim::RunResult& r, const std::string& kind) {
  double ns = 0;
  for (const auto& k : r.kernels)
    if (k.kind == kind) ns += k.duration_ns();
  return ns;
}

}  // namespace

TEST(TechniqueTiming, PoolingAlongVectorsShrinksTheScanByTheRatio) {
  // An entry of V vectors of D FP8 elements and a 4 B scale: V D + 4 bytes. Pooling r:1 stores
  // V / r of them: the cache holds (V D / r + 4) / (V D + 4) of the bytes (4 x 64: 68 / 260 at 4:1,
  // 132 / 260 at 2:1), and a decode step's scan, which reads the cache once, reads that many fewer.
  const auto raw = sim::simulate(four_vectors("baseline", {"step.context=131072"}));
  const auto p4 = sim::simulate(four_vectors("indexpool-vectors", {"step.context=131072"}));
  const auto p2 = sim::simulate(four_vectors("indexpool-vectors", {"step.context=131072", "techniques.index_pool.ratio=2"}));
  const auto cache = [](const sim::RunResult& r) { return r.get_metric("footprint_indexer_cache"); };
  EXPECT_NEAR(cache(p4) / cache(raw), 68.0 / 260.0, 1e-3);
  EXPECT_NEAR(cache(p2) / cache(raw), 132.0 / 260.0, 1e-3);
  const double s_raw = kind_bytes(raw, "indexer_score"), s4 = kind_bytes(p4, "indexer_score"), s2 = kind_bytes(p2, "indexer_score");
  EXPECT_NEAR((s_raw - s4) / (cache(raw) - cache(p4)), 1.0, 0.01);
  EXPECT_NEAR((s_raw - s2) / (cache(raw) - cache(p2)), 1.0, 0.01);
  EXPECT_LT(p4.step_ns, raw.step_ns);
  // The gate reads its weights and, per new token, h_t (hidden x 2 B) and the 4 raw vectors.
  const double hidden = 4096, gate = p4.techniques["report"]["index_pool"]["gate_bytes_read_per_step"].get<double>();
  EXPECT_NEAR(kind_bytes(p4, "pool_gate"), 3 * (gate + hidden * 2 + 4 * 64), 3 * 64.0);
}

TEST(TechniqueTiming, PoolingPrecisionAndUpdateFrequencyShowInTheStep) {
  // fp32 doubles the gate's parameter bytes and moves its math to the CUDA cores; update_every 3
  // reads a third of the weights a step and recomputes a third of the logits. Both show in the gate
  // kernels' time (the step may hide them: the gate need not be on its critical path). At batch 8
  // the gate's 8 CTAs read 131 KiB and its time follows its bytes; at batch 1 its CTAs take one
  // memory round trip, which a few KiB more or less do not move.
  const auto fp16 = sim::simulate(four_vectors("indexpool-vectors", {"step.batch=8", "step.context=4096"}));
  const auto fp32 = sim::simulate(four_vectors("indexpool-vectors", {"step.batch=8", "step.context=4096", "techniques.index_pool.precision=fp32"}));
  const auto every3 = sim::simulate(four_vectors("indexpool-vectors", {"step.batch=8", "step.context=4096", "techniques.index_pool.update_every=3"}));
  const auto& r16 = fp16.techniques["report"]["index_pool"];
  EXPECT_EQ(fp32.techniques["report"]["index_pool"]["gate_bytes_per_layer"].get<double>(), 2 * r16["gate_bytes_per_layer"].get<double>());
  EXPECT_NEAR(every3.techniques["report"]["index_pool"]["gate_bytes_read_per_step"].get<double>(),
              r16["gate_bytes_read_per_step"].get<double>() / 3, 1.0);
  EXPECT_GT(kind_ns(fp32, "pool_gate"), kind_ns(fp16, "pool_gate"));
  EXPECT_LT(kind_ns(every3, "pool_gate"), kind_ns(fp16, "pool_gate"));
  EXPECT_LT(kind_bytes(every3, "pool_gate"), kind_bytes(fp16, "pool_gate"));
}

TEST(TechniqueTiming, AVectorsRatioThatDoesNotDivideTheVectorsIsAConfigError) {
  try {
    sim::simulate(four_vectors("indexpool-vectors", {"techniques.index_pool.ratio=3"}));
    FAIL() << "ratio 3 of 4 vectors was accepted";
  } catch (const config::ConfigError& e) {
    EXPECT_EQ(e.path, "index_pool.ratio") << e.what();
    EXPECT_NE(std::string(e.what()).find("vectors_per_token"), std::string::npos) << e.what();
  }
  try {
    sim::simulate(small("indexpool", {"techniques.index_pool.axis=vectors", "techniques.index_pool.recent_full=0"}));
    FAIL() << "axis vectors ran on a one-vector model";
  } catch (const config::ConfigError& e) {
    EXPECT_EQ(e.path, "index_pool.axis") << e.what();
  }
}

TEST(TechniqueTiming, AChunksPrefetchReadsEachSelectedRowOnce) {
  // A prefill chunk's queries select mostly the same rows, and each query tile's CTAs share theirs:
  // IndexShare's prefetch brings each distinct row in once, so it reads at most the `context` rows
  // the chunk can select (a GLM-5 FP8 row is 656 B, at most 7 lines of 128 B), not queries x
  // selected rows (here 128 x 1024 of them, 128x more).
  const uint64_t context = 1024;
  auto spec = small("indexshare", {"techniques.index_share.first_layer_sram=false", "workload.model.num_layers=4",
                                   "workload.layers=[{first: 0, last: 3, attention: dsa, indexer: full, mlp: dense}]"},
                    context);
  spec.step.phase = trace::Phase::prefill;
  spec.step.chunk_tokens = 128;
  const auto r = sim::simulate(spec);
  int prefetches = 0;
  for (const auto& k : r.kernels) {
    if (k.kind != "kv_prefetch") continue;
    ++prefetches;
    EXPECT_LE(double(k.bytes_read), double(context) * 7 * 128) << k.name;
    EXPECT_GT(k.bytes_read, 0u) << k.name;
  }
  EXPECT_GT(prefetches, 0);
}
