// SPDX-License-Identifier: Apache-2.0
// The L2 timing core against a fixed-latency memory. Clock 1000 MHz: one cycle T = 1000 ps.
#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "models/l2/l2.hpp"
#include "tests/cpp/test_memsys_fixed.hpp"

using indexsim::model::L2Cache;
using indexsim::model::L2Params;
using indexsim::model::SetIndex;
using indexsim::model::MemRequest;
using indexsim::model::StatSink;
using indexsim::model::kNever;
using indexsim::model::Tick;
using indexsim::test::FixedLatencyMemory;
using indexsim::test::done_of;
using indexsim::test::drain;

namespace {
constexpr Tick T = 1000;        // one L2 cycle
constexpr Tick D = 100000;      // downstream latency: 100 ns
constexpr uint32_t H = 50, M = 20;

L2Params small(uint32_t slices = 1, uint32_t ways = 4, uint32_t sets = 4) {
  L2Params p;
  p.clock_MHz = 1000;
  p.line_B = 128;
  p.sector_B = 32;
  p.ways = ways;
  p.slices = slices;
  p.capacity_MiB = static_cast<double>(uint64_t{128} * ways * slices * sets) / (1024.0 * 1024.0);
  p.partitions = 1;
  p.hit_latency_near_cycles = H;
  p.hit_latency_far_cycles = H;
  p.miss_latency_cycles = M;
  p.slice_bandwidth_Bpc = 64;
  p.mshrs_per_slice = 8;
  p.queue_depth_per_slice = 16;
  return p;
}

struct Rig {
  explicit Rig(const L2Params& p, Tick lat = D) : l2(p) {
    auto f = std::make_unique<FixedLatencyMemory>(lat);
    mem = f.get();
    l2.attach(std::move(f));
  }
  Tick read(uint64_t id, uint64_t addr, uint32_t bytes, Tick at, uint32_t source = 0) {
    MemRequest r{id, addr, bytes, false, source};
    EXPECT_TRUE(l2.try_enqueue(r, at));
    return done_of(drain(l2), id);
  }
  void write(uint64_t id, uint64_t addr, uint32_t bytes, Tick at) {
    EXPECT_TRUE(l2.try_enqueue({id, addr, bytes, true, 0}, at));
    drain(l2);
  }
  double stat(const std::string& s) const {
    StatSink sink;
    l2.report(sink, "l2");
    return sink.get("l2", s);
  }
  L2Cache l2;
  FixedLatencyMemory* mem;
};
}  // namespace

TEST(L2Cache, ReadMissTakesFillPlusHitPlusMissPathThenHitTakesHitLatency) {
  Rig rig(small());
  // miss: lookup at 0, fill back at D, answered H + M cycles later
  EXPECT_EQ(rig.read(1, 0, 64, 0), D + (H + M) * T);
  const Tick t2 = 1000 * T;
  EXPECT_EQ(rig.read(2, 0, 64, t2), t2 + H * T);  // hit: H cycles
  EXPECT_EQ(rig.stat("read_hits"), 1);
  EXPECT_EQ(rig.stat("read_misses"), 1);
}

TEST(L2Cache, SecondMissToALineInFlightMergesInTheMshr) {
  Rig rig(small());
  ASSERT_TRUE(rig.l2.try_enqueue({1, 0, 64, false, 0}, 0));
  ASSERT_TRUE(rig.l2.try_enqueue({2, 0, 64, false, 0}, 0));
  const auto done = drain(rig.l2);
  EXPECT_EQ(rig.mem->reads, 1u);  // one fill for both
  EXPECT_EQ(rig.stat("merged_misses"), 1);
  // Both wait for the one fill: D + (H + M) cycles.
  EXPECT_EQ(done_of(done, 1), D + (H + M) * T);
  EXPECT_EQ(done_of(done, 2), D + (H + M) * T);
}

TEST(L2Cache, SectorMissFetchesOnlyTheMissingSectors) {
  Rig rig(small());
  rig.read(1, 0, 32, 0);           // sector 0 only: 32 B fetched
  rig.read(2, 0, 128, 1000 * T);   // sectors 1..3 missing: one 96 B fetch
  EXPECT_EQ(rig.mem->reads, 2u);
  EXPECT_EQ(rig.mem->bytes_read, 32u + 96u);
}

