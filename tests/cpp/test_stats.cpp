// SPDX-License-Identifier: Apache-2.0
// Component statistics: counters add up, ratios follow their counters, and figures over a unit's
// own window say when they cover only the simulated kernels.
#include <gtest/gtest.h>

#include "models/common/stats.hpp"
#include "sim/engine/counter_windows.hpp"

using indexsim::model::StatSink;

// hit_rate = hits / (hits + misses): 30 / (30 + 70) = 0.3; after 20 more hits and 30 more misses
// of unsimulated work, (30 + 20) / (100 + 50) = 1/3.
TEST(Stats, RatiosFollowTheirCountersWhenUnsimulatedWorkIsAdded) {
  StatSink s;
  s.add("l2", "hits", 30, "count");
  s.add("l2", "misses", 70, "count");
  s.ratio("l2", "hit_rate", {"hits"}, {"hits", "misses"});
  s.add("l2", "bandwidth_GBps", 12.5, "GB/s", "bytes / window");
  s.add("l2", "peak_bandwidth_GBps", 100, "GB/s", "slices x width");
  EXPECT_DOUBLE_EQ(s.get("l2", "hit_rate"), 0.3);
  s.add_counters({{StatSink::key("l2", "hits"), "count", 20}, {StatSink::key("l2", "misses"), "count", 30},
                  {StatSink::key("l2", "read_bytes.kv_cache"), "bytes", 4096}});
  EXPECT_DOUBLE_EQ(s.get("l2", "hits"), 50);
  EXPECT_DOUBLE_EQ(s.get("l2", "hit_rate"), 50.0 / 150.0);
  EXPECT_DOUBLE_EQ(s.get("l2", "read_bytes.kv_cache"), 4096);  // a counter only unsimulated work made
  EXPECT_DOUBLE_EQ(s.get("l2", "bandwidth_GBps"), 12.5);         // a window figure stays, labelled
  for (const auto& r : s.rows()) {
    const bool labelled = r.description.find("simulated kernels only") != std::string::npos;
    EXPECT_EQ(labelled, r.statistic == "bandwidth_GBps") << r.statistic;
  }
  EXPECT_THROW(s.ratio("l2", "x", {"bandwidth_GBps"}, {"hits"}), std::logic_error);  // not a counter
}

// A window's growth is scaled by all CTAs / simulated CTAs: 100 bytes read while 1 of 4 CTAs ran
// stand for 400, of which 300 were not simulated; a memo of that window adds its 400 again.
TEST(Stats, CounterWindowsScaleSampledWindowsAndAddReusedOnes) {
  double bytes = 0;
  indexsim::sim::CounterWindows w([&bytes](StatSink& s) { s.add("hbm", "bytes_read", bytes, "bytes"); });
  w.start();
  bytes = 100;
  const auto grown = w.close(4, 1);
  ASSERT_EQ(grown.size(), 1u);
  EXPECT_DOUBLE_EQ(grown[0].value, 400);
  w.add(grown);
  bytes = 150;  // a window that simulated everything it ran adds nothing unsimulated
  w.close(2, 2);
  const auto extra = w.unsimulated();
  ASSERT_EQ(extra.size(), 1u);
  EXPECT_EQ(extra[0].key, StatSink::key("hbm", "bytes_read"));
  EXPECT_DOUBLE_EQ(extra[0].value, 300 + 400);
}

// A pending level (a cache's dirty bytes for a region) adds its growth to the region's counter in
// every window, the simulated share included; scaled and kept with a memo like a counter's growth.
// Window 1 (1 of 4 CTAs): 10 B written back, 30 B more held dirty: it stands for 4 x 40 = 160 B,
// 40 of them from the simulated part (its 10 B written are the counter's own; its 30 B held count
// now). A memo of it adds 160. Window 2 (all simulated): 10 B held are written back: no new write.
// The counter's whole: 20 B its own + 30 (simulated, held) - 10 + 120 (sampled away) + 160 (memo).
TEST(Stats, APendingLevelCountsTowardsItsCounterAsItGrows) {
  double written = 0, held = 0;
  indexsim::sim::CounterWindows w([&](StatSink& s) {
    s.add("hbm", "bytes_written", written, "bytes");
    s.pending("l2", "dirty_bytes.hbm", held, "bytes", "hbm", "bytes_written", "");
  });
  w.start();
  written = 10, held = 30;
  const auto grown = w.close(4, 1);
  double memo = 0;
  for (const auto& g : grown) {
    EXPECT_EQ(g.key, StatSink::key("hbm", "bytes_written"));
    memo += g.value;
  }
  EXPECT_DOUBLE_EQ(memo, 160);
  w.add(grown);
  written = 20, held = 20;
  w.close(2, 2);
  StatSink s;
  s.add("hbm", "bytes_written", written, "bytes", "bytes of write requests accepted");
  s.add("hbm", "bandwidth_GBps", 1, "GB/s");
  s.pending("l2", "dirty_bytes.hbm", held, "bytes", "hbm", "bytes_written", "");
  s.add_counters(w.unsimulated());
  EXPECT_DOUBLE_EQ(s.get("hbm", "bytes_written"), 20 + 30 - 10 + 120 + 160);
  EXPECT_DOUBLE_EQ(s.get("l2", "dirty_bytes.hbm"), 20);  // the level itself is left as it is

  // With everything simulated, the counter still counts what is held, and no window figure is
  // marked partial: only work not simulated does that.
  indexsim::sim::CounterWindows all([&](StatSink& k) {
    k.add("hbm", "bytes_written", written, "bytes");
    k.pending("l2", "dirty_bytes.hbm", held, "bytes", "hbm", "bytes_written", "");
  });
  written = 0, held = 0;
  all.start();
  written = 5, held = 7;
  all.close(3, 3);
  StatSink t;
  t.add("hbm", "bytes_written", written, "bytes");
  t.add("hbm", "bandwidth_GBps", 1, "GB/s", "over the busy window");
  t.pending("l2", "dirty_bytes.hbm", held, "bytes", "hbm", "bytes_written", "");
  t.add_counters(all.unsimulated());
  EXPECT_DOUBLE_EQ(t.get("hbm", "bytes_written"), 12);
  for (const auto& r : t.rows()) {
    if (r.statistic == "bandwidth_GBps") EXPECT_EQ(r.description, "over the busy window");
    if (r.statistic == "bytes_written") EXPECT_NE(r.description.find("dirty_bytes.hbm"), std::string::npos);
  }
}
