// SPDX-License-Identifier: Apache-2.0
// Consecutive decode steps on one hardware state (`RunSpec::steps`, `run --steps`), and the seeds'
// NPU_CACHE_POLICY applied to the SRAM (`placement.npu_cache_policy`).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>

#include "sim/engine/simulation.hpp"
#include "tests/cpp/test_small_models.hpp"

using namespace indexsim;

namespace {

// IndexShare pins the first layer's indexer cache to the SRAM.
sim::RunSpec glm52(uint64_t context, const std::vector<std::string>& sets = {}) {
  return test::four_layer_glm52("h200", "indexshare", context, sets);
}

}  // namespace

TEST(Steps, TheFirstOfSeveralStepsIsTheOneStepRunAndLaterOnesFindTheCachesWarm) {
  auto one = glm52(16384, {"techniques.placement.npu_cache_policy=lru"});
  auto three = one;
  three.steps = 3;
  const auto r1 = sim::simulate(one), r3 = sim::simulate(three);
  EXPECT_DOUBLE_EQ(r3.get_metric("step_time_first"), r1.get_metric("step_time"));
  EXPECT_EQ(r3.get_metric("steps"), 3.0);
  // The first layer's 2.1 MB of index fit the 12 MiB SRAM cache: cold in step 1 (every line
  // missed once), all hits by step 3.
  EXPECT_LT(r1.get_metric("sram_hit_rate"), 0.01);
  EXPECT_GT(r3.get_metric("sram_hit_rate"), 0.99);
  // So the first layer's scoring, which reads that index, is no slower in step 3. (The step as a
  // whole may be: it starts with the L2 full of the step before's dirty lines to write back, where
  // step 1 found it empty; the small weight GEMMs move by up to 15 % either way.)
  auto scoring_ns = [](const sim::RunResult& r) {
    for (const auto& k : r.kernels)
      if (k.name == "L0.indexer_score") return k.end_ns - k.start_ns;
    ADD_FAILURE() << "no L0.indexer_score";
    return 0.0;
  };
  EXPECT_LT(scoring_ns(r3), scoring_ns(r1));
  EXPECT_EQ(r3.config.at("steps"), 3);
  EXPECT_FALSE(r1.config.contains("steps"));  // a one-step run keeps its key
}

TEST(Steps, TheKvIndexHitRateIsTheShareOfKvAndIndexBytesServedOnChip) {
  // kv_index_on_chip = sum of read_hit_bytes.{kv_cache,indexer_cache} / sum of read_bytes of the
  // same, over the units that count reads by tag (the L2, the SRAM). One step from cold caches: the
  // first layer's index misses in the SRAM cache; by the third step it is held there, so the share
  // grows, and a step's share never trips less than the seeds' 95 % would say.
  auto one = glm52(16384, {"techniques.placement.npu_cache_policy=lru"});
  auto three = one;
  three.steps = 3;
  const auto r1 = sim::simulate(one), r3 = sim::simulate(three);
  double read = 0, hit = 0;
  for (const auto& row : r1.components.rows())
    for (const std::string cls : {"kv_cache", "indexer_cache"}) {
      if (row.statistic == "read_bytes." + cls) read += row.value;
      if (row.statistic == "read_hit_bytes." + cls) hit += row.value;
    }
  ASSERT_GT(read, 0.0);
  EXPECT_DOUBLE_EQ(r1.get_metric("kv_index_on_chip"), hit / read);
  EXPECT_GT(r1.components.get("sram", "read_bytes.indexer_cache"), 0.0);
  EXPECT_GT(r3.get_metric("kv_index_on_chip"), r1.get_metric("kv_index_on_chip"));
  const bool tripped = std::any_of(r1.techniques["thresholds_tripped"].begin(), r1.techniques["thresholds_tripped"].end(),
                                   [](const auto& t) { return t == "kv_index_on_chip"; });
  EXPECT_EQ(tripped, r1.get_metric("kv_index_on_chip") < 0.95);
}

TEST(Steps, TheCachePolicyChangesTheSram) {
  // The hardware's SRAM is a scratchpad; the techniques' policy replaces it, and the run says so.
  const auto scratch = sim::simulate(glm52(131072));
  const auto lru = sim::simulate(glm52(131072, {"techniques.placement.npu_cache_policy=lru"}));
  EXPECT_EQ(scratch.config["hardware"]["memory"]["sram"]["policy"], "scratchpad");
  EXPECT_EQ(lru.config["hardware"]["memory"]["sram"]["policy"], "lru");
  // 16.5 MiB of first-layer index: the 12 MiB scratchpad holds the part that fits (a copy of the
  // first entries of every page); a cache is a window on HBM, so the whole cache is pinned to it.
  EXPECT_EQ(scratch.techniques["pins"][0]["tensor"], "L0.indexer_cache.sram");
  EXPECT_TRUE(scratch.techniques["pins"][0]["placed"].get<bool>());
  EXPECT_EQ(lru.techniques["pins"][0]["tensor"], "L0.indexer_cache");
  EXPECT_TRUE(lru.techniques["pins"][0]["placed"].get<bool>());
  // A cyclic scan bigger than the cache: LRU evicts each line just before its next use, FIFO less
  // so across the hashed sets; steady state after two steps.
  auto lru2 = glm52(131072, {"techniques.placement.npu_cache_policy=lru"}), fifo2 = glm52(131072, {"techniques.placement.npu_cache_policy=fifo"});
  lru2.steps = fifo2.steps = 2;
  const double h_lru = sim::simulate(lru2).get_metric("sram_hit_rate"), h_fifo = sim::simulate(fifo2).get_metric("sram_hit_rate");
  EXPECT_GT(h_lru, 0.0);
  EXPECT_LT(h_lru, 0.9);
  EXPECT_NE(h_lru, h_fifo);
}

TEST(Steps, OutOfRangeStepsAreRefused) {
  auto s = glm52(16384);
  s.steps = 0;
  EXPECT_THROW(sim::simulate(s), std::invalid_argument);
}

TEST(Steps, TheSeedsEnvironmentVariableWinsAndIsRecorded) {
  struct Env {
    Env() { setenv("NPU_CACHE_POLICY", "fifo", 1); }
    ~Env() { unsetenv("NPU_CACHE_POLICY"); }
  } env;
  const auto r = sim::simulate(glm52(16384));
  EXPECT_EQ(r.config["hardware"]["memory"]["sram"]["policy"], "fifo");
  EXPECT_EQ(r.config["techniques"]["placement"]["npu_cache_policy"], "fifo");
  EXPECT_EQ(r.config["placement_env"], nlohmann::json::array({"NPU_CACHE_POLICY"}));
}