TEST(L2Cache, WritesAllocateWithoutFetchAndDirtyVictimsAreWrittenBack) {
  Rig rig(small(1, 2, 1));  // one set of two ways: every line competes
  rig.write(1, 0 * 128, 32, 0);
  rig.write(2, 1 * 128, 64, 1000 * T);
  rig.write(3, 2 * 128, 32, 2000 * T);  // evicts line 0 (least recently used), dirty in one sector
  EXPECT_EQ(rig.mem->reads, 0u);
  EXPECT_EQ(rig.mem->writes, 1u);
  EXPECT_EQ(rig.mem->bytes_written, 32u);
  EXPECT_EQ(rig.stat("writebacks"), 1);
  EXPECT_EQ(rig.stat("write_misses"), 3);
}

TEST(L2Cache, BytesDirtiedCountsSectorsThatBecomeDirtyWhenEverTheyAreWrittenBack) {
  // bytes_dirtied = sector_B x (clean or absent sectors a write makes dirty); a rewrite of a dirty
  // sector adds nothing, and neither does its writeback. Conserved: every such byte is written
  // downstream once, in this step or a later one.
  Rig rig(small(1, 2, 1));
  rig.write(1, 0, 64, 0);                 // sectors 0, 1 of line 0: 64 B
  rig.write(2, 32, 64, 1000 * T);         // sector 1 again (dirty) and sector 2: 32 B more
  EXPECT_EQ(rig.stat("bytes_dirtied"), 96);
  EXPECT_EQ(rig.stat("writebacks"), 0);   // nothing written back yet
  rig.read(3, 1 * 128, 32, 2000 * T);
  rig.read(4, 2 * 128, 32, 3000 * T);     // evicts line 0: one 96 B run written back
  EXPECT_EQ(rig.mem->bytes_written, 96u);
  EXPECT_EQ(rig.stat("bytes_dirtied"), 96);
  rig.write(5, 0, 32, 4000 * T);          // line 0 again, clean after its writeback: 32 B more
  EXPECT_EQ(rig.stat("bytes_dirtied"), 128);
}

TEST(L2Cache, DirtyBytesHeldFollowWritesAndWritebacksByAccount) {
  // dirty_bytes(a) = sector_B x dirty sectors of the lines whose address the composer put in
  // account a; dirty_runs = runs of consecutive dirty sectors (what evicting them would write back).
  // Conserved: writebacks + growth of dirty_runs = runs made dirty; bytes written + growth of
  // dirty_bytes = bytes_dirtied.
  Rig rig(small(1, 2, 1));
  rig.l2.set_write_accounts([](uint64_t addr) { return addr >= 2 * 128 ? 1u : 0u; }, 2);
  const auto runs = [&rig] {
    StatSink sink;
    rig.l2.report(sink, "l2");
    for (const auto& r : sink.rows())
      if (r.statistic == "dirty_runs") {
        EXPECT_EQ(r.adds_to, StatSink::key("l2", "writebacks"));
        return r.value;
      }
    return -1.0;
  };
  rig.write(1, 0, 32, 0);            // line 0, sector 0
  rig.write(2, 64, 32, 1000 * T);    // line 0, sector 2: two runs
  EXPECT_EQ(rig.l2.dirty_bytes(0), 64u);
  EXPECT_EQ(runs(), 2);
  rig.write(3, 32, 32, 2000 * T);    // sector 1 joins them: one run of 96 B
  EXPECT_EQ(rig.l2.dirty_bytes(0), 96u);
  EXPECT_EQ(runs(), 1);
  rig.read(4, 1 * 128, 32, 3000 * T);
  rig.write(5, 2 * 128, 128, 4000 * T);  // account 1; evicts line 0: its 96 B written back
  EXPECT_EQ(rig.mem->bytes_written, 96u);
  EXPECT_EQ(rig.l2.dirty_bytes(0), 0u);
  EXPECT_EQ(rig.l2.dirty_bytes(1), 128u);
  EXPECT_EQ(runs(), 1);
  EXPECT_EQ(rig.stat("writebacks") + runs(), 2);  // runs made dirty: {0..2} and line 2's
  // Warming drops a dirty victim without traffic: what is held goes with it.
  rig.l2.warm({6, 3 * 128, 32, false, 0});
  rig.l2.warm({7, 4 * 128, 32, false, 0});
  EXPECT_EQ(rig.l2.dirty_bytes(1), 0u);
  EXPECT_EQ(runs(), 0);
}

