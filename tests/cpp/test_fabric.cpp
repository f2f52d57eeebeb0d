// SPDX-License-Identifier: Apache-2.0
// The NVLink fabric and the collectives on it.
//  - The port alone: stores leave one after another at links x effective GB/s and complete when
//    their last byte is on the wire; a load completes a switch round trip later.
//  - The plans (NCCL's model): a ring all-reduce of S bytes over n GPUs sends 2(n-1)/n S and waits
//    base + 2(n-1) step latencies; NVLS sends S (times its wire factor), about half; an all-to-all
//    sends (n-1)/n S. NVLS runs NCCL's own channels and chunks; NCCL chooses by its own expected
//    bandwidth (its refinements per protocol, its tree correction), not by the wire bytes.
//  - Simulated: a large ring all-reduce takes 2(n-1)/n S / B plus its latency terms; an all-to-all
//    is bounded by the per-GPU link bandwidth.
#include <gtest/gtest.h>

#include <cmath>

#include "models/common/params.hpp"
#include "models/fabric/nvlink.hpp"
#include "sim/validation/kernel_bench.hpp"
#include "tests/cpp/test_trace_util.hpp"
#include "traces/generators/collective_kernels.hpp"
#include "traces/generators/emulate.hpp"
#include "traces/generators/model_shape.hpp"

using namespace indexsim;
using indexsim::model::kNever;
using indexsim::model::Tick;

namespace {

model::NvlinkParams port_params() {
  model::NvlinkParams p;
  p.links = 18;
  p.link_GBps_per_direction = 25;
  p.link_effective_GBps = 20;
  p.switch_latency_ns = 500;
  p.queue_entries = 4;
  return p;
}

trace::FabricLimits h200_fabric() { return test::hopper_limits().fabric; }

// A decode step at 4096 tokens of `workload` with the `set` assignments applied to it.
trace::TraceData decode_step(const std::string& workload, const std::vector<std::string>& sets,
                             trace::ModelShape* shape = nullptr) {
  auto doc = config::Document::load_file(test::workload_file(workload));
  for (const auto& s : sets) doc->set(s);
  const auto m = trace::load_model_shape(doc->root());
  if (shape) *shape = m;
  trace::StepParams p;
  p.phase = trace::Phase::decode;
  p.context = 4096;
  return trace::emulate_step(m, p, test::hopper_limits());
}

sim::KernelRun run_collective(const std::string& op, uint64_t bytes, const std::vector<std::string>& sets = {}) {
  auto doc = config::Document::load_string("bytes: " + std::to_string(bytes) + "\ngpus: 8\n", "test");
  const sim::KernelCase kc = sim::read_kernel_case(op, doc->root());
  return sim::run_kernel_case(kc, "h200", sets, true);
}

}  // namespace

TEST(NvlinkPort, StoresLeaveAtTheLinksBandwidthAndLoadsAddTheRoundTrip) {
  const auto p = port_params();
  model::NvlinkPort port(p);
  const double ps_per_byte = 1000.0 / (p.links * p.link_effective_GBps);  // 360 GB/s
  for (uint64_t i = 0; i < 3; ++i) ASSERT_TRUE(port.try_enqueue({i, i * 2048, 2048, true, 0}, 0));
  ASSERT_TRUE(port.try_enqueue({3, 0, 2048, false, 0}, 0));
  EXPECT_FALSE(port.try_enqueue({4, 0, 2048, true, 0}, 0)) << "a full queue refuses";
  std::vector<model::MemCompletion> done;
  port.advance(kNever - 1, done);
  ASSERT_EQ(done.size(), 4u);
  const Tick one = Tick(std::ceil(2048 * ps_per_byte));
  for (uint64_t i = 0; i < 3; ++i) EXPECT_EQ(done[i].done, (i + 1) * one) << "store " << i;
  EXPECT_EQ(done[3].done, 4 * one + 2 * model::ns_to_ps(p.switch_latency_ns)) << "the load";
  EXPECT_DOUBLE_EQ(port.peak_bandwidth_GBps(), 18 * 25.0);
}

