// SPDX-License-Identifier: Apache-2.0
// High-bandwidth flash timing core: array read, page buffer, channel bandwidth, slow programs.
#include <gtest/gtest.h>

#include "models/hbf/hbf.hpp"
#include "sim/memsys/bench.hpp"
#include "tests/cpp/test_memsys_fixed.hpp"

using indexsim::model::Hbf;
using indexsim::model::HbfParams;
using indexsim::model::Tick;
using indexsim::test::done_of;
using indexsim::test::drain;

namespace {
HbfParams params() {
  HbfParams p;
  p.capacity_GiB = 1;
  p.channels = 2;
  p.planes_per_channel = 64;
  p.page_KiB = 16;
  p.read_bandwidth_GBps = 200;   // 100 GB/s = 100 B/ns per channel
  p.write_bandwidth_GBps = 200;
  p.read_latency_us = 3;
  p.program_latency_us = 100;
  p.interface_latency_ns = 100;
  p.queue_depth_per_channel = 4096;
  return p;
}
}  // namespace

TEST(Hbf, FirstReadPaysArrayReadThenThePageBufferServesTheRest) {
  Hbf h(params());
  ASSERT_TRUE(h.try_enqueue({1, 0, 64, false, 0}, 0));
  // tR 3 us + 64 B at 100 B/ns (640 ps) + 100 ns interface
  EXPECT_EQ(done_of(drain(h), 1), Tick{3000000 + 640 + 100000});
  EXPECT_EQ(h.idle_read_latency_ps(), Tick{3000000 + 640 + 100000});
  const Tick t = 10000000;
  ASSERT_TRUE(h.try_enqueue({2, 64, 64, false, 0}, t));  // same page: no tR
  EXPECT_EQ(done_of(drain(h), 2), t + 640 + 100000);
}

TEST(Hbf, StreamingReadsReachTheReadBandwidth) {
  Hbf h(params());
  indexsim::sim::BenchSpec s;
  s.pattern = indexsim::sim::BenchPattern::Stream;
  s.requests = 4000;
  s.requesters = 16;
  s.outstanding = 64;
  s.bytes = 16384;
  s.footprint_bytes = h.capacity_bytes();
  const auto r = indexsim::sim::run_memory_bench(h, s);
  // Planes give 128 x 16 KiB / 3 us = 699 GB/s > 200: the channels (200 GB/s) are the limit; the
  // first 3 us of array reads is the only loss.
  EXPECT_LE(r.bandwidth_GBps, 200.0);
  EXPECT_GE(r.bandwidth_GBps, 0.9 * 200.0);
}

TEST(Hbf, WritesAreBoundByProgramTimeNotTheChannel) {
  Hbf h(params());
  indexsim::sim::BenchSpec s;
  s.pattern = indexsim::sim::BenchPattern::Mix;
  s.write_fraction = 1.0;
  s.requests = 2000;
  s.requesters = 16;
  s.outstanding = 64;
  s.bytes = 16384;
  s.footprint_bytes = h.capacity_bytes();
  const auto r = indexsim::sim::run_memory_bench(h, s);
  // 128 planes x 16 KiB per 100 us program = 21.0 GB/s, far below the 200 GB/s channels.
  const double cap = 128 * 16384 / 100000.0;
  EXPECT_LE(r.bandwidth_GBps, cap * 1.001);
  EXPECT_GE(r.bandwidth_GBps, 0.8 * cap);
}

TEST(Hbf, IdleFlashHasNoEvent) {
  Hbf h(params());
  EXPECT_EQ(h.next_event(), indexsim::model::kNever);
  ASSERT_TRUE(h.try_enqueue({1, 0, 64, false, 0}, 0));
  drain(h);
  EXPECT_EQ(h.next_event(), indexsim::model::kNever);
}