TEST(L2Cache, WarmingForgetsWhatTwiceItsCapacityOfOtherLinesFollowed) {
  // warm_reach_bytes: an LRU cache's capacity. 4 sets x 4 ways (2 KiB), a block permutation (16
  // consecutive lines fill each set with 4): 16 lines warmed, then 32 others (twice the capacity,
  // 8 a set) leave none of the 16; 8 others (2 a set) leave 8 of them. Scan-resistant SRRIP keeps no
  // such bound: UINT64_MAX. (A line is probed on a fresh cache: a read that misses would evict.)
  L2Params p = small(1, 4, 4);
  p.set_index = "block_permutation";
  const auto resident = [&p](uint64_t others) {
    int n = 0;
    for (uint64_t probe = 0; probe < 16; ++probe) {
      Rig rig(p);
      for (uint64_t l = 0; l < 16 + others; ++l) rig.l2.warm({0, (l < 16 ? l : 16 + l) * 128, 128, false, 0});
      n += rig.read(1, probe * 128, 32, 1000 * T) - 1000 * T == H * T;
    }
    return n;
  };
  EXPECT_EQ(resident(0), 16);
  EXPECT_EQ(resident(8), 8);
  EXPECT_EQ(resident(32), 0);
  EXPECT_EQ(L2Cache(p).warm_reach_bytes(), 2048u);
  p.replacement = "srrip";
  EXPECT_EQ(L2Cache(p).warm_reach_bytes(), UINT64_MAX);
}

TEST(L2Cache, ReplacementIsLeastRecentlyUsed) {
  Rig rig(small(1, 2, 1));
  Tick t = 0;
  uint64_t id = 0;
  for (uint64_t line : {0, 1, 0, 2}) {  // 2 evicts 1
    t += 1000 * T;
    rig.read(++id, line * 128, 32, t);
  }
  rig.read(100, 0, 32, t += 1000 * T);  // line 0 still present
  rig.read(101, 128, 32, t += 1000 * T);  // line 1 was the victim
  EXPECT_EQ(rig.stat("read_hits"), 2);    // the second and third reads of line 0
  EXPECT_EQ(rig.stat("read_misses"), 4);  // 0, 1, 2, and 1 again
}

TEST(L2Cache, SliceBandwidthSpacesHitsByBytesOverBytesPerClock) {
  L2Params p = small();
  p.slice_bandwidth_Bpc = 32;
  Rig rig(p);
  rig.read(1, 0, 128, 0);
  const Tick t0 = 1000 * T;
  for (uint64_t i = 0; i < 10; ++i) ASSERT_TRUE(rig.l2.try_enqueue({100 + i, 0, 128, false, 0}, t0));
  const auto done = drain(rig.l2);
  // 128 B / 32 B per clock = 4 cycles per hit: the k-th hit is served at t0 + 4k cycles.
  for (uint64_t k = 0; k < 10; ++k) EXPECT_EQ(done_of(done, 100 + k), t0 + (4 * k + H) * T);
}

TEST(L2Cache, NearAndFarPartitionsGiveTwoHitLatencies) {
  L2Params p = small(2);
  p.partitions = 2;
  p.hit_latency_near_cycles = 10;
  p.hit_latency_far_cycles = 30;
  Rig rig(p);
  rig.read(1, 0, 32, 0, 0);
  const Tick a = rig.read(2, 0, 32, 1000 * T, 0) - 1000 * T;  // partition 0 requester
  const Tick b = rig.read(3, 0, 32, 2000 * T, 1) - 2000 * T;  // partition 1 requester
  EXPECT_EQ(std::min(a, b), 10 * T);
  EXPECT_EQ(std::max(a, b), 30 * T);
}

