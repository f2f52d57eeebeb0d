// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>
#include <tuple>

#include "models/noc/crossbar.hpp"
#include "models/sm/sm_array.hpp"
#include "sim/engine/replay.hpp"
#include "sim/engine/sampling.hpp"
#include "tests/cpp/fake_memory.hpp"
#include "tests/cpp/test_kernel_util.hpp"
#include "traces/generators/emulate.hpp"

using namespace indexsim;
using trace::AccessRecord;
using trace::KernelRecord;

namespace {

const char* kGpu = R"(
gpu:
  sm_count: 4
  sm_clock_MHz: 1000
  tensor_clock_MHz: 1000
  max_threads_per_sm: 2048
  max_ctas_per_sm: 8
  registers_per_sm: 65536
  smem_per_sm_KiB: 228
  smem_per_cta_max_KiB: 227
  warpgroup_mma: true
  tensor_flops_per_clk_per_sm: {tf32: 512, bf16: 1024, fp16: 1024, fp8: 2048, fp4: 0}
  simt_flops_per_clk_per_sm: 256
  mma_pipeline_latency_cycles: 0
  fp8_dequant_cycles_per_value: 0.1
  mma_issue_efficiency: 1.0
  max_outstanding_requests_per_sm: 16
  line_bytes: 128
  sector_bytes: 32
  fast_mode_chunk_bytes: 2048
  fast_mode_sample_waves: 2
  fast_mode_min_sample_waves: 4
  fast_mode_steady_tolerance_percent: 0.5
  cta_launch_ns: 0
  kernel_launch_ns: 0
  pipeline_stages: 1
)";

struct Rig {
  model::SmParams sm;
  model::TensorCoreParams tcp;
  Rig(const std::string& extra_set = "") {
    auto doc = config::Document::load_string(kGpu, "gpu.yaml");
    if (!extra_set.empty()) doc->set(extra_set);
    auto g = doc->root().child("gpu");
    sm = model::SmParams::load(g);
    tcp = model::TensorCoreParams::load(g);
    doc->check_unused();
  }
};

using test::kernel;

AccessRecord stream_read(uint32_t kernel, uint32_t ctas, uint64_t bytes_per_cta) {
  AccessRecord a;
  a.kernel = kernel;
  a.cta_first = 0;
  a.cta_count = ctas;
  a.kind = AccessRecord::Kind::strided;
  a.tensor = 0;
  a.cta_stride_bytes = int64_t(bytes_per_cta);
  a.elem_bytes = 16;
  a.count = bytes_per_cta / 16;
  a.stride_bytes = 16;
  return a;
}

// Over two tensors, 1 MiB apart (a kernel's loads and its stores).
sim::ReplayOutput run_two_tensors(const Rig& rig, const std::vector<KernelRecord>& ks, const std::vector<AccessRecord>& as,
                                  model::MemoryDevice& mem, bool fast) {
  model::SmArray proc(rig.sm, rig.tcp, mem);
  const sim::Workload w = test::workload(ks, as, 2);
  sim::ReplayInput in;
  in.workload = &w;
  in.tensor_base = {0, 1 << 20};
  in.tensor_region = {0, 0};
  in.region_peak_GBps = {mem.peak_bandwidth_GBps()};
  sim::ReplayOptions opt;
  opt.fast = fast;
  return sim::replay(proc, in, opt);
}

sim::ReplayOutput run(const Rig& rig, std::vector<KernelRecord> ks, std::vector<AccessRecord> as,
                      model::MemoryDevice& mem, bool fast = false) {
  model::SmArray proc(rig.sm, rig.tcp, mem);
  const sim::Workload w = test::workload(ks, as, 1);
  sim::ReplayInput in;
  in.workload = &w;
  in.tensor_base = {0};
  in.tensor_region = {0};
  in.region_peak_GBps = {mem.peak_bandwidth_GBps()};
  sim::ReplayOptions opt;
  opt.fast = fast;
  return sim::replay(proc, in, opt);
}

}  // namespace

TEST(Replay, MemoryBoundKernelTakesBytesOverBandwidth) {
  // 64 CTAs x 64 KiB over a 100 B/ns bus: time >= 4 MiB / 100 B/ns = 41.94 us; with 4 SMs x 16
  // requests of 128 B in flight (8 KiB) and 100 ns latency, Little's law allows 8192/100 = 82 B/ns
  // < 100 B/ns, so the window, not the bus, bounds it: ~ 4 MiB / 82 B/ns = 51.2 us.
  Rig rig;
  test::FakeMemory mem(100.0, 100.0);
  auto out = run(rig, {kernel(0, 64)}, {stream_read(0, 64, 65536)}, mem);
  const double bytes = 64.0 * 65536;
  EXPECT_EQ(out.bytes_read, uint64_t(bytes));
  EXPECT_GE(out.step_ns, bytes / 100.0);  // never below the roofline
  const double little_ns = bytes / (4 * 16 * 128 / (100.0 + 128 / 100.0));
  EXPECT_NEAR(out.step_ns, little_ns, 0.05 * little_ns);
  EXPECT_EQ(out.kernels[0].bound, "memory");
}

TEST(Replay, LargerWindowReachesTheBusLimit) {
  // With 256 requests in flight per SM the bus (100 B/ns) is the limit: step ~ bytes / 100.
  Rig rig("gpu.max_outstanding_requests_per_sm=256");
  test::FakeMemory mem(100.0, 100.0);
  auto out = run(rig, {kernel(0, 64)}, {stream_read(0, 64, 65536)}, mem);
  const double bus_ns = 64.0 * 65536 / 100.0;
  EXPECT_GE(out.step_ns, bus_ns);
  EXPECT_LE(out.step_ns, bus_ns * 1.03);
}

TEST(Replay, APipelinedCtaKeepsItsSharedMemoryStagesInFlight) {
  // The first test's stream, double-buffered with 64 KiB of shared memory a CTA in 4 stages: each
  // SM keeps 3/4 x 64 KiB = 384 lines in flight, not the 16 of the load/store units' window; by
  // Little's law 4 x 48 KiB / (100 + 1.28) ns = 1,942 B/ns, above the bus: the bus bounds it,
  // bytes / 100 B/ns. Without the flag (or with one stage) the window bounds it as before.
  Rig rig("gpu.pipeline_stages=4");
  test::FakeMemory mem(100.0, 100.0), mem2(100.0, 100.0), mem3(100.0, 100.0);
  KernelRecord k = kernel(0, 64);
  k.smem_bytes = 64 * 1024;
  const double bytes = 64.0 * 65536, bus_ns = bytes / 100.0;
  const double window_ns = bytes / (4 * 16 * 128 / (100.0 + 128 / 100.0));
  KernelRecord pipelined = k;
  pipelined.double_buffered = true;
  const auto out = run(rig, {pipelined}, {stream_read(0, 64, 65536)}, mem);
  EXPECT_GE(out.step_ns, bus_ns);
  EXPECT_LE(out.step_ns, bus_ns * 1.03);
  k.double_buffered = false;
  EXPECT_NEAR(run(rig, {k}, {stream_read(0, 64, 65536)}, mem2).step_ns, window_ns, 0.05 * window_ns);
  Rig one_stage;  // pipeline_stages 1: no stage is in flight while the math reads the only one
  EXPECT_NEAR(run(one_stage, {pipelined}, {stream_read(0, 64, 65536)}, mem3).step_ns, window_ns, 0.05 * window_ns);
}

TEST(Replay, ComputeBoundKernelTakesFlopsOverRate) {
  // 8 CTAs of 2^20 bf16 FLOPs each on 4 SMs at 1024 FLOP/clk, 1 GHz: each SM runs 2 CTAs one after
  // the other on its tensor pipe: 2 x 2^20 / 1024 = 2048 ns.
  Rig rig;
  test::FakeMemory mem(100.0, 10.0);
  KernelRecord k = kernel(0, 8);
  k.flops[int(trace::Precision::bf16)] = 8.0 * (1 << 20);
  auto out = run(rig, {k}, {}, mem);
  EXPECT_NEAR(out.step_ns, 2048.0, 1.0);
  EXPECT_EQ(out.kernels[0].bound, "compute");
  EXPECT_NEAR(out.kernels[0].roofline_ns, 2048.0, 1.0);
}

