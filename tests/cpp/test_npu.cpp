// SPDX-License-Identifier: Apache-2.0
// The NPU processor (models/npu) alone against closed-form arithmetic, beside the SMs on one memory
// (models/common/memory_ports), and IndexShare's first-layer offload onto it (sim/techniques).
#include <gtest/gtest.h>

#include <algorithm>

#include "models/common/memory_ports.hpp"
#include "models/npu/npu.hpp"
#include "sim/engine/replay.hpp"
#include "sim/engine/simulation.hpp"
#include "sim/techniques/page_split.hpp"
#include "tests/cpp/fake_memory.hpp"
#include "tests/cpp/test_kernel_util.hpp"
#include "tests/cpp/test_small_models.hpp"

using namespace indexsim;
using model::Tick;
using trace::Precision;

namespace {

// A 16 x 16 array of 16-deep dot products at 1 GHz (one cycle = 1 ns), no fp8: a Cube-like core.
model::NpuParams params(uint32_t cores = 1) {
  model::NpuParams p;
  p.cores = cores;
  p.clock_MHz = 1000;
  p.array_rows = 16;
  p.array_cols = 16;
  p.macs_per_pe[int(Precision::bf16)] = 16;
  p.macs_per_pe[int(Precision::fp16)] = 16;
  p.vector_flops_per_cycle = 256;
  p.dma_Bpc = 32;
  p.local_Bpc = 512;
  p.dma_request_B = 512;
  p.fast_chunk_B = 4096;
  p.dma_outstanding = 64;
  p.stage_B = 65536;
  p.task_launch_ns = 0;
  p.kernel_launch_ns = 0;
  return p;
}

// One kernel of `ctas` CTAs: `flops` at `prec`, and each CTA reading `bytes` of tensor 0 (at
// address `base` + CTA x bytes).
struct OneKernel {
  sim::Workload w;
  std::vector<uint64_t> base;
  OneKernel(uint32_t ctas, double flops, Precision prec, uint64_t bytes, uint64_t base_addr = 0, bool double_buffered = false)
      : w(make(ctas, flops, prec, bytes, double_buffered)), base{base_addr} {}
  static sim::Workload make(uint32_t ctas, double flops, Precision prec, uint64_t bytes, bool db) {
    trace::KernelRecord k = test::kernel(0, ctas);
    k.flops[int(prec)] = flops;
    k.double_buffered = db;
    std::vector<trace::AccessRecord> as;
    if (bytes > 0) {
      trace::AccessRecord a;
      a.kernel = 0;
      a.cta_first = 0;
      a.cta_count = ctas;
      a.tensor = 0;
      a.cta_stride_bytes = int64_t(bytes);
      a.elem_bytes = uint32_t(bytes);
      a.count = 1;
      as.push_back(a);
    }
    sim::Workload w = test::workload({k}, as, 1);
    for (auto& kk : w.kernels()) kk.processor = 0;
    return w;
  }
  sim::ReplayOutput run(std::vector<model::Processor*> procs) {
    sim::ReplayInput in;
    in.workload = &w;
    in.tensor_base = base;
    in.tensor_region = {0};
    in.region_peak_GBps = {1000};
    in.tensor_bytes = {1ull << 40};
    sim::ReplayOptions opt;
    opt.reuse = false;
    return sim::replay(procs, in, opt);
  }
};

}  // namespace

TEST(Npu, AMatrixProductTakesTheCyclesOfItsFolds) {
  // SCALE-Sim's weight-stationary count: folds = ceil(K / (R·D)) x ceil(N / C), each 2R + C + M - 2.
  const auto p = params();
  // K = 512 over 16 rows x 16 deep = 2 folds; N = 64 over 16 columns = 4: 8 folds of 32 + 16 + 1000 - 2.
  EXPECT_EQ(model::matmul_cycles(p, 1000, 512, 64, Precision::bf16), 8u * 1046u);
  // One fold of a tiny product is all fill and drain.
  EXPECT_EQ(model::matmul_cycles(p, 1, 1, 1, Precision::fp16), 2u * 16u + 16u + 1u - 2u);
  // fp8 is not native: it runs at the bf16 rate; fp32 has no array path at all (the vector unit).
  EXPECT_EQ(model::matmul_cycles(p, 1000, 512, 64, Precision::fp8), model::matmul_cycles(p, 1000, 512, 64, Precision::bf16));
  EXPECT_EQ(model::npu_effective_precision(p, Precision::fp8), Precision::bf16);
  EXPECT_EQ(model::npu_effective_precision(p, Precision::fp32), Precision::simt);
  EXPECT_EQ(model::matmul_cycles(p, 1000, 512, 64, Precision::fp32), 0u);
}