// With replicate_far_reads, a read from the partition that is not its line's home leaves a clean copy
// in the reader's partition, and the next far read is served by the copy (copy_hits), still at the
// far hit latency (30 cycles; the near reader 10): a copy saves the home slice's bandwidth, not
// time. A write drops the copy: the next far read misses it (copy_misses) and goes home, and leaves
// a new one. Only the first read of all goes to memory.
TEST(L2Cache, AFarReadLeavesACopyThatServesTheNextFarReadUntilAWriteDropsIt) {
  L2Params p = small(2);
  p.partitions = 2;
  p.hit_latency_near_cycles = 10;
  p.hit_latency_far_cycles = 30;
  p.replicate_far_reads = true;
  Rig rig(p);
  rig.read(1, 0, 32, 0, 0);
  rig.read(2, 0, 32, 1000 * T, 1);
  EXPECT_EQ(rig.stat("copies_made"), 1);
  EXPECT_EQ(rig.stat("copy_misses"), 1);
  const Tick a = rig.read(3, 0, 32, 2000 * T, 0) - 2000 * T;
  const Tick b = rig.read(4, 0, 32, 3000 * T, 1) - 3000 * T;
  EXPECT_EQ(std::min(a, b), 10 * T);
  EXPECT_EQ(std::max(a, b), 30 * T);
  EXPECT_EQ(rig.stat("copy_hits"), 1);
  rig.write(5, 0, 32, 4000 * T);
  EXPECT_EQ(rig.stat("copies_dropped"), 1);
  rig.read(6, 0, 32, 5000 * T, 0);
  rig.read(7, 0, 32, 6000 * T, 1);
  EXPECT_EQ(rig.stat("copy_hits"), 1);
  EXPECT_EQ(rig.stat("copy_misses"), 2);
  EXPECT_EQ(rig.stat("copies_made"), 2);
  EXPECT_EQ(rig.mem->reads, 1u);
}

// The copies take ways: a line read from both partitions holds one way in each. Two slices of one
// 8-way set each (16 ways); a line homed at one slice keeps its copy in the other, so a buffer of
// N lines read from both partitions puts N lines in each set, whatever the hash. N = 8 fits: the
// second pass's 2N reads all hit. N = 12 does not: each set is scanned in order with 12 lines for
// 8 ways, so under LRU every first touch of a line in the second pass misses and only the second
// reader, who finds the line just fetched at home, hits: N hits of 2N. Without copies 8 lines
// take 8 of the 16 ways and the second pass hits 2N as well.
TEST(L2Cache, LinesReadFromBothPartitionsTakeAWayInEach) {
  for (const auto& [copies, lines, hits] : {std::tuple{true, 8, 16}, {true, 12, 12}, {false, 8, 16}}) {
    L2Params p = small(2, 8, 1);
    p.partitions = 2;
    p.replicate_far_reads = copies;
    Rig rig(p);
    uint64_t id = 1;
    double before = 0;
    for (int pass = 0; pass < 2; ++pass) {
      before = rig.stat("read_hits");
      for (int l = 0; l < lines; ++l)
        for (uint32_t src = 0; src < 2; ++src, ++id) rig.read(id, uint64_t(l) * 128, 128, id * 1000 * T, src);
    }
    SCOPED_TRACE(std::string(copies ? "copies" : "no copies") + ", lines " + std::to_string(lines));
    EXPECT_EQ(rig.stat("read_hits") - before, hits);
    if (copies) EXPECT_GE(rig.stat("copies_made"), lines);
  }
}

