// SPDX-License-Identifier: Apache-2.0
// NPU SRAM timing core: replacement policies on known sequences, scratchpad placement, banks.
#include <gtest/gtest.h>

#include "models/sram/sram.hpp"
#include "tests/cpp/test_memsys_fixed.hpp"

using indexsim::model::MemRequest;
using indexsim::model::NpuSram;
using indexsim::model::SramParams;
using indexsim::model::StatSink;
using indexsim::model::Tick;
using indexsim::model::kNever;
using indexsim::test::FixedLatencyMemory;
using indexsim::test::done_of;
using indexsim::test::drain;

namespace {
constexpr Tick T = 1000;  // 1000 MHz

SramParams params(const std::string& policy, double capacity_KiB, uint32_t ways) {
  SramParams p;
  p.clock_MHz = 1000;
  p.capacity_KiB = capacity_KiB;
  p.banks = 4;
  p.bank_interleave_B = 128;
  p.bank_bandwidth_Bpc = 32;
  p.access_latency_cycles = 10;
  p.queue_depth_per_bank = 64;
  p.policy = policy;
  p.line_B = 128;
  p.ways = ways;
  return p;
}

// Replays line indices one at a time on a fully associative 3-line cache; returns {hits, misses}.
std::pair<double, double> replay(const std::string& policy, const std::vector<uint64_t>& lines) {
  NpuSram s(params(policy, 3 * 128 / 1024.0, 3));  // one set of three ways
  s.attach(std::make_unique<FixedLatencyMemory>(100 * T));
  Tick t = 0;
  uint64_t id = 0;
  for (uint64_t l : lines) {
    EXPECT_TRUE(s.try_enqueue({id++, l * 128, 64, false, 0}, t));
    drain(s);
    t += 1000 * T;
  }
  StatSink sink;
  s.report(sink, "sram");
  return {sink.get("sram", "hits"), sink.get("sram", "misses")};
}

const std::vector<uint64_t> kSequence = {1, 2, 3, 1, 4, 1, 5, 2, 1, 3};
}  // namespace

TEST(NpuSram, LruKeepsTheRecentlyUsedLineOnAKnownSequence) {
  // 1 2 3 miss; 1 hit; 4 evicts 2; 1 hit; 5 evicts 3; 2 evicts 4; 1 hit; 3 evicts 5.
  const auto [hits, misses] = replay("lru", kSequence);
  EXPECT_EQ(hits, 3);
  EXPECT_EQ(misses, 7);
}

TEST(NpuSram, FifoEvictsTheOldestInsertionOnTheSameSequence) {
  // 1 2 3 miss; 1 hit; 4 evicts 1; 1 evicts 2; 5 evicts 3; 2 evicts 4; 1 hit; 3 evicts 1.
  const auto [hits, misses] = replay("fifo", kSequence);
  EXPECT_EQ(hits, 2);
  EXPECT_EQ(misses, 8);
}

TEST(NpuSram, ScratchpadPlacementsNeverMiss) {
  NpuSram s(params("scratchpad", 64, 1));  // no downstream: a miss would have nowhere to go
  uint64_t rng = 7;
  Tick t = 0;
  for (uint64_t i = 0; i < 5000; ++i) {
    rng = indexsim::model::mix64(rng + i);
    ASSERT_TRUE(s.try_enqueue({i, (rng % (64 * 1024 / 64)) * 64, 64, (i % 3) == 0, 0}, t));
    if (i % 32 == 31) drain(s);
    t += 3 * T;
  }
  drain(s);
  StatSink sink;
  s.report(sink, "sram");
  EXPECT_EQ(sink.get("sram", "hits"), 5000);
  EXPECT_EQ(sink.get("sram", "misses"), 0);
  EXPECT_EQ(sink.get("sram", "hit_rate"), 1.0);
}

TEST(NpuSram, ScratchpadAccessOutsideThePlacedCapacityIsAnError) {
  NpuSram s(params("scratchpad", 64, 1));
  EXPECT_THROW(s.try_enqueue({1, 64 * 1024, 64, false, 0}, 0), std::out_of_range);
}