TEST(Npu, AComputeBoundKernelTakesItsTilingAtTheClock) {
  // One core, no memory: 2 x M x K x N FLOPs with the stationary operand K x N given by the
  // workload take matmul_cycles at 1 ns a cycle.
  const uint64_t M = 4096, K = 256, N = 32;
  OneKernel k(1, 2.0 * M * K * N, Precision::bf16, 0);
  k.w.kernels()[0].mm_k = K;
  k.w.kernels()[0].mm_n = N;
  test::FakeMemory mem(1000.0, 100.0);
  model::Npu npu(params(), mem);
  const auto out = k.run({&npu});
  EXPECT_DOUBLE_EQ(out.step_ns, double(model::matmul_cycles(params(), M, K, N, Precision::bf16)));
  EXPECT_EQ(out.kernels[0].processor, "NPU core");
  // Compute busy the whole step on its one core.
  EXPECT_NEAR(out.processors.at(0).compute_fraction, 1.0, 1e-9);
}

TEST(Npu, MoreMacsNeverSlowAnNpuBoundKernel) {
  double last = 1e300;
  for (uint32_t side : {8u, 16u, 32u, 64u}) {
    auto p = params(4);
    p.array_rows = p.array_cols = side;
    OneKernel k(16, 1e9, Precision::fp16, 4096);
    test::FakeMemory mem(1e6, 10.0);
    model::Npu npu(p, mem);
    const double t = k.run({&npu}).step_ns;
    EXPECT_LE(t, last) << side << "x" << side;
    last = t;
  }
}

TEST(Npu, ADmaIsBoundByItsRateAndByTheMemorys) {
  // One core reads S = 1 MiB: its engine moves 32 B a cycle (1 ns), so S / 32 ns when the memory is
  // faster; S / 8 ns behind a memory of 8 B/ns. Latency adds a request's trip at the end.
  const uint64_t S = 1 << 20;
  {
    OneKernel k(1, 0, Precision::fp16, S);
    test::FakeMemory mem(1e6, 100.0);
    model::Npu npu(params(), mem);
    const double t = k.run({&npu}).step_ns;
    EXPECT_GE(t, S / 32.0);
    EXPECT_LE(t, S / 32.0 + 200.0) << t;
    EXPECT_EQ(mem.bytes(), S);
  }
  {
    OneKernel k(1, 0, Precision::fp16, S);
    test::FakeMemory mem(8.0, 100.0);
    model::Npu npu(params(), mem);
    const double t = k.run({&npu}).step_ns;
    EXPECT_GE(t, S / 8.0);
    EXPECT_LE(t, S / 8.0 + 200.0) << t;
  }
}

TEST(Npu, LocalMemoryIsReachedAtTheLocalRate) {
  // The same 1 MiB from the core's own SRAM window moves at 512 B a cycle: S / 512 ns, plus what
  // the 64 requests in flight wait on the memory's latency (S / (64 x 512) round trips of 100 ns).
  const uint64_t S = 1 << 20, base = 1ull << 44;
  OneKernel k(1, 0, Precision::fp16, S, base);
  test::FakeMemory mem(1e6, 100.0);
  model::Npu npu(params(), mem);
  npu.set_local_memory(base, 16 << 20);
  const double t = k.run({&npu}).step_ns;
  const double paced = S / 512.0, window = double(S) / (64.0 * 512.0) * 100.0;
  EXPECT_GE(t, std::max(paced, window));
  EXPECT_LE(t, paced + window + 200.0) << t;
  EXPECT_LT(t, S / 32.0 / 4.0);  // well under the remote rate
}

TEST(Npu, ACoreRunsItsShareOfTheCtasAsOneTask) {
  // 10 CTAs on 4 cores: tasks of ceil(10 / 4) = 3 CTAs (3, 3, 3, 1); each CTA is 1000 cycles of
  // vector work (256 FLOPs a cycle), so the kernel takes 3 x 1000 + task_launch.
  auto p = params(4);
  p.task_launch_ns = 500;
  OneKernel k(10, 10 * 256.0 * 1000, Precision::simt, 0);
  test::FakeMemory mem(1000.0, 100.0);
  model::Npu npu(p, mem);
  const auto out = k.run({&npu});
  EXPECT_DOUBLE_EQ(out.step_ns, 3000.0 + 500.0);
  EXPECT_DOUBLE_EQ(out.processors.at(0).busy_fraction, (3.0 * 3500 + 1500) / (4 * 3500.0));
}