// The block scheduler's turnover (gpu.cta_launch_ns = 300) is paid when a slot takes another CTA,
// not when a kernel ends. CTAs of 2^20 bf16 FLOPs (1024 ns at 1024 FLOP/clk, 1 GHz) and 200 KiB of
// shared memory, one per SM (228 KiB): 4 CTAs on 4 SMs take 1024 ns; 8 take two waves, 1024 + 300
// + 1024 = 2348 ns (as a persistent grid's units, 2048); a second kernel after the first starts on
// slots still turning over, at 1324 ns.
// (Its CTAs take 512 ns: the step ends at 1836 ns.)
TEST(Replay, ACtaSlotTakesItsNextCtaAfterTheTurnoverAndAKernelsLastCtasEndWithout) {
  Rig rig("gpu.cta_launch_ns=300");
  for (uint32_t ctas : {4u, 8u}) {
    test::FakeMemory mem(100.0, 10.0);
    KernelRecord k = kernel(0, ctas);
    k.smem_bytes = 200 * 1024;
    k.flops[int(trace::Precision::bf16)] = double(ctas) * (1 << 20);
    EXPECT_NEAR(run(rig, {k}, {}, mem).step_ns, ctas == 4 ? 1024.0 : 2348.0, 1.0) << ctas << " CTAs";
    // A persistent grid's work units (KernelRecord::persistent) follow each other on a slot: 2048 ns.
    test::FakeMemory mem2(100.0, 10.0);
    k.persistent = true;
    EXPECT_NEAR(run(rig, {k}, {}, mem2).step_ns, 1024.0 * ctas / 4, 1.0) << ctas << " persistent units";
  }
  test::FakeMemory mem(100.0, 10.0);
  KernelRecord a = kernel(0, 4), b = kernel(1, 4);
  a.smem_bytes = b.smem_bytes = 200 * 1024;
  a.flops[int(trace::Precision::bf16)] = 4.0 * (1 << 20);
  b.flops[int(trace::Precision::bf16)] = 4.0 * (1 << 19);  // 512 ns a CTA (an identical twin would be reused)
  b.deps = {0};
  const auto out = run(rig, {a, b}, {}, mem);
  ASSERT_EQ(out.kernels.size(), 2u);
  EXPECT_NEAR(out.kernels[0].end_ns, 1024.0, 1.0);
  EXPECT_NEAR(out.kernels[1].start_ns, 1324.0, 1.0);
  EXPECT_NEAR(out.step_ns, 1324.0 + 512.0, 1.0);
}

// One CTA per SM with 2^20 bf16 FLOPs (1024 ns at 1024 FLOP/clk, 1 GHz) and 2^18 SIMT FLOPs
// (1024 ns at 256 FLOP/clk). Overlapping pipes: max(1024, 1024) = 1024 ns. Phases separated by
// barriers (simt_overlaps_mma = false): 1024 + 1024 = 2048 ns.
TEST(Replay, SimtWorkAddsToMatrixWorkWhenTheKernelAlternatesPhases) {
  Rig rig;
  test::FakeMemory mem(100.0, 10.0);
  for (bool overlap : {true, false}) {
    KernelRecord k = kernel(0, 4);
    k.flops[int(trace::Precision::bf16)] = 4.0 * (1 << 20);
    k.flops[int(trace::Precision::simt)] = 4.0 * (1 << 18);
    k.simt_overlaps_mma = overlap;
    auto out = run(rig, {k}, {}, mem);
    EXPECT_NEAR(out.step_ns, overlap ? 1024.0 : 2048.0, 1.0) << "overlap " << overlap;
  }
}

// gpu.matrix_load_sm_clock_MHz = 500 (the SM clock at its power limit, sm_clock 1000): SIMT work
// beside matrix work runs at 500 MHz, alone at 1000. Per CTA, 2^18 SIMT FLOPs at 256 FLOP/clk are
// 1024 cycles: with 2^20 bf16 FLOPs (1024 ns at 1 GHz) and phases apart, 1024 + 1024 x 2 = 3072 ns;
// without matrix work, 1024 ns. Unset, the clock is sm_clock_MHz (the test above: 2048 ns); above
// sm_clock_MHz it is refused.
TEST(Replay, SimtWorkBesideMatrixWorkRunsAtThePowerLimitedClock) {
  Rig rig("gpu.matrix_load_sm_clock_MHz=500");
  test::FakeMemory mem(100.0, 10.0);
  for (bool matrix : {true, false}) {
    KernelRecord k = kernel(0, 4);
    if (matrix) k.flops[int(trace::Precision::bf16)] = 4.0 * (1 << 20);
    k.flops[int(trace::Precision::simt)] = 4.0 * (1 << 18);
    k.simt_overlaps_mma = false;
    auto out = run(rig, {k}, {}, mem);
    EXPECT_NEAR(out.step_ns, matrix ? 3072.0 : 1024.0, 1.0) << "matrix " << matrix;
  }
  EXPECT_THROW(Rig("gpu.matrix_load_sm_clock_MHz=1001"), std::exception);
}

// Instruction issue (KernelRecord::warp_instructions, gpu.warp_issue_interval_cycles = 10, four
// schedulers an SM, 1 GHz): a warp's I instructions take I · max(W, 10) cycles, W the warps that
// share its scheduler.
//  - 4 CTAs of 8 warps on 4 SMs, 1000 instructions a warp: W = 2 < 10, so 1000 · 10 = 10,000 ns.
//  - 64 CTAs of 32 warps, 2 resident an SM (2048 threads), 100 instructions a warp: W = 16 > 10, so
//    each CTA takes 100 · 16 = 1,600 ns and each SM runs 16 of them two at a time: 8 · 1,600 = 12,800 ns.
//  - The interval at 0 (off): the same kernels have no other work and take ~nothing.
TEST(Replay, AKernelsInstructionStreamsBoundItsCtasByIssueInterval) {
  for (bool on : {true, false}) {
    Rig rig(on ? "gpu.warp_issue_interval_cycles=10" : "gpu.warp_issue_interval_cycles=0");
    test::FakeMemory mem(100.0, 10.0);
    KernelRecord few = kernel(0, 4);
    few.block = {256, 1, 1};
    few.warp_instructions = 4.0 * 8 * 1000;
    auto a = run(rig, {few}, {}, mem);
    KernelRecord many = kernel(0, 64);
    many.block = {1024, 1, 1};
    many.warp_instructions = 64.0 * 32 * 100;
    auto b = run(rig, {many}, {}, mem);
    if (on) {
      EXPECT_NEAR(a.step_ns, 10000.0, 1.0);
      EXPECT_NEAR(b.step_ns, 12800.0, 1.0);
    } else {
      EXPECT_LT(a.step_ns, 10.0);
      EXPECT_LT(b.step_ns, 10.0);
    }
  }
}

// A GEMM's epilogue (KernelRecord::stores_after_math): one CTA per SM on 4 SMs, 1024 ns of math
// each (2^20 bf16 FLOPs at 1024 FLOP/clk, 1 GHz), 16 KiB of loads (done by ~800 ns: 16 lines in
// flight a 100 ns round trip) and 4 KiB of stores on a 1000 B/ns, 100 ns memory.
//  - Stores beside the math: they leave with the loads, and the CTA ends on its math: 1024 ns.
//  - Stores after the math: 32 lines per SM through a 16-line window leave in two round trips
//    once the math ends: 1024 + 2 x 100 + 4 x 4096 B / 1000 B/ns = 1240 ns (the second round
//    trip's requests queue behind fewer bytes: ~1232).
TEST(Replay, AnEpilogueKernelStoresAfterItsMathAndHoldsItsSmUntilTheStoresLeave) {
  Rig rig;
  for (bool fast : {false, true})
    for (bool after : {false, true}) {
      test::FakeMemory mem(1000.0, 100.0);
      KernelRecord k = kernel(0, 4);
      k.flops[int(trace::Precision::bf16)] = 4.0 * (1 << 20);
      k.smem_bytes = 128;  // one 128 B stage: the math after the last load is 1/128 of the CTA's
      k.stores_after_math = after;
      AccessRecord st = stream_read(0, 4, 4096);
      st.write = true;
      st.tensor = 1;
      AccessRecord ld = stream_read(0, 4, 16384);
      const auto out = run_two_tensors(rig, {k}, {ld, st}, mem, fast);
      EXPECT_EQ(out.bytes_written, 4u * 4096) << "fast " << fast << " after " << after;
      EXPECT_EQ(out.bytes_read, 4u * 16384) << "fast " << fast << " after " << after;
      if (after) EXPECT_NEAR(out.step_ns, 1240.0, 12.0) << "fast " << fast;
      else EXPECT_NEAR(out.step_ns, 1024.0, 2.0) << "fast " << fast;
    }
}

