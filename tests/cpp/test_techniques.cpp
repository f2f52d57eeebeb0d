// SPDX-License-Identifier: Apache-2.0
// Memory accounting of the techniques, exact to the byte, on the shipped workload shapes.
#include <gtest/gtest.h>

#include "sim/core/paths.hpp"
#include "sim/techniques/techniques.hpp"
#include "tests/cpp/test_trace_util.hpp"
#include "traces/generators/emulate.hpp"

using namespace indexsim;
using trace::TensorClass;

namespace {

trace::ModelShape shape_with(const std::string& workload, const std::string& techniques_yaml) {
  trace::ModelShape m = trace::load_model_shape_file(sim::find_config("workloads", workload));
  auto doc = config::Document::load_string(techniques_yaml, "techniques.yaml");
  sim::TechniquePipeline::load(doc->root()).reshape(m);
  return m;
}

uint64_t bytes_of(const trace::TraceData& t, TensorClass c, const std::string& name_suffix = "") {
  uint64_t s = 0;
  for (const auto& x : t.tensors)
    if (x.cls == c && (name_suffix.empty() || (x.name.size() >= name_suffix.size() &&
                                                   x.name.compare(x.name.size() - name_suffix.size(), name_suffix.size(),
                                                                  name_suffix) == 0)))
      s += x.bytes;
  return s;
}

trace::TraceData step(const trace::ModelShape& m, uint64_t context) {
  trace::StepParams p;
  p.context = context;
  return trace::emulate_step(m, p, indexsim::test::hopper_limits());
}

}  // namespace

TEST(TechniqueAccounting, PoolingCutsTheIndexerCacheToAQuarterPlusTheRecentWindow) {
  // GLM-5, 78 indexer layers, 132 B per entry, C = 1,048,576 tokens, R = 1024 recent tokens kept:
  // entries = R + (C - R) / 4 + (C - R) % 4 = 1024 + 261,888 + 0 = 262,912 per layer.
  const uint64_t C = 1 << 20, R = 1024;
  auto base = shape_with("glm-5", "name: none\n");
  auto pooled = shape_with("glm-5", "index_pool: {ratio: 4, axis: tokens, recent_full: 1024}\n");
  const auto t0 = step(base, C), t1 = step(pooled, C);
  const uint64_t layers = uint64_t(base.count_indexer_layers());
  EXPECT_EQ(bytes_of(t0, TensorClass::indexer_cache), layers * C * 132);
  EXPECT_EQ(bytes_of(t1, TensorClass::indexer_cache), layers * (R + (C - R) / 4 + (C - R) % 4) * 132);
}

TEST(TechniqueAccounting, PoolingAddsTheGateParametersPerLayer) {
  // Sigmoid gate over [h_t; V]: (hidden + dim + 1) parameters in fp16 per indexer layer:
  // GLM-5: (6144 + 128 + 1) x 2 B = 12,546 B per layer.
  // One pipeline reshapes the model and then rewrites its DAG, as a run does.
  trace::ModelShape m = trace::load_model_shape_file(sim::find_config("workloads", "glm-5"));
  auto doc = config::Document::load_string("index_pool: {ratio: 4, axis: tokens, precision: fp16}\n", "t.yaml");
  const auto pipeline = sim::TechniquePipeline::load(doc->root());
  pipeline.reshape(m);
  trace::TraceData t = step(m, 4096);
  sim::Workload w(t.metadata, t.tensors, t.kernels, t.accesses);
  nlohmann::json report;
  sim::PlacementPolicy pol;
  sim::TechniqueContext ctx{&m, &pol, &report};
  pipeline.transform(w, ctx);
  uint64_t gate = 0;
  int kernels = 0;
  for (const auto& x : w.tensors())
    if (x.name.find("pool_gate") != std::string::npos) gate += x.bytes;
  for (const auto& k : w.kernels())
    if (k.rec.kind == trace::KernelKind::pool_gate) ++kernels;
  EXPECT_EQ(gate, uint64_t(m.count_indexer_layers()) * (6144 + 128 + 1) * 2);
  EXPECT_EQ(kernels, m.count_indexer_layers());
}

TEST(TechniqueAccounting, Glm52RuleKeepsIndexerCachesFor21Of78Layers) {
  // IndexShare with full_first_layers 3 and group 4 on GLM-5: full iff l < 3 or (l - 2) % 4 == 0,
  // i.e. 3 + |{6, 10, ..., 74}| = 3 + 18 = 21 layers keep an indexer cache.
  auto m = shape_with("glm-5", "index_share: {group: 4, full_first_layers: 3}\n");
  EXPECT_EQ(m.count_indexer_layers(), 21);
  const auto t = step(m, 65536);
  EXPECT_EQ(bytes_of(t, TensorClass::indexer_cache), 21ull * 65536 * 132);
  // And it matches the published GLM-5.2 config, which states the same rule.
  EXPECT_EQ(trace::load_model_shape_file(sim::find_config("workloads", "glm-5.2")).count_indexer_layers(), 21);
}

TEST(TechniqueAccounting, QuantisedStorageBytesPerEntry) {
  // fp4 + fp32 scale: 128 x 0.5 + 4 = 68 B (DeepSeek's MXFP4 variant); bf16: 256 B, no scale.
  EXPECT_EQ(shape_with("deepseek-v3.2", "quantize: {indexer: fp4}\n").indexer.bytes_per_entry(), 68u);
  EXPECT_EQ(shape_with("deepseek-v3.2", "quantize: {indexer: bf16}\n").indexer.bytes_per_entry(), 256u);
  // KV: FlashMLA FP8 = 512 + 4 x 4 + 64 x 2 = 656 B; BF16 = 1024 + 128 = 1152 B.
  EXPECT_EQ(shape_with("deepseek-v3.2", "quantize: {kv: fp8}\n").mla.kv_bytes_per_token, 656u);
  EXPECT_EQ(shape_with("deepseek-v3.2", "quantize: {kv: bf16}\n").mla.kv_bytes_per_token, 1152u);
}

TEST(TechniqueAccounting, DimPruneKeepsTheMeasuredShareOfDimensions) {
  // A fixed count: 64 of 128 dims + the 4 B scale = 68 B per entry.
  EXPECT_EQ(shape_with("glm-5", "dim_prune: {keep_dims: 64}\n").indexer.bytes_per_entry(), 68u);
  // Measured at 95 % variance on the fixture: fewer dims than at 99 %, more than at 90 %.
  const auto d90 = shape_with("glm-5", "dim_prune: {variance_share: 0.90}\n").indexer.head_dim;
  const auto d95 = shape_with("glm-5", "dim_prune: {variance_share: 0.95}\n").indexer.head_dim;
  const auto d99 = shape_with("glm-5", "dim_prune: {variance_share: 0.99}\n").indexer.head_dim;
  EXPECT_LT(d90, d95);
  EXPECT_LT(d95, d99);
  EXPECT_LE(d99, 128u);
}

TEST(TechniqueAccounting, PoolingAlongVectorsOfAOneVectorModelIsAConfigError) {
  EXPECT_THROW(shape_with("glm-5", "index_pool: {ratio: 4, axis: vectors}\n"), config::ConfigError);
}