TEST(NvlinkPort, EffectiveBandwidthAboveTheSignallingRateIsRefusedByName) {
  auto doc = config::Document::load_string(
      "links: 18\nlink_GBps_per_direction: 25\nlink_effective_GBps: 30\nswitch_latency_ns: 500\n"
      "queue_entries: 8\n",
      "fabric.yaml");
  try {
    model::NvlinkParams::from(doc->root());
    FAIL();
  } catch (const config::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("link_effective_GBps"), std::string::npos) << e.what();
  }
}

TEST(CollectivePlan, RingAllReduceSendsTwoNMinusOneOverNAndWaitsItsSteps) {
  auto f = h200_fabric();
  f.pinned_algo = int(trace::CollAlgo::ring);
  f.pinned_proto = int(trace::CollProto::simple);
  const uint64_t S = 64ull << 20;
  const uint32_t n = 8;
  const auto p = trace::plan_collective(trace::KernelKind::all_reduce, S, n, f);
  EXPECT_EQ(p.steps, 2 * (n - 1));
  EXPECT_EQ(p.wire_bytes, uint64_t(std::ceil(double(S) * 2 * (n - 1) / n)));
  const double lat = f.base_latency_us[0][2] + 2 * (n - 1) * f.step_latency_us[0][2];  // ring, simple
  EXPECT_DOUBLE_EQ(p.latency_us, lat);
  EXPECT_NEAR(p.predicted_us, lat + double(p.wire_bytes) / (f.total_GBps() * 1e3), 1e-9);
  EXPECT_EQ(p.channels, f.max_channels);
}

TEST(CollectivePlan, NvlsSendsTheMessageOnceAboutHalfOfARing) {
  auto f = h200_fabric();
  ASSERT_TRUE(f.nvls);
  f.nvls_wire_factor = 1.0;  // the bytes themselves, without the multimem overhead
  f.nvls_efficiency = 1.0;
  const uint64_t S = 256ull << 20;
  const uint32_t n = 8;
  f.pinned_algo = int(trace::CollAlgo::nvls);
  const auto nvls = trace::plan_collective(trace::KernelKind::all_reduce, S, n, f);
  f.pinned_algo = int(trace::CollAlgo::ring);
  f.pinned_proto = int(trace::CollProto::simple);
  const auto ring = trace::plan_collective(trace::KernelKind::all_reduce, S, n, f);
  EXPECT_EQ(nvls.wire_bytes, S);
  EXPECT_NEAR(double(nvls.wire_bytes) / double(ring.wire_bytes), double(n) / (2 * (n - 1)), 1e-6);
  EXPECT_DOUBLE_EQ(nvls.latency_us, f.step_latency_us[int(trace::CollAlgo::nvls)][int(trace::CollProto::simple)]);
}

// NVLS at efficiency e holds the links S * nvls_wire_factor / e as long as S bytes would take:
// predicted = latency + S * w / e / B, and the simulated kernel writes that many bytes to the port.
TEST(CollectivePlan, NvlsEfficiencyStretchesItsLinkTime) {
  auto f = h200_fabric();
  f.pinned_algo = int(trace::CollAlgo::nvls);
  const uint64_t S = 64ull << 20;
  f.nvls_efficiency = 1.0;
  const auto full = trace::plan_collective(trace::KernelKind::all_reduce, S, 8, f);
  f.nvls_efficiency = 0.5;
  const auto half = trace::plan_collective(trace::KernelKind::all_reduce, S, 8, f);
  EXPECT_EQ(half.wire_bytes, uint64_t(std::ceil(double(S) * f.nvls_wire_factor / 0.5)));
  EXPECT_NEAR(half.predicted_us - half.latency_us, 2 * (full.predicted_us - full.latency_us), 1e-6);
  EXPECT_DOUBLE_EQ(half.latency_us, full.latency_us);
  // NCCL's choice sees it too: with NVLS at half efficiency a large all-reduce goes by ring.
  f.pinned_algo = -1;
  EXPECT_EQ(trace::plan_collective(trace::KernelKind::all_reduce, S, 8, f).algo, trace::CollAlgo::ring);
}