// The emulated one-element-a-thread copy (trace::emulate_copy: 4 CTAs of 128 threads x 8 B, one
// chunk each, so stores_after_math) on 4 SMs with a 16-line window, over a memory that moves
// 1000 B/ns after 100 ns: each CTA reads 8 lines and writes 8.
//  - Stores beside the loads: all 64 lines leave at once, the last back after 8192 B / 1000 B/ns
//    + 100 ns = 108.192 ns.
//  - Stores after the loads (the copy as emulated): the last CTA's loads land at 4096 B / 1000 B/ns
//    + 100 ns = 104.096 ns, its 1024 B of stores then take 1.024 + 100 ns more: 205.12 ns.
TEST(Replay, AOneElementCopyStoresWhatItsLoadsBroughtAfterThemAndPaysTwoRoundTrips) {
  Rig rig;
  trace::CopyShape shape;
  shape.threads = 128;
  shape.vector_bytes = 8;
  const trace::TraceData td = trace::emulate_copy(4 * 1024, shape);
  ASSERT_TRUE(td.kernels.at(0).stores_after_math);
  for (bool after : {false, true}) {
    test::FakeMemory mem(1000.0, 100.0);
    KernelRecord k = td.kernels.at(0);
    k.stores_after_math = after;
    const auto out = run_two_tensors(rig, {k}, td.accesses, mem, false);
    EXPECT_EQ(out.bytes_read, 4096u);
    EXPECT_EQ(out.bytes_written, 4096u);
    EXPECT_NEAR(out.step_ns, after ? 205.12 : 108.192, 0.01) << "after " << after;
  }
}

TEST(Replay, DependentKernelsRunInSequenceIndependentStreamsOverlap) {
  // Two memory-bound kernels of 2 CTAs each on 4 SMs: in sequence they take t1 + t2; on two
  // streams without a dependence they share the machine and finish in less than the sum.
  Rig rig;
  auto make = [&](bool dependent) {
    test::FakeMemory mem(1000.0, 500.0);
    return run(rig, {kernel(0, 2), kernel(1, 2, dependent ? std::vector<uint32_t>{0} : std::vector<uint32_t>{}, dependent ? 0 : 1)},
               {stream_read(0, 2, 1 << 16), stream_read(1, 2, 1 << 16)}, mem);
  };
  auto seq = make(true);
  auto par = make(false);
  EXPECT_GE(seq.kernels[1].start_ns, seq.kernels[0].end_ns);
  const double sum = seq.kernels[0].duration_ns() + seq.kernels[1].duration_ns();
  EXPECT_LT(par.step_ns, 0.7 * sum);
  EXPECT_LT(par.kernels[1].start_ns, par.kernels[0].end_ns);  // they overlap
}

TEST(Replay, MoreSmsNeverSlowAMemoryBoundKernel) {
  double prev = 1e300;
  for (int sms : {1, 2, 4, 8}) {
    Rig rig("gpu.sm_count=" + std::to_string(sms));
    test::FakeMemory mem(200.0, 300.0);
    auto out = run(rig, {kernel(0, 32)}, {stream_read(0, 32, 32768)}, mem);
    EXPECT_LE(out.step_ns, prev * 1.0001) << sms << " SMs";
    prev = out.step_ns;
  }
}

TEST(Replay, FastModeIssuesFewerRequestsForTheSameBytes) {
  // 32 CTAs fill one wave (4 SMs x 8 slots), so the fast mode sends 2 KiB chunks.
  Rig rig("gpu.max_outstanding_requests_per_sm=256");
  test::FakeMemory m1(100.0, 100.0), m2(100.0, 100.0);
  auto det = run(rig, {kernel(0, 32)}, {stream_read(0, 32, 65536)}, m1, false);
  auto fast = run(rig, {kernel(0, 32)}, {stream_read(0, 32, 65536)}, m2, true);
  EXPECT_EQ(m1.bytes(), m2.bytes());
  EXPECT_EQ(m1.requests(), 32u * 65536 / 128);   // one request per 128 B line
  EXPECT_EQ(m2.requests(), 32u * 65536 / 2048);  // one per 2 KiB chunk
  EXPECT_NEAR(fast.step_ns, det.step_ns, 0.03 * det.step_ns);
}

TEST(Replay, FastModeKeepsLineRequestsForAKernelSmallerThanAWave) {
  // 16 CTAs on 4 SMs x 8 slots: latency-bound, so its requests stay line-sized in the fast mode.
  Rig rig("gpu.max_outstanding_requests_per_sm=256");
  test::FakeMemory mem(100.0, 100.0);
  run(rig, {kernel(0, 16)}, {stream_read(0, 16, 65536)}, mem, true);
  EXPECT_EQ(mem.requests(), 16u * 65536 / 128);
}

TEST(Replay, GatherRoundsRowsToSectorsAndSplitsAtLines) {
  // One CTA gathers 3 rows of 100 B at pitch 1000: each row spans [r*1000, r*1000+100), i.e. 4
  // sectors when it starts 32-B aligned (rows 0) or straddles more; bytes = sectors touched x 32.
  Rig rig;
  test::FakeMemory mem(100.0, 10.0);
  AccessRecord g;
  g.kernel = 0;
  g.kind = AccessRecord::Kind::gather;
  g.row_bytes = 100;
  g.row_pitch_bytes = 1000;
  g.rows = {0, 1, 2};
  auto out = run(rig, {kernel(0, 1)}, {g}, mem);
  // row 0: [0,100) → sectors [0,128) = 128 B, one request; row 1: [1000,1100) crosses the line at
  // 1024: [992,1024) + [1024,1120) = 32 + 96 B, two requests; row 2: [2000,2100) crosses 2048:
  // [1984,2048) + [2048,2112) = 64 + 64 B, two requests. 384 B in 5 requests.
  EXPECT_EQ(out.bytes_read, 3u * 128);
  EXPECT_EQ(mem.requests(), 5u);
}

TEST(Replay, BackPressureDelaysButLosesNothing) {
  Rig rig;
  test::FakeMemory tight(100.0, 100.0, 4), loose(100.0, 100.0);
  auto a = run(rig, {kernel(0, 8)}, {stream_read(0, 8, 16384)}, tight);
  auto b = run(rig, {kernel(0, 8)}, {stream_read(0, 8, 16384)}, loose);
  EXPECT_EQ(tight.bytes(), loose.bytes());
  EXPECT_GE(a.step_ns, b.step_ns);
}

namespace {
// Forwards everything to a device but never says that a refusal is its source's own: the SMs then
// retry at every event, as they did before they could wait for their own completions.
class RetryEveryEvent : public model::MemoryDevice {
 public:
  explicit RetryEveryEvent(model::MemoryDevice& d) : d_(d) {}
  bool try_enqueue(const model::MemRequest& r, model::Tick now) override { return d_.try_enqueue(r, now); }
  model::Tick next_event() const override { return d_.next_event(); }
  model::Tick next_retry() const override { return d_.next_retry(); }
  void advance(model::Tick now, std::vector<model::MemCompletion>& done) override { d_.advance(now, done); }
  double peak_bandwidth_GBps() const override { return d_.peak_bandwidth_GBps(); }
  model::Tick idle_read_latency_ps() const override { return d_.idle_read_latency_ps(); }
  uint64_t capacity_bytes() const override { return d_.capacity_bytes(); }
  void report(model::StatSink& s, const std::string& c) const override { d_.report(s, c); }