// set_index block_permutation: every aligned block of slices x sets lines is a shuffle of all the
// sets, so a contiguous buffer of exactly the capacity (slices x sets x ways lines, aligned) puts
// `ways` lines in every set, and a second pass over it hits every line. With the hashed index the
// lines land independently (binomially), some sets get more than `ways`, and the second pass misses.
TEST(L2Cache, BlockPermutationSpreadsAContiguousBufferEvenlySoThatOneCapacityFits) {
  for (const std::string index : {"block_permutation", "hashed"}) {
    L2Params p = small(4, 4, 16);  // 4 slices x 16 sets x 4 ways = 256 lines
    p.set_index = index;
    p.queue_depth_per_slice = 1024;
    Rig rig(p);
    const uint64_t lines = 256, base = 7 * lines * 128;  // aligned to a block, not the first
    for (int pass = 0; pass < 2; ++pass)
      for (uint64_t l = 0; l < lines; ++l) rig.read(1 + pass * lines + l, base + l * 128, 128, (pass * lines + l) * 1000 * T);
    SCOPED_TRACE(index);
    if (index == "block_permutation") EXPECT_EQ(rig.stat("read_hits"), lines);
    else EXPECT_LT(rig.stat("read_hits"), lines);
  }
}

// A request's lines are placed in one pass (a block's offset hashed once); line by line gives the
// same slice and set for each, across block boundaries (a block is slices x sets lines: 64 here).
TEST(L2Cache, ARunOfLinesIsPlacedAsEachLineAlone) {
  for (const std::string index : {"block_permutation", "hashed"}) {
    const SetIndex sets(4, 16, 4, index == "block_permutation");   // 4 slices x 16 sets x 4 ways
    for (const auto& [first, last] : {std::pair<uint64_t, uint64_t>{0, 0}, {60, 70}, {63, 64}, {5, 200}, {1000001, 1000130}}) {
      std::vector<SetIndex::Ref> run;
      sets.of_run(first, last, run);
      ASSERT_EQ(run.size(), last - first + 1);
      for (uint64_t l = first; l <= last; ++l) {
        const SetIndex::Ref one = sets.of(l);
        EXPECT_EQ(std::make_pair(run[l - first].slice, sets.set_in_slice(run[l - first])),
                  std::make_pair(one.slice, sets.set_in_slice(one)))
            << index << " line " << l;
      }
    }
  }
}

TEST(L2Cache, MissWithoutAFreeMshrStallsItsSliceUntilAFillReturns) {
  L2Params p = small();
  p.mshrs_per_slice = 1;
  Rig rig(p);
  ASSERT_TRUE(rig.l2.try_enqueue({1, 0, 64, false, 0}, 0));
  ASSERT_TRUE(rig.l2.try_enqueue({2, 128, 64, false, 0}, 0));
  const auto done = drain(rig.l2);
  EXPECT_EQ(done_of(done, 1), D + (H + M) * T);
  // Request 2 looks up when the MSHR frees, at D; its own fill returns at 2D.
  EXPECT_EQ(done_of(done, 2), 2 * D + (H + M) * T);
  EXPECT_EQ(rig.stat("slice_stalls"), 1);
}

// A dirty victim takes one of its slice's writeback buffers until the memory takes the write (here
// its completion, D after it was sent); with none free the slice stalls, as it does without an MSHR.
// One set of two dirty ways, one buffer: write 3 evicts line 0 at t0 = 2000 T (its writeback back at
// t0 + D) and is done at t0 + H; write 4, behind it in the queue, must evict line 1 and waits for
// that buffer: looked up at t0 + D, done at t0 + D + H. Without the bound it is looked up when the
// slice has moved write 3's 128 B (2 cycles at 64 B a cycle): done at t0 + 2 T + H.
TEST(L2Cache, ADirtyVictimWaitsForAWritebackBufferWhenAllAreTaken) {
  for (const uint32_t buffers : {1u, 0u}) {
    L2Params p = small(1, 2, 1);
    p.writeback_buffers_per_slice = buffers;
    Rig rig(p);
    rig.write(1, 0 * 128, 128, 0);
    rig.write(2, 1 * 128, 128, 1000 * T);
    const Tick t0 = 2000 * T;
    ASSERT_TRUE(rig.l2.try_enqueue({3, 2 * 128, 128, true, 0}, t0));
    ASSERT_TRUE(rig.l2.try_enqueue({4, 3 * 128, 128, true, 0}, t0));
    const auto done = drain(rig.l2);
    EXPECT_EQ(done_of(done, 3), t0 + H * T) << buffers;
    EXPECT_EQ(done_of(done, 4), buffers ? t0 + D + H * T : t0 + 2 * T + H * T) << buffers;
    EXPECT_EQ(rig.stat("writeback_stalls"), buffers ? 1.0 : 0.0);
    EXPECT_EQ(rig.mem->writes, 2u);  // both victims written back
  }
}

