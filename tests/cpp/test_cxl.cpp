// SPDX-License-Identifier: Apache-2.0
// CXL Type-3 expander timing core: idle latency and link-bound bandwidth, against a fixed DRAM.
#include <gtest/gtest.h>

#include <cmath>

#include "models/cxl/cxl.hpp"
#include "sim/memsys/bench.hpp"
#include "tests/cpp/test_memsys_fixed.hpp"

using indexsim::model::CxlExpander;
using indexsim::model::CxlParams;
using indexsim::model::Tick;
using indexsim::test::FixedLatencyMemory;
using indexsim::test::done_of;
using indexsim::test::drain;

namespace {
constexpr Tick kDram = 50000;  // 50 ns

CxlParams pcie5_x16_68B() {
  CxlParams p;
  p.lanes = 16;
  p.lane_rate_GTps = 32;
  p.encoding_efficiency = 128.0 / 130.0;
  p.flit_B = 68;
  p.slots_per_flit = 4;
  p.slot_B = 16;
  p.header_slots_per_line = 1;
  p.line_B = 64;
  p.port_latency_ns = 35;
  p.controller_latency_ns = 60;
  p.queue_depth = 256;
  return p;
}
Tick wire(double bytes, double GBps) { return static_cast<Tick>(std::ceil(bytes / GBps * 1000.0)); }

// 50,000 closed-loop 64 B requests from 8 x 32 slots; all reads, or all writes at write_fraction 1.
indexsim::sim::BenchResult sustained(CxlExpander& x, double write_fraction) {
  indexsim::sim::BenchSpec s;
  s.pattern = write_fraction > 0 ? indexsim::sim::BenchPattern::Mix : indexsim::sim::BenchPattern::Stream;
  s.write_fraction = write_fraction;
  s.requests = 50000;
  s.requesters = 8;
  s.outstanding = 32;
  s.bytes = 64;
  s.footprint_bytes = x.capacity_bytes();
  return indexsim::sim::run_memory_bench(x, s);
}
}  // namespace

TEST(CxlExpander, RawRateIsLanesTimesRateTimesEncoding) {
  // 16 x 32 GT/s x 128/130 / 8 = 63.0 GB/s per direction (reference §1.6: x16 = 63 GB/s).
  EXPECT_NEAR(pcie5_x16_68B().raw_GBps(), 63.0, 0.05);
}

TEST(CxlExpander, FlitEfficiencyIsDataOverSlotsOnTheWire) {
  // 68 B flit, 4 slots of 16 B: a line is 4 data + 1 header slot of 17 wire bytes each: 64 / 85.
  EXPECT_DOUBLE_EQ(pcie5_x16_68B().flit_efficiency(), 64.0 / 85.0);
  CxlParams p = pcie5_x16_68B();
  p.flit_B = 256;  // CXL 3.x: 15 slots of 16 B plus 16 B of header/CRC/FEC
  p.slots_per_flit = 15;
  p.header_slots_per_line = 0.5;
  EXPECT_DOUBLE_EQ(p.flit_efficiency(), 64.0 / (4.5 * 256.0 / 15.0));
}

TEST(CxlExpander, IdleReadIsLinkPlusControllerPlusDramLatency) {
  const CxlParams p = pcie5_x16_68B();
  CxlExpander x(p, std::make_unique<FixedLatencyMemory>(kDram));
  ASSERT_TRUE(x.try_enqueue({1, 0, 64, false, 0}, 0));
  // request header (17 B) on the wire + port + controller + DRAM + response (85 B) + port
  const Tick expect = wire(17, p.raw_GBps()) + 35000 + 60000 + kDram + wire(85, p.raw_GBps()) + 35000;
  EXPECT_EQ(done_of(drain(x), 1), expect);
  EXPECT_EQ(x.idle_read_latency_ps(), expect);
  EXPECT_EQ(x.next_event(), indexsim::model::kNever);
}

TEST(CxlExpander, SustainedReadBandwidthIsCappedByLinkRateTimesFlitEfficiency) {
  const CxlParams p = pcie5_x16_68B();
  CxlExpander x(p, std::make_unique<FixedLatencyMemory>(kDram));
  const auto r = sustained(x, 0.0);
  const double cap = p.raw_GBps() * p.flit_efficiency();  // 47.4 GB/s
  EXPECT_LE(r.bandwidth_GBps, cap);
  EXPECT_GE(r.bandwidth_GBps, 0.98 * cap);
}

TEST(CxlExpander, SustainedWriteBandwidthIsCappedTheSameWayOnTheOtherDirection) {
  const CxlParams p = pcie5_x16_68B();
  CxlExpander x(p, std::make_unique<FixedLatencyMemory>(kDram));
  const auto r = sustained(x, 1.0);
  const double cap = p.raw_GBps() * p.flit_efficiency();
  EXPECT_LE(r.bandwidth_GBps, cap);
  EXPECT_GE(r.bandwidth_GBps, 0.98 * cap);
}

TEST(CxlExpander, FullControllerQueueRefuses) {
  CxlParams p = pcie5_x16_68B();
  p.queue_depth = 2;
  CxlExpander x(p, std::make_unique<FixedLatencyMemory>(kDram));
  EXPECT_TRUE(x.try_enqueue({1, 0, 64, false, 0}, 0));
  EXPECT_TRUE(x.try_enqueue({2, 64, 64, false, 0}, 0));
  EXPECT_FALSE(x.try_enqueue({3, 128, 64, false, 0}, 0));
  drain(x);
  EXPECT_TRUE(x.try_enqueue({3, 128, 64, false, 0}, x.idle_read_latency_ps()));
}

TEST(CxlExpander, X8LinkHalvesTheCap) {
  CxlParams p = pcie5_x16_68B();
  p.lanes = 8;
  // 8 x 32 x 128/130 / 8 = 31.5 GB/s raw (§1.6), x 64/85 = 23.7 GB/s of data per direction.
  EXPECT_NEAR(p.raw_GBps() * p.flit_efficiency(), 31.5077 * 64.0 / 85.0, 1e-3);
}

TEST(CxlExpander, TwoRequestsWithOneIdInFlightBothComplete) {
  // An L2 MSHR fetches two sector runs of one line under one id: the expander must return both
  // (it used to key its flights by the requester's id and lose the first).
  CxlExpander x(pcie5_x16_68B(), std::make_unique<FixedLatencyMemory>(kDram));
  ASSERT_TRUE(x.try_enqueue({7, 0, 32, false, 0}, 0));
  ASSERT_TRUE(x.try_enqueue({7, 64, 64, false, 0}, 0));
  const auto done = drain(x);
  ASSERT_EQ(done.size(), 2u);
  EXPECT_EQ(done[0].id, 7u);
  EXPECT_EQ(done[1].id, 7u);
  EXPECT_LT(done[0].done, done[1].done);  // the second waits behind the first on the link
}