 private:
  model::MemoryDevice& d_;
};
model::CrossbarParams small_crossbar() {
  model::CrossbarParams p;
  p.clock_MHz = 1000;
  p.sm_ports = 4;  // one an SM of kGpu
  p.memory_ports = 4;
  p.port_bandwidth_Bpc = 64;
  p.request_latency_cycles = 10;
  p.response_latency_cycles = 10;
  p.header_B = 16;
  p.line_B = 128;
  p.max_in_flight_per_port = 4;  // below the SMs' window of 16: every SM is held by its port
  return p;
}
}  // namespace

TEST(Replay, AnSmHeldByItsOwnPortWaitsForItsOwnCompletionsWithTheSameResult) {
  // The port refuses an SM until one of that SM's own requests completes, which issues again:
  // retrying at every other event only adds refusals, so waiting changes no time and no byte.
  Rig rig;
  model::Crossbar waits(small_crossbar()), retries(small_crossbar());
  waits.attach(std::make_unique<test::FakeMemory>(400.0, 100.0));
  retries.attach(std::make_unique<test::FakeMemory>(400.0, 100.0));
  RetryEveryEvent every(retries);
  const auto a = run(rig, {kernel(0, 16)}, {stream_read(0, 16, 32768)}, waits);
  const auto b = run(rig, {kernel(0, 16)}, {stream_read(0, 16, 32768)}, every);
  EXPECT_EQ(a.step_ns, b.step_ns);
  EXPECT_EQ(a.bytes_read, b.bytes_read);
  EXPECT_EQ(a.requests, b.requests);
  model::StatSink sa, sb;
  waits.report(sa, "noc");
  retries.report(sb, "noc");
  EXPECT_GT(sb.get("noc", "refused"), 0.0);
  // Waiting: at most one refusal for each completion of its own (each completion issues again).
  EXPECT_LE(sa.get("noc", "refused"), double(a.requests));
  EXPECT_LT(sa.get("noc", "refused"), sb.get("noc", "refused"));
}

TEST(Replay, FastModeSamplesWavesAndExtrapolatesLinearlyInCtas) {
  // 64 CTAs of 64 KiB on 4 SMs x 8 slots = 32 CTAs per wave; the fast mode replays 2 waves (64
  // CTAs: all of them) here, so shrink the sample: with 1 wave (32 CTAs) simulated, the kernel's
  // time is (time of 32 CTAs) x 64/32, and its bytes are counted for all 64 CTAs.
  Rig full("gpu.max_outstanding_requests_per_sm=256"), sampled("gpu.fast_mode_sample_waves=1");
  sampled = Rig("gpu.fast_mode_sample_waves=1");
  sampled.sm.max_outstanding_requests = 256;
  test::FakeMemory m1(100.0, 100.0), m2(100.0, 100.0);
  auto det = run(full, {kernel(0, 64)}, {stream_read(0, 64, 65536)}, m1, false);
  auto fast = run(sampled, {kernel(0, 64)}, {stream_read(0, 64, 65536)}, m2, true);
  EXPECT_EQ(m2.bytes(), 32u * 65536);                       // only the sampled wave reached memory
  EXPECT_EQ(fast.kernels[0].bytes_read, 64u * 65536);       // but the kernel reports all its bytes
  EXPECT_NEAR(fast.step_ns, det.step_ns, 0.03 * det.step_ns);
}

namespace {

sim::ReplayOutput run_fast(const Rig& rig, std::vector<KernelRecord> ks, std::vector<AccessRecord> as,
                           model::MemoryDevice& mem, bool reuse, bool fast = true) {
  model::SmArray proc(rig.sm, rig.tcp, mem);
  const sim::Workload w = test::workload(ks, as, 2);
  sim::ReplayInput in;
  in.workload = &w;
  in.tensor_base = {0, 1 << 24};  // two tensors of one shape at different addresses (two layers)
  in.tensor_region = {0, 0};
  in.region_peak_GBps = {mem.peak_bandwidth_GBps()};
  sim::ReplayOptions opt;
  opt.fast = fast;
  opt.reuse = reuse;
  return sim::replay(proc, in, opt);
}

AccessRecord on_tensor(AccessRecord a, uint32_t tensor) {
  a.tensor = tensor;
  return a;
}

}  // namespace

// A chain A0 -> B0 -> A1 -> B1, where A1 and B1 repeat A0 and B0 on another layer's tensor. Each
// kernel of the chain has the machine to itself, so A1 takes A0's duration exactly (and B1 B0's),
// reports the same bytes, and its requests never reach the memory. Both modes reuse.
class ReplayReuse : public ::testing::TestWithParam<bool> {};

TEST_P(ReplayReuse, AKernelThatRanAloneStandsInForItsTwinInAnotherLayer) {
  const bool fast = GetParam();
  Rig rig("gpu.max_outstanding_requests_per_sm=64");
  const std::vector<KernelRecord> ks = {kernel(0, 16), kernel(1, 4, {0}), kernel(2, 16, {1}), kernel(3, 4, {2})};
  const std::vector<AccessRecord> as = {stream_read(0, 16, 65536), stream_read(1, 4, 8192),
                                        on_tensor(stream_read(2, 16, 65536), 1), on_tensor(stream_read(3, 4, 8192), 1)};
  test::FakeMemory m1(100.0, 100.0), m2(100.0, 100.0);
  auto reused = run_fast(rig, ks, as, m1, true, fast);
  auto simulated = run_fast(rig, ks, as, m2, false, fast);
  ASSERT_EQ(reused.kernels.size(), 4u);
  EXPECT_EQ(reused.kernels[0].simulated, "all");
  EXPECT_EQ(reused.kernels[2].simulated, "reused");
  EXPECT_EQ(reused.kernels[3].simulated, "reused");
  EXPECT_DOUBLE_EQ(reused.kernels[2].duration_ns(), reused.kernels[0].duration_ns());
  EXPECT_DOUBLE_EQ(reused.kernels[3].duration_ns(), reused.kernels[1].duration_ns());
  EXPECT_EQ(reused.kernels[2].bytes_read, reused.kernels[0].bytes_read);
  EXPECT_EQ(m1.bytes(), 16u * 65536 + 4u * 8192);            // only A0 and B0 reached memory
  EXPECT_EQ(m2.bytes(), 2 * (16u * 65536 + 4u * 8192));
  EXPECT_EQ(reused.bytes_read, simulated.bytes_read);
  // The fake memory keeps no state between kernels, so simulating the twins changes nothing.
  EXPECT_NEAR(reused.step_ns, simulated.step_ns, 1e-6 * simulated.step_ns);
  for (const auto& k : simulated.kernels) EXPECT_EQ(k.simulated, "all");
}

INSTANTIATE_TEST_SUITE_P(BothModes, ReplayReuse, ::testing::Values(true, false),
                         [](const ::testing::TestParamInfo<bool>& i) { return i.param ? "Fast" : "Detailed"; });