TEST(Npu, TwoProcessorsShareOneMemoryEachWithItsOwnCompletions) {
  // Two kernels with no dependence, one on each NPU, each reading S over one bus of 16 B/ns: the
  // bus is the bottleneck, so both end near 2 S / 16 ns, and each got only its own completions
  // (a lost or misrouted one would hang the replay or end a kernel early).
  const uint64_t S = 1 << 20;
  trace::KernelRecord a = test::kernel(0, 1), b = test::kernel(1, 1);
  std::vector<trace::AccessRecord> as(2);
  for (uint32_t i = 0; i < 2; ++i) {
    as[i].kernel = i;
    as[i].tensor = i;
    as[i].elem_bytes = uint32_t(S);
    as[i].count = 1;
  }
  sim::Workload w = test::workload({a, b}, as, 2);
  w.kernels()[1].processor = 1;
  test::FakeMemory mem(16.0, 100.0);
  model::MemoryPorts ports(mem);
  model::Npu n0(params(), ports.port(0)), n1(params(), ports.port(1));
  sim::ReplayInput in;
  in.workload = &w;
  in.tensor_base = {0, 1ull << 30};
  in.tensor_region = {0, 0};
  in.region_peak_GBps = {16};
  in.tensor_bytes = {S, S};
  sim::ReplayOptions opt;
  const auto out = sim::replay(std::vector<model::Processor*>{&n0, &n1}, in, opt);
  EXPECT_EQ(mem.bytes(), 2 * S);
  for (const auto& k : out.kernels) {
    EXPECT_GE(k.end_ns, 2.0 * S / 16.0 * 0.95) << k.name;
    EXPECT_LE(k.end_ns, 2.0 * S / 16.0 + 300.0) << k.name;
  }
  EXPECT_EQ(out.processors.size(), 2u);
  EXPECT_EQ(out.processors[0].kernels, 1u);
  EXPECT_EQ(out.processors[1].kernels, 1u);
}

TEST(Npu, AKernelPlacedOnAMissingProcessorIsAnError) {
  OneKernel k(1, 0, Precision::fp16, 512);
  k.w.kernels()[0].processor = 1;
  test::FakeMemory mem(1000.0, 100.0);
  model::Npu npu(params(), mem);
  try {
    k.run({&npu});
    FAIL() << "a kernel on processor 1 ran with one processor";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("does not have"), std::string::npos) << e.what();
  }
}

TEST(PageSplit, EveryPageGivesItsHeadToOneSideAndTheRestToTheOther) {
  // Rows of 1000 entries of 2 B, pages of 100 entries, heads of 40: a CTA reading entries
  // [200, 450) of row 1 (2 whole pages and 50 entries of a third) gives 2 x 40 + 40 entries to the
  // head and 2 x 60 + 10 to the tail; in the copy (rows of 10 x 40 entries) its head starts at
  // row 1, page 2.
  const sim::PageSplit s{2, 100, 40, 2000};
  EXPECT_EQ(s.copy_row_bytes(), 800u);
  trace::AccessRecord a;
  a.base = 2000 + 200 * 2;
  a.elem_bytes = 250 * 2;
  a.count = 1;
  std::vector<trace::AccessRecord> head, tail;
  ASSERT_TRUE(sim::split_pages(a, s, head, tail));
  ASSERT_EQ(head.size(), 1u);
  EXPECT_EQ(head[0].base, 800u + 2 * 40 * 2);
  EXPECT_EQ(head[0].total_bytes(), 120u * 2);
  uint64_t tb = 0;
  for (const auto& r : tail) tb += r.total_bytes();
  EXPECT_EQ(tb, 130u * 2);
  EXPECT_EQ(head[0].total_bytes() + tb, a.total_bytes());
  // CTAs one page apart share one record a side: their heads move by one head in the copy.
  trace::AccessRecord b;
  b.cta_count = 10;
  b.cta_stride_bytes = 200;
  b.elem_bytes = 200;
  b.count = 1;
  head.clear();
  tail.clear();
  ASSERT_TRUE(sim::split_pages(b, s, head, tail));
  ASSERT_EQ(head.size(), 1u);
  EXPECT_EQ(head[0].cta_stride_bytes, 80);
  EXPECT_EQ(head[0].total_bytes(), 10u * 80u);
  // A stretch that does not start on a page, and a gather, are not split.
  trace::AccessRecord c = a;
  c.base += 2;
  EXPECT_FALSE(sim::split_pages(c, s, head, tail));
  trace::AccessRecord g;
  g.kind = trace::AccessRecord::Kind::gather;
  EXPECT_FALSE(sim::split_pages(g, s, head, tail));
  // Outputs: each element's first 40 % in whole granules.
  trace::AccessRecord o;
  o.elem_bytes = 400;
  o.count = 3;
  o.stride_bytes = 1000;
  head.clear();
  tail.clear();
  ASSERT_TRUE(sim::split_fraction(o, 0.4, 4, head, tail));
  EXPECT_EQ(head.at(0).elem_bytes, 160u);
  EXPECT_EQ(tail.at(0).base, 160u);
  EXPECT_EQ(head[0].total_bytes() + tail.at(0).total_bytes(), o.total_bytes());
}