TEST(L2Cache, IdleCacheHasNoEvent) {
  Rig rig(small());
  EXPECT_EQ(rig.l2.next_event(), kNever);
  rig.read(1, 0, 64, 0);
  EXPECT_EQ(rig.l2.next_event(), kNever);
}

TEST(L2Cache, FullSliceQueueRefuses) {
  L2Params p = small();
  p.queue_depth_per_slice = 2;
  Rig rig(p);
  EXPECT_TRUE(rig.l2.try_enqueue({1, 0, 32, false, 0}, 0));
  EXPECT_TRUE(rig.l2.try_enqueue({2, 128, 32, false, 0}, 0));
  EXPECT_FALSE(rig.l2.try_enqueue({3, 256, 32, false, 0}, 0));
}

TEST(L2Cache, ARefusedRequestIsJudgedAgainOnItsOwnLinesWhenRetriedOrWhenItsIdComesBackWithOtherLines) {
  // Queue depth 2 on one slice: a 3-line request never fits, a 1-line one fits once the queue
  // drains. The L2 keeps a refused request's line hashes for its retries (a pure function of its
  // address): a retry must be judged as a first try is, and an id reused for other lines on its own.
  L2Params p = small();
  p.queue_depth_per_slice = 2;
  Rig rig(p);
  ASSERT_TRUE(rig.l2.try_enqueue({1, 0, 32, false, 0}, 0));
  ASSERT_TRUE(rig.l2.try_enqueue({2, 128, 32, false, 0}, 0));
  EXPECT_FALSE(rig.l2.try_enqueue({3, 256, 32, false, 0}, 0));
  EXPECT_FALSE(rig.l2.try_enqueue({3, 256, 32, false, 0}, 0));  // retried: the queue is still full
  drain(rig.l2);
  EXPECT_FALSE(rig.l2.try_enqueue({5, 0, 3 * 128, false, 0}, 0));  // 3 lines > a queue of 2, even empty
  EXPECT_TRUE(rig.l2.try_enqueue({5, 0, 128, false, 0}, 0));       // the same id, one line: its own judgement
  EXPECT_TRUE(rig.l2.try_enqueue({3, 256, 32, false, 0}, 0));      // retried after the drain: taken
  EXPECT_FALSE(rig.l2.try_enqueue({6, 512, 32, false, 0}, 0));     // the queue holds 2 again
  EXPECT_EQ(rig.stat("refused"), 4.0);
}

TEST(L2Cache, CapacityThatIsNotWholeSetsIsAConfigError) {
  auto doc = indexsim::config::Document::load_string(R"(
l2: {impl: sectored_l2, replacement: lru, clock_MHz: 1000, capacity_MiB: 1.1, line_B: 128, sector_B: 32, ways: 16, slices: 4,
     partitions: 1, hit_latency_near_cycles: 10, hit_latency_far_cycles: 10, miss_latency_cycles: 0, replicate_far_reads: false, set_index: hashed,
     slice_bandwidth_Bpc: 64, mshrs_per_slice: 4, queue_depth_per_slice: 4}
)", "hw.yaml");
  try {
    indexsim::model::make_memory_device(doc->root().child("l2"));
    FAIL() << "accepted a capacity of partial sets";
  } catch (const indexsim::config::ConfigError& e) {
    EXPECT_EQ(e.path, "l2.capacity_MiB");
  }
}