// NVLS as NCCL enqueues it (enqueue.cc): chunk c = 128 KiB, then 64 KiB if S < 64 x ch x n x c,
// 32 KiB if S < 8 x ch x n x c, 16 KiB if S < 2 x ch x n x c (each test on the chunk it reached);
// a channel's iteration covers n x c, so min(ch, ceil(S / (n x c))) channels carry data.
TEST(CollectivePlan, NvlsRunsItsOwnChannelsWithChunksThatShrinkForSmallMessages) {
  auto f = h200_fabric();
  ASSERT_EQ(f.nvls_channels, 16u);
  ASSERT_EQ(f.nvls_chunk_bytes, 128u * 1024);
  f.pinned_algo = int(trace::CollAlgo::nvls);
  struct Want {
    uint64_t bytes, chunk;
    uint32_t channels;
  };
  const uint64_t K = 1024, M = K * K;
  for (const Want& w : {Want{64 * K, 16 * K, 1}, Want{512 * K, 16 * K, 4}, Want{2 * M, 16 * K, 16},
                        Want{8 * M - 1, 16 * K, 16}, Want{8 * M, 32 * K, 16}, Want{64 * M, 64 * K, 16},
                        Want{1024 * M, 128 * K, 16}}) {
    const auto p = trace::plan_collective(trace::KernelKind::all_reduce, w.bytes, 8, f);
    EXPECT_EQ(p.chunk_bytes, w.chunk) << w.bytes << " B";
    EXPECT_EQ(p.channels, w.channels) << w.bytes << " B";
    EXPECT_EQ(p.threads, f.nvls_threads);
  }
  // Four GPUs are four heads: an iteration covers half as much, twice the channels have data.
  EXPECT_EQ(trace::plan_collective(trace::KernelKind::all_reduce, 512 * K, 4, f).channels, 8u);
  // The rings keep their own channel count and threads.
  f.pinned_algo = int(trace::CollAlgo::ring);
  f.pinned_proto = int(trace::CollProto::simple);
  const auto ring = trace::plan_collective(trace::KernelKind::all_reduce, 64 * M, 8, f);
  EXPECT_EQ(ring.channels, f.max_channels);
  EXPECT_EQ(ring.threads, f.threads[int(trace::CollProto::simple)]);
  EXPECT_EQ(ring.chunk_bytes, 0u);
}