namespace {

// The first layer's scoring is what these check: GLM-5.2's own on four layers, at 16K tokens.
sim::RunSpec glm52(const std::string& hw, const std::string& tech, const std::vector<std::string>& sets = {}) {
  return test::four_layer_glm52(hw, tech, 16384, sets);
}

double metric(const sim::RunResult& r, const std::string& name) {
  for (const auto& m : r.metrics)
    if (m.name == name) return m.value;
  return -1;
}

}  // namespace

TEST(NpuOffload, TheNpuTakesItsShareOfTheFirstLayersIndexBytesOffHbm) {
  // The first full layer's scan bytes S; with share s on the NPU, the SMs read (1 - s) S from HBM
  // and the NPU s S from its copy in SRAM (when it fits: 16K tokens do). Both read the queries, so
  // HBM loses s S less the NPU's query bytes.
  const auto base = sim::simulate(glm52("h200-npu", "indexshare", {"techniques.index_share.first_layer_sram=false"}));
  const auto off = sim::simulate(glm52("h200-npu", "indexshare-npu", {"techniques.index_share.first_layer_sram=false"}));
  const auto& rep = off.techniques["report"]["index_share"]["npu_offload"];
  ASSERT_TRUE(rep.contains("scan_bytes_on_npu")) << rep.dump();
  const double moved = rep["scan_bytes_on_npu"].get<double>(), scan = rep["scan_bytes"].get<double>();
  // Heads of round(0.4 x 64) = 26 entries of every 64-entry page.
  EXPECT_NEAR(moved / scan, 26.0 / 64.0, 2e-3);
  EXPECT_DOUBLE_EQ(metric(off, "first_layer_index_bytes_sram"), moved);
  EXPECT_DOUBLE_EQ(metric(base, "first_layer_index_bytes_hbm") - metric(off, "first_layer_index_bytes_hbm"),
                   moved - rep["shared_bytes"].get<double>());
  EXPECT_GT(rep["shared_bytes"].get<double>(), 0.0);
  EXPECT_EQ(metric(off, "npu_kernels"), 1.0);
  // An SRAM nothing reached has no hit rate, and trips no threshold; the pinned copy's reads all hit.
  EXPECT_EQ(metric(base, "sram_hit_rate"), -1.0);
  for (const auto& t : base.techniques["thresholds_tripped"]) EXPECT_NE(t.get<std::string>(), "sram_hit_rate");
  EXPECT_DOUBLE_EQ(metric(off, "sram_hit_rate"), 1.0);
  EXPECT_GT(metric(off, "npu_utilisation"), 0.0);
  // The FLOPs are shared as the bytes are.
  double npu_flops = 0, gpu_flops = 0;
  for (const auto& k : off.kernels)
    if (k.kind == "indexer_score" && k.layer == rep["layer"].get<int>()) (k.processor == "SM" ? gpu_flops : npu_flops) += k.flops;
  EXPECT_NEAR(npu_flops / (npu_flops + gpu_flops), moved / scan, 1e-9);
}