TEST(L2Cache, WarmingLeavesWhatAReadFindsWithoutTrafficOrStatistics) {
  // Functional warming (the fast mode's unsimulated CTAs): a warmed write makes its sectors valid
  // and dirty, so a later read of them hits (H cycles); a warmed read of another line fills it the
  // same way. Warming itself sends nothing downstream and counts nothing.
  Rig rig(small());
  rig.l2.warm({0, 0, 128, true, 0});
  rig.l2.warm({0, 256, 128, false, 0});
  EXPECT_EQ(rig.mem->reads + rig.mem->writes, 0u);
  EXPECT_EQ(rig.stat("write_misses") + rig.stat("read_misses") + rig.stat("read_hits"), 0);
  EXPECT_EQ(rig.read(1, 0, 128, 0), H * T);
  EXPECT_EQ(rig.read(2, 256, 128, 1000 * T), 1000 * T + H * T);
  EXPECT_EQ(rig.stat("read_hits"), 2);
  EXPECT_EQ(rig.mem->reads, 0u);
}

TEST(L2Cache, WarmingAFarReadLeavesItsCopyAsAReadWouldAndAWarmedWriteDropsIt) {
  // The fast mode warms what the detailed mode would leave: after warmed reads of a line from both
  // partitions, the far reader's next read is a copy hit; after a warmed write it is a copy miss
  // that goes home. Warming itself makes no traffic and counts nothing.
  L2Params p = small(2);
  p.partitions = 2;
  p.replicate_far_reads = true;
  Rig rig(p);
  rig.l2.warm({0, 0, 128, false, 0});
  rig.l2.warm({0, 0, 128, false, 1});
  EXPECT_EQ(rig.mem->reads + rig.mem->writes, 0u);
  EXPECT_EQ(rig.stat("copies_made") + rig.stat("copy_hits") + rig.stat("copy_misses"), 0);
  rig.read(1, 0, 128, 0, 0);
  rig.read(2, 0, 128, 1000 * T, 1);
  EXPECT_EQ(rig.stat("copy_hits"), 1);
  EXPECT_EQ(rig.stat("copy_misses"), 0);
  rig.l2.warm({0, 0, 128, true, 0});
  EXPECT_EQ(rig.stat("copies_dropped"), 0);
  rig.read(3, 0, 128, 2000 * T, 0);
  rig.read(4, 0, 128, 3000 * T, 1);
  EXPECT_EQ(rig.stat("copy_hits"), 1);
  EXPECT_EQ(rig.stat("copy_misses"), 1);
  EXPECT_EQ(rig.mem->reads, 0u);
}

TEST(L2Cache, ReadsAreCountedByTheirTagAsBytesAskedForAndBytesHeld) {
  // Tag 2 ("kv_cache" here): a 64 B read of a cold line (0 of 64 B held), then a 128 B read of the
  // same line (64 of 128 B held: the first read's two sectors). Tag 3: one 32 B read, missed. A
  // write and an untagged read count nowhere. So kv_cache 192 B read, 64 B hit; indexer 32 B, 0.
  Rig rig(small());
  auto tagged = [&](uint64_t id, uint64_t addr, uint32_t bytes, bool write, uint8_t tag, Tick at) {
    MemRequest r{id, addr, bytes, write, 0};
    r.tag = tag;
    ASSERT_TRUE(rig.l2.try_enqueue(r, at));
    drain(rig.l2);
  };
  tagged(1, 0, 64, false, 2, 0);
  tagged(2, 0, 128, false, 2, 1000 * T);
  tagged(3, 4096, 32, false, 3, 2000 * T);
  tagged(4, 8192, 128, true, 2, 3000 * T);
  tagged(5, 0, 128, false, 0, 4000 * T);
  StatSink sink;
  sink.tag_names = {"", "weights", "kv_cache", "indexer_cache"};
  rig.l2.report(sink, "l2");
  EXPECT_EQ(sink.get("l2", "read_bytes.kv_cache"), 192);
  EXPECT_EQ(sink.get("l2", "read_hit_bytes.kv_cache"), 64);
  EXPECT_EQ(sink.get("l2", "read_bytes.indexer_cache"), 32);
  EXPECT_EQ(sink.get("l2", "read_hit_bytes.indexer_cache"), 0);
  EXPECT_EQ(sink.get("l2", "read_bytes.weights"), -1);  // no read of that tag: no row
}