// NCCL chooses by its own model: time = latency + S x movement / (B x share x corr), where share is
// tuning.cc's refinement (tree LL128 0.92 x 7/9, ring LL128 0.92, tree LL 0.92 / 3.8, ring LL 0.5) and corr the
// tree's correction at floor(log2(S / 64)) (4 MiB: index 16, LL128 0.8; 512 KiB: 13, LL 0.4). The
// simulated kernel still moves its wire bytes (S x movement x the protocol's wire factor).
TEST(CollectivePlan, NcclChoosesByItsOwnBandwidthModelAndTheKernelMovesItsWireBytes) {
  auto f = h200_fabric();
  f.nvls = false;
  const double B = f.total_GBps() * 1e3;  // bytes per microsecond
  const auto pinned = [&](uint64_t S, trace::CollAlgo a, trace::CollProto p) {
    auto g = f;
    g.pinned_algo = int(a);
    g.pinned_proto = int(p);
    return trace::plan_collective(trace::KernelKind::all_reduce, S, 8, g);
  };
  const uint64_t S = 4ull << 20;
  const auto tree = pinned(S, trace::CollAlgo::tree, trace::CollProto::ll128);
  const auto ring = pinned(S, trace::CollAlgo::ring, trace::CollProto::ll128);
  EXPECT_NEAR(tree.predicted_us, tree.latency_us + 2.0 * S / (B * 0.92 * 7 / 9 * 0.8), 0.01);
  EXPECT_NEAR(ring.predicted_us, ring.latency_us + 14.0 / 8 * S / (B * 0.92), 0.01);
  EXPECT_EQ(tree.wire_bytes, uint64_t(std::ceil(2.0 * S * f.wire_factor[int(trace::CollProto::ll128)])));
  const auto chosen = trace::plan_collective(trace::KernelKind::all_reduce, S, 8, f);
  EXPECT_LE(chosen.predicted_us, std::min(tree.predicted_us, ring.predicted_us));
  const uint64_t half_mib = 512ull << 10;
  const auto tree_ll = pinned(half_mib, trace::CollAlgo::tree, trace::CollProto::ll);
  EXPECT_NEAR(tree_ll.predicted_us, tree_ll.latency_us + 2.0 * half_mib / (B * 0.92 / 3.8 * 0.4), 0.01);
  // Ring LL: half the links, as its wire bytes are double.
  const auto ring_ll = pinned(half_mib, trace::CollAlgo::ring, trace::CollProto::ll);
  EXPECT_NEAR(ring_ll.predicted_us, ring_ll.latency_us + 14.0 / 8 * half_mib / (B * 0.5), 0.01);
}

TEST(CollectivePlan, BlackwellInOneDomainRunsTwentyFourNvlsChannels) {
  auto doc = config::Document::load_file(std::string(INDEXSIM_TEST_DATA) + "/../../configs/hardware/b200.yaml");
  const auto f = trace::read_fabric_limits(doc->root());
  EXPECT_EQ(f.nvls_channels, 24u);
  EXPECT_EQ(f.nvls_threads, 640u) << "the rest of the section's nvls block is kept";
}

TEST(CollectivePlan, NcclChoosesLowLatencyForSmallAndBandwidthForLargeMessages) {
  const auto f = h200_fabric();
  const auto small = trace::plan_collective(trace::KernelKind::all_reduce, 4096, 8, f);
  EXPECT_EQ(small.proto, trace::CollProto::ll);
  EXPECT_EQ(small.channels, 1u);
  const auto large = trace::plan_collective(trace::KernelKind::all_reduce, 1ull << 30, 8, f);
  EXPECT_EQ(large.proto, trace::CollProto::simple);
  EXPECT_EQ(large.algo, trace::CollAlgo::nvls);  // the least predicted time on an NVLS switch
  // All-to-all: (n-1)/n of the message leaves, point to point in Simple.
  const auto a2a = trace::plan_collective(trace::KernelKind::all_to_all, 8 << 20, 8, f);
  EXPECT_EQ(a2a.wire_bytes, uint64_t(std::ceil((8 << 20) * 7.0 / 8)));
  EXPECT_EQ(a2a.proto, trace::CollProto::simple);
}