// Four layers, each a kernel A on stream 0 overlapping a prefetch P on stream 1, then B, which
// waits for both; layer l+1's A and P wait for B of layer l. The machine is idle when a B becomes
// ready and when an A and its P become ready together, so the segments are {A0, P0}, {B0},
// {A1, P1}, {B1}, ..., {B3}: a segment may start with several kernels at once (SegmentReuse::at_idle).
// Every later one repeats the first of its kind, so its members take that one's durations: on a
// memory that keeps no state, the step is the same as with every kernel simulated, and only layer
// 0's bytes reach the memory.
TEST(Replay, ASegmentOfOverlappingKernelsThatRepeatsAnEarlierOneIsReusedWhole) {
  Rig rig("gpu.max_outstanding_requests_per_sm=64");
  std::vector<KernelRecord> ks;
  std::vector<AccessRecord> as;
  const uint64_t a_bytes = 8 * 65536, p_bytes = 4 * 32768, b_bytes = 4 * 16384;
  for (uint32_t l = 0; l < 4; ++l) {
    const uint32_t a = 3 * l, pf = a + 1, bk = a + 2;
    const std::vector<uint32_t> after = l ? std::vector<uint32_t>{a - 1} : std::vector<uint32_t>{};
    ks.push_back(kernel(a, 8, after));
    ks.push_back(kernel(pf, 4, after, 1));
    ks.push_back(kernel(bk, 4, {a, pf}));
    as.push_back(on_tensor(stream_read(a, 8, 65536), l));
    as.push_back(on_tensor(stream_read(pf, 4, 32768), 4 + l));
    as.push_back(on_tensor(stream_read(bk, 4, 16384), 8 + l));
  }
  auto run_layers = [&](model::MemoryDevice& mem, bool reuse) {
    model::SmArray proc(rig.sm, rig.tcp, mem);
    const sim::Workload w = test::workload(ks, as, 12);
    sim::ReplayInput in;
    in.workload = &w;
    for (uint32_t t = 0; t < 12; ++t) {
      in.tensor_base.push_back(uint64_t(t) << 24);
      in.tensor_region.push_back(0);
    }
    in.region_peak_GBps = {mem.peak_bandwidth_GBps()};
    sim::ReplayOptions opt;
    opt.reuse = reuse;
    return sim::replay(proc, in, opt);
  };
  test::FakeMemory m1(100.0, 100.0), m2(100.0, 100.0);
  const auto reused = run_layers(m1, true), simulated = run_layers(m2, false);
  for (uint32_t i = 0; i < 12; ++i)
    EXPECT_EQ(reused.kernels[i].simulated, i < 3 ? "all" : "reused") << reused.kernels[i].name;
  for (uint32_t i = 3; i < 12; ++i)
    EXPECT_NEAR(reused.kernels[i].duration_ns(), reused.kernels[i % 3].duration_ns(), 1e-6) << i;  // ns from ps
  EXPECT_NEAR(reused.step_ns, simulated.step_ns, 1e-6 * simulated.step_ns);
  EXPECT_EQ(m1.bytes(), a_bytes + p_bytes + b_bytes);  // A0 P0 B0 only
  EXPECT_EQ(m2.bytes(), 4 * (a_bytes + p_bytes + b_bytes));
  for (const auto& k : simulated.kernels) EXPECT_EQ(k.simulated, "all");
}

TEST(Replay, FastModeNeverReusesAKernelThatSharesTheMachineOrDiffersInAlignment) {
  Rig rig("gpu.max_outstanding_requests_per_sm=64");
  // Stream 0 runs A0 -> A1 while stream 1 runs A2 from the start: every kernel shares the machine
  // with another at some point, so none may stand in for another.
  {
    test::FakeMemory mem(100.0, 100.0);
    auto out = run_fast(rig, {kernel(0, 8), kernel(1, 8, {0}), kernel(2, 8, {}, 1)},
                        {stream_read(0, 8, 65536), on_tensor(stream_read(1, 8, 65536), 1), stream_read(2, 8, 65536)},
                        mem, true);
    for (const auto& k : out.kernels) EXPECT_NE(k.simulated, "reused") << k.name;
    EXPECT_EQ(mem.bytes(), 3u * 8 * 65536);
  }
  // A chain whose twin starts 64 B into its tensor: it splits into lines differently, so it runs.
  {
    test::FakeMemory mem(100.0, 100.0);
    AccessRecord shifted = on_tensor(stream_read(1, 8, 65536), 1);
    shifted.base = 64;
    auto out = run_fast(rig, {kernel(0, 8), kernel(1, 8, {0})}, {stream_read(0, 8, 65536), shifted}, mem, true);
    EXPECT_EQ(out.kernels[1].simulated, "all");
  }
}

TEST(Replay, FastModeMatchesGathersByTrafficNotByWhichRowsTheyPick) {
  // Three single-CTA gathers of 64 rows of 256 B (two lines each) in a chain: B picks other rows
  // than A but touches as many distinct lines, so it reuses A's duration; C picks adjacent rows at a
  // pitch of 128 B, which share lines (65 distinct lines against 128), so it runs on its own.
  Rig rig;
  auto gather = [](uint32_t kernel, uint32_t first_row, uint32_t step, uint64_t pitch) {
    AccessRecord g;
    g.kernel = kernel;
    g.kind = AccessRecord::Kind::gather;
    g.row_bytes = 256;
    g.row_pitch_bytes = pitch;
    for (uint32_t i = 0; i < 64; ++i) g.rows.push_back(first_row + i * step);
    return g;
  };
  test::FakeMemory mem(100.0, 100.0);
  auto out = run_fast(rig, {kernel(0, 1), kernel(1, 1, {0}), kernel(2, 1, {1})},
                      {gather(0, 0, 3, 256), gather(1, 1000, 5, 256), gather(2, 0, 1, 128)}, mem, true);
  EXPECT_EQ(out.kernels[0].simulated, "all");
  EXPECT_EQ(out.kernels[1].simulated, "reused");
  EXPECT_EQ(out.kernels[2].simulated, "all");
}

TEST(Replay, FastModeMatchesGathersWhoseLinesAreWithinTwoPercent) {
  // Single-CTA gathers of 101 rows of 256 B (two lines each) in a chain. A's rows are distinct: 202
  // row lines, 202 distinct. B repeats one row: 202 and 200 (1 % fewer distinct lines), so it reuses
  // A's duration; 202 and 200 lay on either side of a 2 % step's edge (1.02^268 = 201.8), which
  // the matching by steps did not reuse. C repeats four rows: 194 distinct (4 % fewer), so it runs.
  Rig rig;
  auto gather = [](uint32_t kernel, uint32_t repeats) {
    AccessRecord g;
    g.kernel = kernel;
    g.kind = AccessRecord::Kind::gather;
    g.row_bytes = 256;
    g.row_pitch_bytes = 256;
    for (uint32_t i = 0; i < 101; ++i) g.rows.push_back(i < repeats ? 3 * 100 : 3 * i + 1000 * kernel);
    return g;
  };
  test::FakeMemory mem(100.0, 100.0);
  auto out = run_fast(rig, {kernel(0, 1), kernel(1, 1, {0}), kernel(2, 1, {1})}, {gather(0, 0), gather(1, 2), gather(2, 5)},
                      mem, true);
  EXPECT_EQ(out.kernels[0].simulated, "all");
  EXPECT_EQ(out.kernels[1].simulated, "reused");
  EXPECT_EQ(out.kernels[2].simulated, "all");
}

TEST(Replay, FastModeMatchesGathersByTheLinesTheWholeKernelTouches) {
  // Kernels of 4 CTAs, each CTA gathering 64 rows of 256 B (two lines each). A's CTAs pick disjoint
  // rows (512 distinct lines); B does the same elsewhere and reuses A's duration; C's four CTAs all
  // pick the same 64 rows: as many lines per CTA, but 128 distinct in the kernel (what its CTAs
  // share in the L2), so it runs on its own.
  Rig rig;
  auto gathers = [](uint32_t kernel, uint32_t first_row, bool shared) {
    std::vector<AccessRecord> out;
    for (uint32_t cta = 0; cta < 4; ++cta) {
      AccessRecord g;
      g.kernel = kernel;
      g.cta_first = cta;
      g.kind = AccessRecord::Kind::gather;
      g.row_bytes = 256;
      g.row_pitch_bytes = 256;
      for (uint32_t i = 0; i < 64; ++i) g.rows.push_back(first_row + (shared ? 0 : cta * 1000) + i * 3);
      out.push_back(g);
    }
    return out;
  };
  std::vector<AccessRecord> as;
  for (const auto& [kernel, row, shared] : {std::tuple{0u, 0u, false}, {1u, 50000u, false}, {2u, 0u, true}})
    for (const AccessRecord& g : gathers(kernel, row, shared)) as.push_back(g);
  test::FakeMemory mem(100.0, 100.0);
  auto out = run_fast(rig, {kernel(0, 4), kernel(1, 4, {0}), kernel(2, 4, {1})}, as, mem, true);
  EXPECT_EQ(out.kernels[0].simulated, "all");
  EXPECT_EQ(out.kernels[1].simulated, "reused");
  EXPECT_EQ(out.kernels[2].simulated, "all");
}