TEST(NpuSram, AccessTakesTransferPlusLatencyAndOneBankSerialises) {
  NpuSram s(params("scratchpad", 64, 1));
  ASSERT_TRUE(s.try_enqueue({1, 0, 64, false, 0}, 0));
  ASSERT_TRUE(s.try_enqueue({2, 64, 64, false, 0}, 0));    // same 128 B bank granule: waits
  ASSERT_TRUE(s.try_enqueue({3, 128, 64, false, 0}, 0));   // next bank: in parallel
  const auto done = drain(s);
  // 64 B at 32 B/clk = 2 cycles, then 10 cycles of access latency.
  EXPECT_EQ(done_of(done, 1), (2 + 10) * T);
  EXPECT_EQ(done_of(done, 2), (2 + 2 + 10) * T);
  EXPECT_EQ(done_of(done, 3), (2 + 10) * T);
  EXPECT_EQ(s.next_event(), kNever);
}

TEST(NpuSram, CacheMissesToALineInFlightMergeIntoOneFill) {
  NpuSram s(params("lru", 16, 4));
  auto mem = std::make_unique<FixedLatencyMemory>(100 * T);
  auto* m = mem.get();
  s.attach(std::move(mem));
  ASSERT_TRUE(s.try_enqueue({1, 0, 64, false, 0}, 0));
  ASSERT_TRUE(s.try_enqueue({2, 64, 64, false, 0}, 0));
  const auto done = drain(s);
  EXPECT_EQ(m->reads, 1u);
  // fill at 100 cycles, then each read crosses bank 0: 2 cycles each, plus 10 cycles latency.
  EXPECT_EQ(done_of(done, 1), (100 + 2 + 10) * T);
  EXPECT_EQ(done_of(done, 2), (100 + 4 + 10) * T);
}

TEST(NpuSram, ARequestOfSeveralLinesLooksUpEachAndWaitsForItsLastFill) {
  // A 2 KiB fast-mode chunk spans 16 lines of 128 B: 16 accesses and 16 fills, served once the
  // last fill (all at 100 cycles) is in: the bank moves 2048 B at 32 B/clk after it. Again: 16 hits.
  NpuSram s(params("lru", 16, 4));
  auto mem = std::make_unique<FixedLatencyMemory>(100 * T);
  auto* m = mem.get();
  s.attach(std::move(mem));
  ASSERT_TRUE(s.try_enqueue({1, 0, 2048, false, 0}, 0));
  auto done = drain(s);
  EXPECT_EQ(m->reads, 16u);
  EXPECT_EQ(done_of(done, 1), (100 + 64 + 10) * T);
  ASSERT_TRUE(s.try_enqueue({2, 0, 2048, false, 0}, 1000 * T));
  drain(s);
  StatSink sink;
  s.report(sink, "sram");
  EXPECT_EQ(sink.get("sram", "misses"), 16);
  EXPECT_EQ(sink.get("sram", "hits"), 16);
  EXPECT_EQ(m->reads, 16u);
}

TEST(NpuSram, ACacheHoldsItsDirtyLinesUntilItWritesThemBack) {
  // dirty_bytes = line_B x dirty lines: a write makes its line dirty once, evicting it writes
  // line_B back and leaves nothing held. Written + growth of what is held = line_B x lines dirtied.
  NpuSram s(params("lru", 2 * 128 / 1024.0, 2));  // one set of two ways
  auto mem = std::make_unique<FixedLatencyMemory>(100 * T);
  auto* m = mem.get();
  s.attach(std::move(mem));
  uint64_t id = 0;
  Tick t = 0;
  for (const auto& [line, write] : std::vector<std::pair<uint64_t, bool>>{{0, true}, {0, true}, {1, false}}) {
    ASSERT_TRUE(s.try_enqueue({id++, line * 128, 64, write, 0}, t));
    drain(s);
    t += 1000 * T;
  }
  EXPECT_EQ(s.dirty_bytes(0), 128u);
  ASSERT_TRUE(s.try_enqueue({id++, 2 * 128, 64, true, 0}, t));  // evicts line 0 (dirty), line 2 dirty
  drain(s);
  EXPECT_EQ(m->bytes_written, 128u);
  EXPECT_EQ(s.dirty_bytes(0), 128u);
  EXPECT_EQ(m->bytes_written + s.dirty_bytes(0), 2u * 128);
}