TEST(CollectivePlan, GroupsTheFabricCannotServeAreRefusedByName) {
  auto f = h200_fabric();
  const auto what = [&](uint32_t gpus) {
    try {
      trace::plan_collective(trace::KernelKind::all_reduce, 4096, gpus, f);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(what(16).find("gpus_per_switch_domain"), std::string::npos) << what(16);
  EXPECT_NE(what(1).find("1 GPU"), std::string::npos) << what(1);
  f.domain_gpus = 0;
  EXPECT_NE(what(8).find("no fabric"), std::string::npos) << what(8);
  f = h200_fabric();
  f.pinned_algo = int(trace::CollAlgo::tree);
  EXPECT_THROW(trace::plan_collective(trace::KernelKind::all_gather, 4096, 8, f), std::invalid_argument);
}

TEST(CollectiveSim, LargeRingAllReduceTakesItsBusBytesOverTheLinksPlusItsLatency) {
  // 2(n-1)/n S / B + base + 2(n-1) step: the links are the bottleneck (HBM moves 10x more).
  const uint64_t S = 64ull << 20;
  const auto k = run_collective("all_reduce", S, {"hardware.collectives.algorithm=ring", "hardware.collectives.protocol=simple"});
  const auto f = h200_fabric();
  const double formula_us = f.base_latency_us[0][2] + 14 * f.step_latency_us[0][2] + S * 14.0 / 8 / (f.total_GBps() * 1e3);
  const double sim_us = k.kernel_ns / 1e3;
  EXPECT_GE(sim_us, formula_us * 0.999);
  EXPECT_LT(sim_us, formula_us * 1.10) << "simulated " << sim_us << " us, formula " << formula_us << " us";
}

TEST(CollectiveSim, AllToAllIsBoundedByTheLinkBandwidth) {
  const uint64_t S = 64ull << 20;
  const auto k = run_collective("all_to_all", S);
  const auto f = h200_fabric();
  const double wire_us = S * 7.0 / 8 / (f.total_GBps() * 1e3);
  EXPECT_GE(k.kernel_ns / 1e3, wire_us);
  // Not far above it: the channels' SM windows, shared with their local reads and writes (two
  // bytes of HBM traffic per byte sent), cost the rest (+22 % at 64 MiB when written).
  EXPECT_LT(k.kernel_ns / 1e3, 1.30 * (wire_us + f.base_latency_us[0][2] + f.step_latency_us[0][2]));
}

TEST(CollectiveSim, DeepEpDispatchCountsTheTokensARankReceives) {
  // Uniform top-8 of 256 experts over 8 ranks: a token reaches 8 (1 - C(224,8)/C(256,8)) ranks.
  trace::ExpertParallelShape e;
  e.tokens = 4096, e.hidden = 7168, e.topk = 8, e.experts = 256, e.gpus = 8;
  double miss = 1;
  for (int i = 0; i < 8; ++i) miss *= (224.0 - i) / (256.0 - i);
  EXPECT_NEAR(e.expected_ranks(), 8 * (1 - miss), 1e-12);
  EXPECT_EQ(e.token_bytes(), 7168u + 7168 / 128 * 4);  // FP8 and a scale per 128
  e.load_skew = 2;
  EXPECT_NEAR(double(e.received_bytes()), 2 * 4096 * e.expected_ranks() * e.token_bytes(), 1.0);
}

// DeepEP's low-latency kernels: T x k messages (not deduplicated by rank) of H + H/128 x 4 + 16 B
// (dispatch) or 2H (combine); ceil(E / ceil(E / SMs)) CTAs of 1024 threads; a send kernel whose
// remote stores are (n-1)/n of the messages, then a receive kernel after it (the grid barrier).
TEST(CollectiveSim, DeepEpLowLatencySendsAMessageATokenAndExpertInTwoPhases) {
  trace::ExpertParallelShape e;
  e.tokens = 128, e.hidden = 7168, e.topk = 8, e.experts = 256, e.gpus = 8, e.low_latency = true;
  const uint64_t msg = 7168 + 7168 / 128 * 4 + 16;
  EXPECT_EQ(e.token_bytes(), msg);
  EXPECT_EQ(e.received_bytes(), 128u * 8 * msg);
  auto lim = test::hopper_limits();
  lim.units = 132;
  for (const auto op : {trace::KernelKind::ep_dispatch, trace::KernelKind::ep_combine}) {
    e.op = op;
    const uint64_t m = op == trace::KernelKind::ep_dispatch ? msg : 2 * 7168;
    const auto t = trace::emulate_expert_parallel(e, lim);
    ASSERT_EQ(t.kernels.size(), 2u) << trace::to_string(op);
    EXPECT_EQ(t.kernels[0].grid[0], 128u);  // 256 experts, 2 warp groups an SM of 132
    EXPECT_EQ(t.kernels[0].block[0], 1024u);
    EXPECT_EQ(t.kernels[1].deps, std::vector<uint32_t>{t.kernels[0].id});
    uint64_t wire = 0;
    for (const auto& a : t.accesses)
      if (a.kernel == t.kernels[0].id && a.write && t.tensors[a.tensor].cls == trace::TensorClass::peer) wire += a.total_bytes();
    EXPECT_NEAR(double(wire), 128.0 * 8 * m * 7 / 8, 128.0 * 16) << trace::to_string(op);
  }
  // The normal kernels' emitter refuses a low-latency shape rather than running it as normal.
  trace::detail::Builder b;
  EXPECT_THROW(trace::emit_expert_parallel(b, e, lim.fabric, trace::make_comm_buffers(b, "x", -1)), std::invalid_argument);
}

TEST(StepCommunication, EveryLayerAllReducesAndTheLogitsAreGathered) {
  trace::ModelShape m;
  const auto t = decode_step("glm-5", {}, &m);
  size_t ar = 0, ag = 0, ep = 0;
  for (const auto& k : t.kernels) {
    ar += k.kind == trace::KernelKind::all_reduce;
    ag += k.kind == trace::KernelKind::all_gather;
    ep += k.kind == trace::KernelKind::ep_dispatch || k.kind == trace::KernelKind::ep_combine;
    if (trace::is_communication(k.kind)) {
      EXPECT_GT(k.wait_ns, 0u) << k.name;
    }
  }
  // Attention TP 8 and EP 8 on the same GPUs: an all-reduce after attention and after the MLP.
  EXPECT_EQ(ar, 2 * m.layers.size());
  EXPECT_EQ(ag, 1u);
  EXPECT_EQ(ep, 0u);
}

// With data-parallel attention every MoE layer dispatches and combines. A decode step uses DeepEP's
// low-latency kernels by default (two kernels each: send, receive), a prefill chunk its normal ones
// (one each); `expert_parallel_kernels: normal` makes decode use the normal ones too.
TEST(StepCommunication, DataParallelAttentionDispatchesAndCombinesEveryMoeLayer) {
  const auto count = [](const trace::TraceData& t, trace::KernelKind kind) {
    size_t n = 0;
    for (const auto& k : t.kernels) n += k.kind == kind;
    return n;
  };
  trace::ModelShape m;
  const auto t = decode_step("deepseek-v3.2", {"deployment.attention_tensor_parallel=1"}, &m);
  size_t moe = 0;
  for (const auto& l : m.layers) moe += l.mlp == trace::MlpKind::moe;
  EXPECT_EQ(count(t, trace::KernelKind::ep_dispatch), 2 * moe);
  EXPECT_EQ(count(t, trace::KernelKind::ep_combine), 2 * moe);
  const auto normal = decode_step("deepseek-v3.2", {"deployment.attention_tensor_parallel=1",
                                                    "deployment.expert_parallel_kernels=normal"});
  EXPECT_EQ(count(normal, trace::KernelKind::ep_dispatch), moe);
  EXPECT_EQ(count(normal, trace::KernelKind::ep_combine), moe);
  auto doc = config::Document::load_file(test::workload_file("deepseek-v3.2"));
  doc->set("deployment.attention_tensor_parallel=1");
  trace::StepParams p;
  p.phase = trace::Phase::prefill;
  p.context = 4096;
  p.chunk_tokens = 512;
  const auto prefill = trace::emulate_step(trace::load_model_shape(doc->root()), p, test::hopper_limits());
  EXPECT_EQ(count(prefill, trace::KernelKind::ep_dispatch), moe);
}

TEST(StepCommunication, MoreGpusThanTheFabricConnectsIsRefusedNamingTheKey) {
  try {
    decode_step("glm-5", {"deployment.gpus=16"});
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("deployment.gpus = 16"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("gpus_per_switch_domain"), std::string::npos) << e.what();
  }
}