TEST(Replay, SampledEndIsTheLeastSquaresLineThroughTheWaveMarksAtTheWholeGrid) {
  using model::Tick;
  // On a line t = 1000 + 400 x (ps, x in waves) the fit is exact: at 25 waves, 1000 + 400 x 25.
  EXPECT_EQ(sim::extrapolate_sampled_end({1400, 1800, 2200, 2600}, 25.0, 0.0), Tick(11000));
  // The slope never beats the roofline's time per wave: 500 ps per wave through the marks' mean
  // (x = 2.5, t = 2000): 2000 + 500 x (25 - 2.5).
  EXPECT_EQ(sim::extrapolate_sampled_end({1400, 1800, 2200, 2600}, 25.0, 500.0), Tick(13250));
  // Eight marks on the same line, the last one a wave's time (400 ps) early, as when a burst of
  // CTAs ends just before the sample's last dispatch. The slope between the end points is
  // 2400 / 7 = 342.9 (-14 %); the fitted one is (400 x 42 - 400 x 3.5) / 42 = 366.7 (-8 %), through
  // the mean (4.5, 2750): at 20 waves 2750 + 366.7 x 15.5 = 8433 against the line's 9000.
  EXPECT_EQ(sim::extrapolate_sampled_end({1400, 1800, 2200, 2600, 3000, 3400, 3800, 3800}, 20.0, 0.0), Tick(8433));
  EXPECT_THROW(sim::extrapolate_sampled_end({1400}, 25.0, 0.0), std::invalid_argument);
}

TEST(Replay, ASampleIsSteadyWhenItsPredictedEndNoLongerDependsOnItsFirstOrLatestMarks) {
  using model::Tick;
  const model::WaveSampling rule{10, 4, 0.005};
  // On a line (400 ps a wave from 1000) every fit predicts 1000 + 400 x 25 = 11000: steady at four
  // marks, not at three (no line can be left out of the last two).
  EXPECT_TRUE(sim::steady_end({1400, 1800, 2200, 2600}, 0, 25.0, 0.0, rule));
  EXPECT_FALSE(sim::steady_end({1400, 1800, 2200}, 0, 25.0, 0.0, {10, 1, 1.0}));
  // A rate still falling (waves of 500, 450, 400 ps): the slope through all four marks is 450 (end
  // 12325 at 25 waves), 425 without the first (11783, -4.4 %), 475 without the latest (12908, +4.7 %).
  EXPECT_FALSE(sim::steady_end({1500, 2000, 2450, 2850}, 0, 25.0, 0.0, rule));
  EXPECT_TRUE(sim::steady_end({1500, 2000, 2450, 2850}, 0, 25.0, 0.0, {10, 4, 0.10}));
  // A rhythm of three waves (two of 450 ps, one of 300): through all six marks the end at 25 waves
  // is 10927; without the latest (a short wave) 11170, +2.2 %: not steady at a 2 % tolerance.
  EXPECT_FALSE(sim::steady_end({1450, 1900, 2200, 2650, 3100, 3400}, 0, 25.0, 0.0, {10, 4, 0.02}));
  // The minimum number of marks is the section's, never fewer than four.
  EXPECT_FALSE(sim::steady_end({1400, 1800, 2200, 2600}, 0, 25.0, 0.0, {10, 5, 0.005}));
}

TEST(Replay, ASampleWarmsWithTheLastSkippedCtasThatFillTheCachesTwice) {
  // 640 CTAs of 64 KiB (distinct lines) on 4 SMs x 8 slots: the 10-wave sample (320 CTAs) skips
  // the first 320. A memory whose warming reaches 1 MiB back, at fast_mode_warm_capacities 2, is
  // warmed by the last skipped CTAs that touch 2 MiB of distinct lines: 32 of them (CTAs 288-319;
  // one more at most, where the distinct-line estimate falls just short). A memory that keeps
  // nothing is not warmed; one that may keep anything is warmed by all 320. Timing does not move.
  Rig rig;
  rig.sm.max_outstanding_requests = 256;
  rig.sm.fast_sampling.max_waves = 10;
  rig.sm.fast_sampling.min_waves = 1000;  // no early stop: only the skipped CTAs warm
  rig.sm.warm_capacities = 2;
  test::FakeMemory window(100.0, 100.0), none(100.0, 100.0), all(100.0, 100.0);
  window.set_warm_reach(1 << 20);
  none.set_warm_reach(0);
  const std::vector<KernelRecord> ks{kernel(0, 640)};
  const std::vector<AccessRecord> as{stream_read(0, 640, 65536)};
  const auto a = run(rig, ks, as, window, true), b = run(rig, ks, as, none, true), c = run(rig, ks, as, all, true);
  EXPECT_GE(window.warmed(), 32u * 65536);
  EXPECT_LE(window.warmed(), 33u * 65536);
  EXPECT_EQ(window.warmed() % 65536, 0u);  // whole CTAs, through to the last skipped one
  EXPECT_EQ(window.first_warmed(), 320u * 65536 - window.warmed());
  EXPECT_EQ(none.warmed(), 0u);
  EXPECT_EQ(all.warmed(), 320u * 65536);
  EXPECT_EQ(window.bytes(), 320u * 65536);
  EXPECT_EQ(a.step_ns, c.step_ns);
  EXPECT_EQ(b.step_ns, c.step_ns);
}

TEST(Replay, ASteadySampleStopsEarlyWarmsTheRestAndKeepsItsTime) {
  // 640 CTAs of 64 KiB on 4 SMs x 8 slots (20 waves of 32) against a memory of constant rate: the
  // waves end on a line, so the 10-wave sample may stop after a few marks. The CTAs it never starts
  // are warmed instead, and the kernel's time stays that of the whole 10-wave sample (within 1 %).
  // Both lie within 3 % of the unsampled run (every CTA simulated): the wave marks of this stream
  // run ~2.5 % slow of its bandwidth until its drain, which only the whole grid sees.
  auto rig_with = [](uint32_t max_waves, uint32_t min_waves) {
    Rig r;
    r.sm.max_outstanding_requests = 256;
    r.sm.fast_sampling.max_waves = max_waves;
    r.sm.fast_sampling.min_waves = min_waves;
    return r;
  };
  test::FakeMemory m1(100.0, 100.0), m2(100.0, 100.0), m3(100.0, 100.0);
  const std::vector<KernelRecord> ks{kernel(0, 640)};
  const std::vector<AccessRecord> as{stream_read(0, 640, 65536)};
  auto early = run(rig_with(10, 4), ks, as, m1, true);
  auto whole = run(rig_with(10, 1000), ks, as, m2, true);
  auto unsampled = run(rig_with(1000, 1000), ks, as, m3, true);
  EXPECT_EQ(m2.bytes(), 320u * 65536);                      // the whole sample: 10 waves
  EXPECT_LT(m1.bytes(), 8u * 32 * 65536);                   // stopped within 8 waves
  EXPECT_EQ(m1.bytes() + m1.warmed(), m2.bytes() + m2.warmed());  // every CTA simulated or warmed
  EXPECT_EQ(early.kernels[0].simulated, "sampled");
  EXPECT_EQ(early.kernels[0].bytes_read, 640u * 65536);
  EXPECT_NEAR(early.step_ns, whole.step_ns, 0.01 * whole.step_ns);
  EXPECT_NEAR(early.step_ns, unsampled.step_ns, 0.03 * unsampled.step_ns);
  EXPECT_EQ(m3.bytes(), 640u * 65536);
}

TEST(Replay, AKernelClassTooBigForAnSmKeepsItsStageSizeAndDropsStages) {
  // 228 KiB per SM, 4 stages: a 256 KiB CTA has 64 KiB stages, 3 of them fit: 192 KiB. One that
  // fits is unchanged; one whose single stage does not fit (pipeline of 1, 300 KiB) is left as it is.
  test::FakeMemory mem(100.0, 100.0);
  Rig four("gpu.pipeline_stages=4"), one;
  model::SmArray p4(four.sm, four.tcp, mem), p1(one.sm, one.tcp, mem);
  EXPECT_EQ(p4.fitted_smem_bytes(256 * 1024), 192u * 1024);
  EXPECT_EQ(p4.fitted_smem_bytes(100 * 1024), 100u * 1024);
  EXPECT_EQ(p1.fitted_smem_bytes(300 * 1024), 300u * 1024);
}

