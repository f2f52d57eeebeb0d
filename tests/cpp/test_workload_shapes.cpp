// SPDX-License-Identifier: Apache-2.0
// Workload configs: every shipped file loads; layer rules expand as the models define them; config
// mistakes stop with an error naming the file, the key path, the value and the rule.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <sstream>

#include "tests/cpp/test_trace_util.hpp"
#include "traces/generators/model_shape.hpp"

using namespace indexsim::trace;
using indexsim::config::ConfigError;
using indexsim::config::Document;
using indexsim::test::shipped_workloads;
using indexsim::test::workload_file;

namespace {
std::string file_text(const std::string& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}
// Loads YAML text as the CLI does (read, then reject unused keys).
ModelShape load_text(const std::string& text, const std::string& name) {
  auto doc = Document::load_string(text, name);
  ModelShape m = load_model_shape(doc->root());
  doc->check_unused();
  return m;
}
}  // namespace

TEST(WorkloadShapes, EveryShippedConfigLoadsWithoutUnknownKeys) {
  for (const auto& w : shipped_workloads()) {
    SCOPED_TRACE(w);
    const ModelShape m = load_model_shape_file(workload_file(w));
    EXPECT_EQ(m.name, w);
    EXPECT_EQ(m.layers.size(), m.num_layers);
    EXPECT_FALSE(m.resolved.empty());
    EXPECT_GT(m.footprint(1, 1).at(TensorClass::weights), 0u);
  }
}

// GLM-5.2: full iff layer < 3 or (layer - 2) % 4 == 0, i.e. {0, 1, 2, 6, ..., 74}: 21 full, 57 shared;
// a shared layer takes its top-k from the nearest full layer before it.
TEST(WorkloadShapes, Glm52RunsTheIndexerOn21LayersByTheModelsRule) {
  const ModelShape m = load_model_shape_file(workload_file("glm-5.2"));
  int full = 0;
  int last_full = -1;
  for (int l = 0; l < 78; ++l) {
    const bool want_full = l < 3 || (l - 2) % 4 == 0;
    EXPECT_EQ(m.layers[l].indexer, want_full ? IndexerMode::full : IndexerMode::shared) << "layer " << l;
    if (want_full) last_full = l;
    EXPECT_EQ(m.layers[l].topk_source, last_full) << "layer " << l;
    full += want_full;
  }
  EXPECT_EQ(full, 21);
  EXPECT_EQ(m.count_indexer_layers(), 21);
  EXPECT_EQ(m.layers[2].mlp, MlpKind::dense);
  EXPECT_EQ(m.layers[3].mlp, MlpKind::moe);
}

TEST(WorkloadShapes, LayerKindsOfTheOtherModels) {
  const ModelShape ds = load_model_shape_file(workload_file("deepseek-v3.2"));
  EXPECT_EQ(ds.count_indexer_layers(), 61);  // every DeepSeek-V3.2 layer has its own indexer
  EXPECT_EQ(ds.count_layers(AttentionKind::dsa), 61);
  const ModelShape g5 = load_model_shape_file(workload_file("glm-5"));
  EXPECT_EQ(g5.count_indexer_layers(), 78);
  const ModelShape fl = load_model_shape_file(workload_file("glm-5.3-flash"));
  EXPECT_EQ(fl.count_layers(AttentionKind::dsa), 11);  // 45 = 11 DSA + 34 KDA
  EXPECT_EQ(fl.count_layers(AttentionKind::linear), 34);
  EXPECT_EQ(fl.indexer.pool_tokens, 4u);
}

// Storage formats: indexer 128 FP8 + 4 B scale = 132 B/token/layer; FlashMLA FP8 KV 656 B; with
// 4:1 pooling one 132-B entry covers 4 tokens (33 B/token), and a linear layer stores no KV.
TEST(WorkloadShapes, BytesPerTokenFollowTheStorageFormats) {
  const ModelShape ds = load_model_shape_file(workload_file("deepseek-v3.2"));
  EXPECT_EQ(ds.indexer.bytes_per_entry(), 128u * 1 + 4);
  EXPECT_DOUBLE_EQ(ds.indexer_bytes_per_token(0), 132.0);
  EXPECT_EQ(ds.kv_bytes_per_token(0), 656u);
  const ModelShape g52 = load_model_shape_file(workload_file("glm-5.2"));
  EXPECT_DOUBLE_EQ(g52.indexer_bytes_per_token(3), 0.0);  // shared layer: no keys of its own
  const ModelShape fl = load_model_shape_file(workload_file("glm-5.3-flash"));
  EXPECT_DOUBLE_EQ(fl.indexer_bytes_per_token(3), 132.0 / 4);
  EXPECT_EQ(fl.kv_bytes_per_token(0), 0u);
  EXPECT_EQ(fl.indexer_entries(10), 10u / 4 + 10u % 4);  // 2 complete pools + 2 raw tail keys
}