TEST(NpuOffload, TheWholeFirstLayerCacheIsPinnedBesideTheNpuCopyOnlyWhereBothFit) {
  // The SRAM (12 MiB, 2 MiB placement pages) takes the NPU's copy (26 of every 64 entries, 132 B
  // an entry) and, where it fits beside it in whole pages, the whole cache for the SMs' part. At 16K
  // both fit (2.1 + 0.9 MB). At 128K the cache (17.3 MB, 9 pages) cannot sit beside the copy (7.0 MB,
  // 4 pages): it is not asked for, so nothing spills and nothing warns; the SMs read their part from
  // the HBM as they would from a spilled pin.
  const auto small = sim::simulate(glm52("h200-npu", "indexshare-npu"));
  ASSERT_EQ(small.techniques.at("pins").size(), 2u) << small.techniques.dump();
  for (const auto& p : small.techniques["pins"]) EXPECT_TRUE(p.at("placed").get<bool>()) << p.dump();
  EXPECT_EQ(small.techniques["report"]["index_share"].at("first_layer_pin").get<std::string>(), "L0.indexer_cache");

  const auto big = sim::simulate(test::four_layer_glm52("h200-npu", "indexshare-npu", 131072));
  const auto& pins = big.techniques.at("pins");
  ASSERT_EQ(pins.size(), 1u) << pins.dump();
  EXPECT_EQ(pins[0].at("tensor").get<std::string>(), "L0.indexer_cache.npu");
  EXPECT_TRUE(pins[0].at("placed").get<bool>());
  EXPECT_EQ(pins[0].at("bytes").get<uint64_t>(), 131072 / 64 * 26 * 132);
  const auto& rep = big.techniques["report"]["index_share"];
  EXPECT_FALSE(rep.contains("first_layer_pin")) << rep.dump();
  EXPECT_NE(rep.at("first_layer_pin_not_asked").get<std::string>().find("does not fit beside"), std::string::npos);
  EXPECT_TRUE(big.warnings.empty()) << big.warnings[0];
  EXPECT_EQ(big.get_metric("pins_not_placed"), 0.0);
}

TEST(NpuOffload, KernelKindsArePlacedOnTheNpuByName) {
  const auto r = sim::simulate(glm52("h200-npu", "baseline", {"techniques.placement.npu_kernels=[topk]"}));
  uint64_t topk = 0, on_npu = 0;
  for (const auto& k : r.kernels) {
    topk += k.kind == "topk";
    on_npu += k.processor != "SM";
    if (k.processor != "SM") EXPECT_EQ(k.kind, "topk") << k.name;
  }
  EXPECT_GT(topk, 0u);
  EXPECT_EQ(on_npu, topk);
  EXPECT_EQ(metric(r, "npu_kernels"), double(topk));
}

TEST(NpuOffload, AnNpuTheHardwareLacksIsAConfigErrorNamingTheKey) {
  try {
    sim::simulate(glm52("h200", "indexshare-npu"));
    FAIL() << "an offload ran without an NPU";
  } catch (const config::ConfigError& e) {
    EXPECT_EQ(e.path, "index_share.first_layer_npu_share") << e.what();
  }
  try {
    sim::simulate(glm52("h200", "baseline", {"techniques.placement.npu_kernels=[topk]"}));
    FAIL() << "npu_kernels ran without an NPU";
  } catch (const config::ConfigError& e) {
    EXPECT_EQ(e.path, "placement.npu_kernels") << e.what();
  }
  try {
    sim::simulate(glm52("h200-npu", "baseline",
                        {"hardware.system.processors=[{section: gpu}, {section: npu, local_region: nowhere}]"}));
    FAIL() << "an NPU SRAM window in no region was accepted";
  } catch (const config::ConfigError& e) {
    EXPECT_EQ(e.path, "system.processors.1.local_region") << e.what();
  }
  try {
    // The NPU's cores take the NoC ports after the SMs' (derived): the crossbar needs a port for each.
    sim::simulate(glm52("h200-npu", "baseline", {"hardware.noc.sm_ports=132"}));
    FAIL() << "NPU cores without NoC ports of their own were accepted";
  } catch (const config::ConfigError& e) {
    EXPECT_EQ(e.path, "noc.sm_ports") << e.what();
    EXPECT_NE(std::string(e.what()).find("gpu 132 + npu 24"), std::string::npos) << e.what();
  }
  try {
    sim::simulate(glm52("h200-npu", "baseline", {"techniques.placement.npu_kernels=[no_such_kind]"}));
    FAIL() << "an unknown kernel kind was accepted";
  } catch (const config::ConfigError& e) {
    EXPECT_EQ(e.path, "placement.npu_kernels") << e.what();
    EXPECT_NE(std::string(e.what()).find("no_such_kind"), std::string::npos);
  }
}