TEST(Replay, AOneWaveKernelProjectsItsLinesOnceItsRateIsSteady) {
  // 32 CTAs of 256 KiB (one wave of 4 SMs x 8 slots) against a memory of constant rate, 32 marks: the
  // marks (each 1/32 of the 65,536 lines done) fall on a line, so after min_waves (4) of them the
  // rest of every CTA is warmed, not sent, and takes (its lines left + its lines in flight) x
  // (CTAs moving) / R, R the fitted lines per ps. Formula check: the kernel ends where the line
  // through the marks reaches 32 marks, within 2 % of every line simulated; the bytes it reports
  // are all of them, sent plus warmed.
  auto rig_with = [](uint32_t marks) {
    Rig r;
    r.sm.max_outstanding_requests = 256;
    r.sm.fast_sampling.line_marks = marks;
    return r;
  };
  test::FakeMemory m1(100.0, 100.0), m2(100.0, 100.0);
  const std::vector<KernelRecord> ks{kernel(0, 32)};
  const std::vector<AccessRecord> as{stream_read(0, 32, 262144)};
  auto steady = run(rig_with(32), ks, as, m1, true);
  auto whole = run(rig_with(0), ks, as, m2, true);
  const uint64_t all = 32u * 262144;
  EXPECT_EQ(m2.bytes(), all);
  EXPECT_LT(m1.bytes(), all / 2);                    // steady well before half of the lines
  EXPECT_EQ(m1.bytes() + m1.warmed(), all);          // every line sent or warmed
  EXPECT_EQ(steady.kernels[0].bytes_read, all);
  EXPECT_EQ(steady.kernels[0].simulated, "steady");
  EXPECT_EQ(whole.kernels[0].simulated, "all");
  EXPECT_NEAR(steady.step_ns, whole.step_ns, 0.02 * whole.step_ns);
  // Deterministic: the same run twice gives the same time to the picosecond.
  test::FakeMemory m3(100.0, 100.0);
  EXPECT_EQ(run(rig_with(32), ks, as, m3, true).step_ns, steady.step_ns);
}

TEST(Replay, UnevenCtasAndKernelsOfSeveralWavesSimulateEveryLine) {
  // Where CTAs differ in lines by more than 5 %, the long ones speed up as the short ones end, which
  // one steady rate cannot say; across waves the rate steps. Both keep every line in the memory.
  Rig r;
  r.sm.max_outstanding_requests = 256;
  r.sm.fast_sampling.line_marks = 32;
  test::FakeMemory uneven_mem(100.0, 100.0), waves_mem(100.0, 100.0);
  AccessRecord longer = stream_read(0, 16, 262144), shorter = stream_read(0, 16, 131072);
  shorter.cta_first = 16;
  shorter.tensor = 0;
  auto uneven = run(r, {kernel(0, 32)}, {longer, shorter}, uneven_mem, true);
  EXPECT_EQ(uneven_mem.warmed(), 0u);
  EXPECT_EQ(uneven.kernels[0].simulated, "all");
  auto waves = run(r, {kernel(0, 64)}, {stream_read(0, 64, 131072)}, waves_mem, true);
  EXPECT_EQ(waves_mem.warmed(), 0u);
  EXPECT_EQ(waves.kernels[0].simulated, "all");
}

TEST(Replay, TheSteadyLineMarksKeyIsOptionalAndChecked) {
  // Absent: 0 (off). Present: at least fast_mode_min_sample_waves + 2.
  Rig off;
  EXPECT_EQ(off.sm.fast_sampling.line_marks, 0u);
  Rig on("gpu.fast_mode_steady_line_marks=32");
  EXPECT_EQ(on.sm.fast_sampling.line_marks, 32u);
  EXPECT_THROW(Rig("gpu.fast_mode_steady_line_marks=5"), std::exception);
}

TEST(Replay, AMathBoundKernelStopsAtItsMathMarksAndEndsOnWholeWaves) {
  // 41 CTAs, one per SM (200 KiB of shared memory) on 4 SMs: 10.25 waves. Each CTA's math is
  // 2^24 bf16 FLOPs at 1024 FLOP/clk, 1 GHz: 16384 ns; it reads 256 KiB over a 1000 B/ns memory, done
  // in about 1.1 us, and its last stage (25 KiB of 8 stages' 200 KiB, 1/10.24 of its reads) adds
  // 1600 ns: the math sets every CTA's end, with more than 25 % of it to spare. Every CTA simulated,
  // SM s runs ceil(41 / 4) = 11 CTAs one after another: 11 x 16384 = 180224 ns. With the math rule
  // the sample stops once 4 marks after the first are in (CTAs 8, 12, 16, 20 ended 16384 ns apart)
  // and reads their line at 11 waves: 180224 ns, to the picosecond. Without it, the same sample reads the line at
  // 10.25 waves: 10.25 x 16384 = 167936 ns, a partial last wave counted as a fraction of a full one.
  auto rig_with = [](uint32_t max_waves, uint32_t math_marks) {
    Rig r("gpu.pipeline_stages=8");
    r.sm.max_outstanding_requests = 256;
    r.sm.fast_sampling.max_waves = max_waves;
    r.sm.fast_sampling.min_waves = 4;
    r.sm.fast_sampling.math_bound_marks = math_marks;
    r.sm.fast_sampling.math_bound_slack = 0.25;
    return r;
  };
  KernelRecord k = kernel(0, 41);
  k.smem_bytes = 200 * 1024;
  k.double_buffered = true;
  k.flops[int(trace::Precision::bf16)] = 41.0 * (1 << 24);
  const std::vector<AccessRecord> as{stream_read(0, 41, 262144)};
  test::FakeMemory m1(1000.0, 100.0), m2(1000.0, 100.0), m3(1000.0, 100.0);
  auto every = run(rig_with(1000, 0), {k}, as, m1, true);
  auto math = run(rig_with(10, 4), {k}, as, m2, true);
  auto fraction = run(rig_with(10, 0), {k}, as, m3, true);
  EXPECT_NEAR(every.step_ns, 180224.0, 1.0);
  EXPECT_NEAR(math.step_ns, every.step_ns, 1e-3);
  EXPECT_EQ(math.kernels[0].simulated, "sampled");
  EXPECT_LE(m2.bytes(), 28u * 262144);  // stopped at its 5th mark (4 after the first): at most 7 waves begun
  EXPECT_EQ(m2.bytes() + m2.warmed(), 41u * 262144);
  EXPECT_NEAR(fraction.step_ns, 167936.0, 1.0);

  // The same reads without the math: every CTA waits on its memory, not one is math-bound, so the
  // math rule neither stops the sample (the rate rule is off here: min_waves 1000) nor rounds its
  // waves: the run is the one without the rule, to the picosecond.
  KernelRecord mem_bound = k;
  mem_bound.flops = {};
  auto rate_off = [&](uint32_t math_marks) {
    Rig r = rig_with(10, math_marks);
    r.sm.fast_sampling.min_waves = 1000;
    return r;
  };
  test::FakeMemory m4(1000.0, 100.0), m5(1000.0, 100.0);
  auto streamed = run(rate_off(4), {mem_bound}, as, m4, true);
  auto streamed_plain = run(rate_off(0), {mem_bound}, as, m5, true);
  EXPECT_EQ(m4.bytes(), 40u * 262144);  // the whole 10-wave sample
  EXPECT_EQ(streamed.step_ns, streamed_plain.step_ns);
}

TEST(Replay, TheMathBoundKeysAreOptionalAndChecked) {
  // Absent: off. The marks: 0 or at least four (the steadiness test needs them); the slack in per cent.
  Rig off;
  EXPECT_EQ(off.sm.fast_sampling.math_bound_marks, 0u);
  EXPECT_EQ(off.sm.fast_sampling.math_bound_slack, 0.0);
  Rig on("gpu.fast_mode_math_bound_marks=4");
  EXPECT_EQ(on.sm.fast_sampling.math_bound_marks, 4u);
  Rig slack("gpu.fast_mode_math_bound_slack_percent=5");
  EXPECT_DOUBLE_EQ(slack.sm.fast_sampling.math_bound_slack, 0.05);
  EXPECT_THROW(Rig("gpu.fast_mode_math_bound_marks=3"), std::exception);
  EXPECT_THROW(Rig("gpu.fast_mode_math_bound_slack_percent=150"), std::exception);
}