// One GPU's share under TP 8 / EP 8: GLM-5 has 64/8 = 8 heads and 256/8 = 32 experts per GPU;
// footprint at context c, batch b: KV = 78·c·656·b, indexer = 78·c·132·b.
TEST(WorkloadShapes, FootprintIsOneGpusShare) {
  const ModelShape m = load_model_shape_file(workload_file("glm-5"));
  EXPECT_EQ(m.local_heads(), 8u);
  EXPECT_EQ(m.local_routed_experts(), 32u);
  EXPECT_EQ(m.local_index_heads(), 32u);  // the indexer is replicated
  const uint64_t c = 1 << 20, b = 2;
  const auto f = m.footprint(c, b);
  EXPECT_EQ(f.at(TensorClass::kv_cache), 78ull * c * 656 * b);
  EXPECT_EQ(f.at(TensorClass::indexer_cache), 78ull * c * 132 * b);
  // Routed experts dominate the weights: 75 MoE layers × 32 local experts × 3·6144·2048 FP8 bytes.
  const uint64_t experts = 75ull * 32 * 3 * 6144 * 2048;
  EXPECT_GT(f.at(TensorClass::weights), experts);
  EXPECT_LT(f.at(TensorClass::weights), experts * 2);
}

TEST(WorkloadShapes, AMisspeltKeyIsAnErrorNamingFileAndPath) {
  std::string text = file_text(workload_file("glm-5"));
  text = std::regex_replace(text, std::regex("\n  topk: 2048"), "\n  top_k: 2048\n  topk: 2048");
  try {
    load_text(text, "glm-5-typo.yaml");
    FAIL() << "misspelt key accepted";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.file, "glm-5-typo.yaml");
    EXPECT_EQ(e.path, "indexer.top_k");
    EXPECT_EQ(e.value, "2048");
    EXPECT_NE(e.rule.find("unknown key"), std::string::npos);
  }
}

TEST(WorkloadShapes, AMissingKeyIsAnErrorNamingThePath) {
  std::string text = file_text(workload_file("deepseek-v3.2"));
  text = std::regex_replace(text, std::regex("\n  kv_bytes_per_token: 656[^\n]*"), "");
  try {
    load_text(text, "ds.yaml");
    FAIL() << "missing key accepted";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.path, "attention.kv_bytes_per_token");
    EXPECT_NE(e.rule.find("missing"), std::string::npos);
  }
}

TEST(WorkloadShapes, ANegativeSizeBreaksTheRuleAndSaysWhich) {
  std::string text = file_text(workload_file("glm-5"));
  text = std::regex_replace(text, std::regex("hidden_size: 6144"), "hidden_size: -6144");
  try {
    load_text(text, "g.yaml");
    FAIL() << "negative size accepted";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.path, "model.hidden_size");
    EXPECT_EQ(e.value, "-6144");
    EXPECT_NE(std::string(e.what()).find("g.yaml"), std::string::npos);
  }
}

TEST(WorkloadShapes, HeadsThatDoNotSplitOverTheGpusAreAnError) {
  try {
    load_model_shape_file(workload_file("glm-5"), {"attention.num_heads=60"});
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.path, "attention.num_heads");
    EXPECT_NE(e.rule.find("divisible"), std::string::npos);
  }
}

TEST(WorkloadShapes, LayerRulesMustCoverEveryLayer) {
  std::string text = file_text(workload_file("glm-5"));
  text = std::regex_replace(text, std::regex("\\{first: 0, last: 77, attention: dsa"), "{first: 0, last: 76, attention: dsa");
  try {
    load_text(text, "g.yaml");
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.path, "layers");
    EXPECT_EQ(e.value, "layer 77");
  }
}

TEST(WorkloadShapes, SetOverridesAnyKey) {
  const ModelShape m = load_model_shape_file(workload_file("glm-5"), {"indexer.topk=1024"});
  EXPECT_EQ(m.indexer.topk, 1024u);
  EXPECT_EQ(m.resolved["indexer"]["topk"], 1024);
}

// Whole-model parameter counts against the published sizes (checks, not inputs): GLM-5.3-Flash
// 321B total / 18B active (a third-party summary, reference/workloads.md), DeepSeek-V3.2 671B
// (its config file's name, config_671B_v3.2.json). The count has no MTP layer: the published
// totals include GLM-5.3-Flash's (one more DSA + MoE layer) but not DeepSeek's (685B with it).
TEST(WorkloadShapes, ParameterCountsMatchThePublishedSizes) {
  const auto fl = load_model_shape_file(workload_file("glm-5.3-flash")).parameters();
  EXPECT_NEAR(double(fl.total) / 321e9, 1.0, 0.03) << fl.total;
  EXPECT_NEAR(double(fl.active) / 18e9, 1.0, 0.03) << fl.active;
  const auto ds = load_model_shape_file(workload_file("deepseek-v3.2")).parameters();
  EXPECT_NEAR(double(ds.total) / 671e9, 1.0, 0.01) << ds.total;
  // Per GPU is not the model: the deployment splits heads and experts, the count does not.
  const ModelShape g = load_model_shape_file(workload_file("glm-5"));
  EXPECT_GT(g.parameters().total, g.layer_params(10).total() * g.num_layers);
}