TEST(Replay, AGemmReplaysItsLastWavesColdAndEachWaveLeftOutTakesASampledWavesTime) {
  // A pipelined GEMM (double-buffered, 4 K steps): one CTA per SM (200 KiB of shared memory) on 4
  // SMs, 41 CTAs: 10 full waves and one CTA. With fast_mode_gemm_sample_waves = 3 it replays its
  // last 3 full waves and the partial one (13 CTAs), unwarmed, and the 7 full waves left out take the
  // slope of the line through the sample's wave marks (2 of them: 4 and 8 CTAs ended) each:
  //   end = sample end + 7 x (mark 2 - mark 1).
  // Math-bound (16384 ns of math a CTA, its 256 KiB read in ~1.1 us): the sample's SMs run
  // ceil(13 / 4) = 4 CTAs' math, 65536 ns, the marks 16384 ns apart: 65536 + 7 x 16384 = 180224 ns,
  // the 11 x 16384 of every CTA simulated, to the picosecond.
  auto rig_with = [](uint32_t gemm_waves) {
    Rig r("gpu.pipeline_stages=8");
    r.sm.max_outstanding_requests = 256;
    r.sm.fast_sampling.max_waves = 1000;  // wave sampling leaves it whole
    r.sm.fast_sampling.min_waves = 1000;
    r.sm.fast_sampling.gemm_waves = gemm_waves;
    return r;
  };
  const uint64_t cta_bytes = 262144;
  // Each CTA's panel: 32 rows of 8 KiB, walked in 4 K steps of 2 KiB a row.
  auto panel = [&](uint32_t ctas) {
    AccessRecord a = stream_read(0, ctas, cta_bytes);
    a.elem_bytes = 8192;
    a.count = cta_bytes / 8192;
    a.stride_bytes = 8192;
    return a;
  };
  auto gemm = [](uint32_t ctas, bool math) {
    KernelRecord k = kernel(0, ctas);
    k.smem_bytes = 200 * 1024;
    k.double_buffered = true;
    k.load_steps = 4;
    if (math) k.flops[int(trace::Precision::bf16)] = double(ctas) * (1 << 24);
    return k;
  };
  test::FakeMemory m1(1000.0, 100.0), m2(1000.0, 100.0);
  auto every = run(rig_with(0), {gemm(41, true)}, {panel(41)}, m1, true);
  auto sampled = run(rig_with(3), {gemm(41, true)}, {panel(41)}, m2, true);
  EXPECT_NEAR(every.step_ns, 180224.0, 1.0);
  EXPECT_NEAR(sampled.step_ns, every.step_ns, 1e-3);
  EXPECT_EQ(sampled.kernels[0].simulated, "sampled");
  EXPECT_EQ(m2.bytes(), 13 * cta_bytes);
  EXPECT_EQ(m2.warmed(), 0u);  // cold, as its first wave
  EXPECT_EQ(sampled.kernels[0].bytes_read, 41 * cta_bytes);  // reported for the whole grid

  // Memory-bound (no math): on this memory of fixed latency and bandwidth its waves repeat, and the
  // sample's end plus 7 waves at the marks' slope lands within 0.5 % of every CTA simulated.
  test::FakeMemory m3(1000.0, 100.0), m4(1000.0, 100.0);
  auto mem_every = run(rig_with(0), {gemm(41, false)}, {panel(41)}, m3, true);
  auto mem_sampled = run(rig_with(3), {gemm(41, false)}, {panel(41)}, m4, true);
  EXPECT_NEAR(mem_sampled.step_ns, mem_every.step_ns, 0.005 * mem_every.step_ns);
  EXPECT_EQ(m4.bytes(), 13 * cta_bytes);

  // A grid of whole waves (40 CTAs): its last full wave is its tail, so one more is replayed (4 full
  // waves, 16 CTAs) and 6 are left out: 4 x 16384 + 6 x 16384 = 163840 ns, every CTA's 10 x 16384.
  test::FakeMemory m5(1000.0, 100.0);
  auto whole_waves = run(rig_with(3), {gemm(40, true)}, {panel(40)}, m5, true);
  EXPECT_EQ(m5.bytes(), 16 * cta_bytes);
  EXPECT_NEAR(whole_waves.step_ns, 163840.0, 1.0);

  // Too few waves to leave one out (4 full waves and a CTA), or not a pipelined kernel: whole.
  test::FakeMemory m6(1000.0, 100.0), m7(1000.0, 100.0);
  auto short_grid = run(rig_with(4), {gemm(17, true)}, {panel(17)}, m6, true);
  EXPECT_EQ(m6.bytes(), 17 * cta_bytes);
  EXPECT_EQ(short_grid.kernels[0].simulated, "all");
  KernelRecord plain = gemm(41, true);
  plain.load_steps = 0;
  run(rig_with(3), {plain}, {panel(41)}, m7, true);
  EXPECT_EQ(m7.bytes(), 41 * cta_bytes);

  // The key: absent, 0 (off); 1 and 2 refused, naming it (two marks need three waves).
  EXPECT_EQ(Rig().sm.fast_sampling.gemm_waves, 0u);
  EXPECT_EQ(Rig("gpu.fast_mode_gemm_sample_waves=3").sm.fast_sampling.gemm_waves, 3u);
  for (const char* bad : {"gpu.fast_mode_gemm_sample_waves=1", "gpu.fast_mode_gemm_sample_waves=2"}) {
    try {
      Rig r(bad);
      FAIL() << bad;
    } catch (const config::ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("fast_mode_gemm_sample_waves"), std::string::npos) << e.what();
    }
  }
}

TEST(Replay, ASampleNotYetSteadyRunsOnUpToItsRunOnWaves) {
  // One CTA per SM (200 KiB of shared memory) on 4 SMs: a wave is 4 CTAs of 64 KiB read each. The
  // steadiness test never passes here (min_waves 1000), so a sample replays exactly its cap:
  // max(fast_mode_sample_waves, fast_mode_run_on_waves) of its last waves, the rest warmed.
  //   40 waves, run on 10 (as without the key): 40 CTAs simulated, 120 warmed;
  //   40 waves, run on 30: 120 simulated, 40 warmed;
  //   20 waves, run on 30: all 80 from the first, none warmed, and still sampled (it may stop);
  //   10 waves: not sampled, whole.
  auto rig_with = [](uint32_t run_on) {
    Rig r("gpu.fast_mode_run_on_waves=" + std::to_string(run_on));
    r.sm.fast_sampling.max_waves = 10;
    r.sm.fast_sampling.min_waves = 1000;
    return r;
  };
  const uint64_t cta_bytes = 65536;
  auto replay_waves = [&](uint32_t waves, uint32_t run_on, test::FakeMemory& m) {
    KernelRecord k = kernel(0, 4 * waves);
    k.smem_bytes = 200 * 1024;
    return run(rig_with(run_on), {k}, {stream_read(0, 4 * waves, cta_bytes)}, m, true);
  };
  test::FakeMemory m1(1000.0, 100.0), m2(1000.0, 100.0), m3(1000.0, 100.0), m4(1000.0, 100.0);
  const auto cut = replay_waves(40, 10, m1);
  const auto on = replay_waves(40, 30, m2);
  const auto cold = replay_waves(20, 30, m3);
  const auto whole = replay_waves(10, 30, m4);
  EXPECT_EQ(m1.bytes(), 40 * cta_bytes);
  EXPECT_EQ(m1.warmed(), 120 * cta_bytes);
  EXPECT_EQ(m2.bytes(), 120 * cta_bytes);
  EXPECT_EQ(m2.warmed(), 40 * cta_bytes);
  EXPECT_EQ(m3.bytes(), 80 * cta_bytes);
  EXPECT_EQ(m3.warmed(), 0u);
  EXPECT_EQ(m4.bytes(), 40 * cta_bytes);
  EXPECT_EQ(cut.kernels[0].simulated, "sampled");
  EXPECT_EQ(on.kernels[0].simulated, "sampled");
  EXPECT_EQ(whole.kernels[0].simulated, "all");
  // A cap below fast_mode_sample_waves (2 in this file) is refused, naming the key.
  try {
    Rig bad("gpu.fast_mode_run_on_waves=1");
    FAIL();
  } catch (const config::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("fast_mode_run_on_waves"), std::string::npos) << e.what();
  }
}
