// SPDX-License-Identifier: Apache-2.0
// The DRAM timing core alone, one JEDEC rule per test, each against its closed formula in clocks
// of the H200 preset (HBM3E, tCK = 0.64 ns). Refresh is off unless the test is about refresh, so
// that the formulas stay exact; the timing checker is on everywhere.
#include <gtest/gtest.h>

#include <functional>
#include <random>

#include "models/dram/closed_loop.hpp"
#include "test_dram_util.hpp"

using indexsim::model::MemCompletion;
using indexsim::model::MemRequest;
using indexsim::model::StatSink;
using indexsim::model::Tick;
using indexsim::model::dram::Cmd;
using indexsim::model::dram::CommandRecord;
using indexsim::model::dram::DramAddress;
using indexsim::model::dram::DramDevice;
using indexsim::model::dram::TimingChecker;
using indexsim::test::drain;
using indexsim::test::load_hbm;
using indexsim::test::rd;
using indexsim::test::commands;
using indexsim::test::expect_no_violations;
using indexsim::test::find_addr;

namespace {

const std::vector<std::string> kQuiet = {"refresh=none", "check_timing=true"};

Tick latency_of(DramDevice& d, const MemRequest& r, Tick at) {
  EXPECT_TRUE(d.try_enqueue(r, at));
  for (const MemCompletion& c : drain(d))
    if (c.id == r.id) return c.done - at;
  ADD_FAILURE() << "request " << r.id << " never completed";
  return 0;
}


}  // namespace

TEST(DramTiming, RowMissOnClosedBankTakesTrcdPlusTclPlusBurst) {
  auto d = load_hbm("h200", kQuiet);
  const auto& T = d->params().t;
  const Tick P = d->params().clock_period_ps;
  // ACT at 0, RD at tRCD, data from tRCD + tCL for one burst.
  EXPECT_EQ(latency_of(*d, rd(1, 0), 0), (T.tRCDRD + T.tCL + T.burst) * P);
  EXPECT_EQ(d->idle_read_latency_ps(), (T.tRCDRD + T.tCL + T.burst) * P);
  expect_no_violations(*d);
}

TEST(DramTiming, RowHitReadTakesTclPlusBurst) {
  auto d = load_hbm("h200", kQuiet);
  const auto& T = d->params().t;
  const Tick P = d->params().clock_period_ps;
  latency_of(*d, rd(1, 0), 0);                       // opens the row
  const Tick later = 1000 * P;                       // every constraint long satisfied
  EXPECT_EQ(latency_of(*d, rd(2, 32), later), (T.tCL + T.burst) * P);
  // A 64 B sector is two bursts of one row: the second follows tCCD_L later (same bank group).
  EXPECT_EQ(latency_of(*d, rd(3, 64, 64), 2000 * P), (T.tCL + T.tCCD_L + T.burst) * P);
  expect_no_violations(*d);
}

TEST(DramTiming, RowConflictAddsTrpAndTrcd) {
  auto d = load_hbm("h200", kQuiet);
  const auto& T = d->params().t;
  const Tick P = d->params().clock_period_ps;
  const DramAddress a0 = d->address_map().decode(0);
  const uint64_t other = find_addr(*d, [&](const DramAddress& a) {
    return a.pc == a0.pc && a.bank == a0.bank && a.row != a0.row;
  });
  latency_of(*d, rd(1, 0), 0);
  // PRE, tRP, ACT, tRCD, RD, tCL, burst.
  EXPECT_EQ(latency_of(*d, rd(2, other), 1000 * P), (T.tRP + T.tRCDRD + T.tCL + T.burst) * P);
  EXPECT_EQ(d->totals().row_conflicts, 1u);
  expect_no_violations(*d);
}

TEST(DramTiming, ActivatesAreBoundByTrrdAndTfaw) {
  auto d = load_hbm("h200", kQuiet);
  const auto& T = d->params().t;
  const Tick P = d->params().clock_period_ps;
  const uint32_t pc = d->address_map().decode(0).pc;
  // Eight closed banks, each in its own bank group (4 groups x 2 SIDs): only tRRD_S and tFAW bind.
  std::vector<uint64_t> addrs;
  for (uint32_t g = 0; g < d->params().groups_per_pc(); ++g)
    addrs.push_back(find_addr(*d, [&](const DramAddress& a) { return a.pc == pc && a.group == g; }));
  ASSERT_EQ(addrs.size(), 8u);
  for (size_t i = 0; i < addrs.size(); ++i) ASSERT_TRUE(d->try_enqueue(rd(i, addrs[i]), 0));
  drain(*d);
  const auto acts = commands(*d, pc, Cmd::kAct);
  ASSERT_EQ(acts.size(), 8u);
  // ACT_k = max(ACT_{k-1} + tRRD_S, ACT_{k-4} + tFAW), ACT_0 = 0.
  std::vector<uint64_t> expect(8, 0);
  for (size_t k = 1; k < 8; ++k) {
    expect[k] = expect[k - 1] + T.tRRD_S;
    if (k >= 4) expect[k] = std::max(expect[k], expect[k - 4] + T.tFAW);
  }
  for (size_t k = 0; k < 8; ++k) EXPECT_EQ(acts[k].at, expect[k]) << "ACT " << k;
  EXPECT_GT(T.tFAW, 4 * T.tRRD_S);   // else the test would not see tFAW bind
  EXPECT_EQ(acts[4].at - acts[0].at, T.tFAW);

  // Two banks of one bank group: tRRD_L apart.
  auto e = load_hbm("h200", kQuiet);
  const uint64_t b0 = 0;
  const DramAddress a0 = e->address_map().decode(0);
  const uint64_t b1 = find_addr(*e, [&](const DramAddress& a) {
    return a.pc == a0.pc && a.group == a0.group && a.bank != a0.bank;
  });
  ASSERT_TRUE(e->try_enqueue(rd(1, b0), 0));
  ASSERT_TRUE(e->try_enqueue(rd(2, b1), 0));
  drain(*e);
  const auto acts2 = commands(*e, a0.pc, Cmd::kAct);
  ASSERT_EQ(acts2.size(), 2u);
  EXPECT_EQ(acts2[1].at - acts2[0].at, T.tRRD_L);
  EXPECT_GT(T.tRRD_L, T.tRRD_S);
  (void)P;
  expect_no_violations(*d);
  expect_no_violations(*e);
}

TEST(DramTiming, AllBankRefreshBlocksThePseudoChannelForTrfcEveryTrefi) {
  auto d = load_hbm("h200", {"refresh=all_bank_staggered", "check_timing=true"});
  const auto& T = d->params().t;
  const Tick P = d->params().clock_period_ps;
  const uint32_t pc = d->address_map().decode(0).pc;
  ASSERT_EQ(pc, 0u);   // pseudo-channel 0 refreshes at k x tREFI (the others are staggered)
  // A read that arrives as the first refresh falls due waits tRFC, then ACT, RD and the burst.
  EXPECT_EQ(latency_of(*d, rd(1, 0), T.tREFI * P), (T.tRFC + T.tRCDRD + T.tCL + T.burst) * P);

  // Under steady traffic, REF comes once per tREFI (k x tREFI plus at most the PREA wait), and
  // nothing touches the pseudo-channel while it refreshes.
  auto e = load_hbm("h200", {"refresh=all_bank_staggered", "check_timing=true"});
  const uint64_t n_refi = 6;
  uint64_t id = 0;
  for (Tick t = 0; t < n_refi * T.tREFI * P + T.tREFI * P / 2; t += 50 * P) {
    std::vector<MemCompletion> out;
    for (Tick nx; (nx = e->next_event()) <= t;) e->advance(nx, out);
    e->advance(t, out);
    ASSERT_TRUE(e->try_enqueue(rd(id, (id * 32) % 1024), t));   // one row of pseudo-channel 0
    ++id;
  }
  drain(*e);
  const auto refs = commands(*e, 0, Cmd::kRef);
  ASSERT_EQ(refs.size(), n_refi);
  for (size_t k = 0; k < refs.size(); ++k) {
    EXPECT_GE(refs[k].at, (k + 1) * T.tREFI);
    EXPECT_LE(refs[k].at, (k + 1) * T.tREFI + T.tRAS + T.tRP);
  }
  for (const auto& c : e->checker()->log())
    for (const auto& r : refs) {
      if (c.pc == 0 && c.cmd != Cmd::kRef) {
        EXPECT_FALSE(c.at > r.at && c.at < r.at + T.tRFC) << cmd_name(c.cmd);
      }
    }
  expect_no_violations(*d);
  expect_no_violations(*e);
}

TEST(DramTiming, PerBankRefreshBlocksOnlyThatBankForTrfcsb) {
  auto d = load_hbm("h200", {"refresh=per_bank", "check_timing=true"});
  const auto& T = d->params().t;
  const Tick P = d->params().clock_period_ps;
  // REFsb goes round robin from bank 0 at tREFIsb: the first read is to bank 0 of pseudo-channel 0.
  const uint64_t first = find_addr(*d, [&](const DramAddress& a) { return a.pc == 0 && a.bank == 0; });
  const uint64_t other = find_addr(*d, [&](const DramAddress& a) { return a.pc == 0 && a.bank == 5; });
  const Tick due = T.tREFIsb * P;
  ASSERT_TRUE(d->try_enqueue(rd(1, first), due));
  ASSERT_TRUE(d->try_enqueue(rd(2, other), due));
  Tick t1 = 0, t2 = 0;
  for (const auto& c : drain(*d)) (c.id == 1 ? t1 : t2) = c.done - due;
  EXPECT_EQ(t1, (T.tRFCsb + T.tRCDRD + T.tCL + T.burst) * P);   // bank 0 refreshes first
  // Bank 5 is not held up: its ACT only waits one clock for the row bus the REFsb used.
  EXPECT_EQ(t2, (1 + T.tRCDRD + T.tCL + T.burst) * P);
  const auto refs = commands(*d, 0, Cmd::kRefSb);
  ASSERT_FALSE(refs.empty());
  EXPECT_EQ(refs[0].at * P, due);
  EXPECT_EQ(refs[0].bank, 0u);
  expect_no_violations(*d);
}

TEST(DramTiming, WriteToReadTurnaroundHonoursTwtr) {
  auto d = load_hbm("h200", kQuiet);
  const auto& T = d->params().t;
  const Tick P = d->params().clock_period_ps;
  const DramAddress a0 = d->address_map().decode(0);
  const uint64_t other_group = find_addr(*d, [&](const DramAddress& a) {
    return a.pc == a0.pc && a.group != a0.group;
  });
  latency_of(*d, rd(1, other_group), 0);   // leaves that row open
  // Write to bank 0; the moment its WR issues, ask for reads of the same bank group and another.
  MemRequest w = rd(2, 0);
  w.write = true;
  ASSERT_TRUE(d->try_enqueue(w, 1000 * P));
  std::vector<MemCompletion> out;
  Tick now = 0;
  while (commands(*d, a0.pc, Cmd::kWr).empty()) d->advance(now = d->next_command_ps(), out);
  const uint64_t wr_at = commands(*d, a0.pc, Cmd::kWr).front().at;
  ASSERT_EQ(now, wr_at * P);
  ASSERT_TRUE(d->try_enqueue(rd(3, other_group + 32), now));   // other bank group: tWTR_S
  drain(*d);
  const auto rds = commands(*d, a0.pc, Cmd::kRd);
  ASSERT_EQ(rds.size(), 2u);
  EXPECT_EQ(rds[1].at, wr_at + T.tCWL + T.burst + T.tWTR_S);

  ASSERT_TRUE(d->try_enqueue(w, 2000 * P));
  while (commands(*d, a0.pc, Cmd::kWr).size() < 2) d->advance(now = d->next_command_ps(), out);
  const uint64_t wr2 = commands(*d, a0.pc, Cmd::kWr).back().at;
  ASSERT_TRUE(d->try_enqueue(rd(4, 32), now));                 // same bank group: tWTR_L
  drain(*d);
  EXPECT_EQ(commands(*d, a0.pc, Cmd::kRd).back().at, wr2 + T.tCWL + T.burst + T.tWTR_L);
  EXPECT_GT(T.tWTR_L, T.tWTR_S);
  expect_no_violations(*d);
}

TEST(DramTiming, FrFcfsServesAYoungerRowHitBeforeAnOlderMiss) {
  auto d = load_hbm("h200", kQuiet);
  const auto& T = d->params().t;
  const Tick P = d->params().clock_period_ps;
  const DramAddress a0 = d->address_map().decode(0);
  const uint64_t conflict = find_addr(*d, [&](const DramAddress& a) {
    return a.pc == a0.pc && a.bank == a0.bank && a.row != a0.row;
  });
  latency_of(*d, rd(1, 0), 0);
  const Tick t = 1000 * P;
  ASSERT_TRUE(d->try_enqueue(rd(2, conflict), t));   // older, needs PRE + ACT
  ASSERT_TRUE(d->try_enqueue(rd(3, 32), t));         // younger, hits the open row
  std::vector<MemCompletion> done = drain(*d);
  ASSERT_EQ(done.size(), 2u);
  EXPECT_EQ(done[0].id, 3u);
  EXPECT_EQ(done[0].done - t, (T.tCL + T.burst) * P);
  // The miss precharges once the hit's RD allows (tRTP), then tRP, ACT, tRCD, RD.
  EXPECT_EQ(done[1].done - t, (T.tRTP + T.tRP + T.tRCDRD + T.tCL + T.burst) * P);
  expect_no_violations(*d);
}

TEST(DramTiming, ARefusedRequestIsTakenAtTheCommandThatFreesItsSlot) {
  // next_event() looks ahead to the earliest completion; a sender holding a refused request asks
  // next_retry(), and is taken at the first RD (the first queue entry leaves when its only burst
  // issues), not at some later completion.
  auto d = load_hbm("h200", kQuiet);
  const Tick P = d->params().clock_period_ps;
  const uint32_t pc = d->address_map().decode(0).pc;
  std::vector<uint64_t> addrs;
  for (uint64_t a = 0; addrs.size() <= d->params().read_queue_entries; a += 32)
    if (d->address_map().decode(a).pc == pc) addrs.push_back(a);
  for (size_t i = 0; i + 1 < addrs.size(); ++i) ASSERT_TRUE(d->try_enqueue(rd(i, addrs[i]), 0));
  const MemRequest extra = rd(addrs.size(), addrs.back());
  ASSERT_FALSE(d->try_enqueue(extra, 0));
  EXPECT_LE(d->next_retry(), d->next_event());
  std::vector<MemCompletion> out;
  Tick now = 0;
  do {
    now = d->next_retry();
    ASSERT_NE(now, indexsim::model::kNever);
    d->advance(now, out);
  } while (!d->try_enqueue(extra, now));
  const auto rds = commands(*d, pc, Cmd::kRd);
  ASSERT_FALSE(rds.empty());
  EXPECT_EQ(now, rds.front().at * P);
  drain(*d);
  expect_no_violations(*d);
}

TEST(DramTiming, RandomTrafficNeverBreaksAConstraint) {
  for (const char* refresh : {"refresh=per_bank", "refresh=all_bank_staggered"}) {
    auto d = load_hbm("h100", {refresh, "check_timing=true", "write_high_watermark=8",
                               "write_low_watermark=2"});
    // A 64 MiB footprint: about a dozen rows per bank, so rows hit, miss and conflict.
    std::mt19937_64 rng(7);
    std::vector<MemCompletion> out;
    Tick now = 0;
    for (uint64_t i = 0; i < 40000; ++i) {
      MemRequest r = rd(i, rng() % (64u << 20) / 32 * 32, 32u << (rng() % 3));
      r.addr = r.addr / r.bytes * r.bytes;
      r.write = rng() % 3 == 0;
      now += rng() % 2000;
      for (Tick nx; (nx = d->next_event()) <= now;) d->advance(nx, out);
      while (!d->try_enqueue(r, now)) d->advance(now = d->next_retry(), out);
    }
    drain(*d);
    expect_no_violations(*d);
    EXPECT_GT(d->checker()->commands_checked(), 80000u);
    const auto s = d->totals();
    EXPECT_GT(s.row_hits, 0u);
    EXPECT_GT(s.row_conflicts, 0u);
    EXPECT_GT(s.refreshes, 0u);
  }
}

TEST(DramTiming, CheckerRejectsACommandThatBreaksARule) {
  auto d = load_hbm("h200", kQuiet);
  const auto& T = d->params().t;
  TimingChecker c(d->params(), false);
  c.on_command({10, 0, Cmd::kAct, 0, 7});
  c.on_command({10 + T.tRCDRD - 1, 0, Cmd::kRd, 0, 7});   // one clock early
  ASSERT_EQ(c.violations().size(), 1u);
  EXPECT_NE(c.violations()[0].find("tRCD"), std::string::npos);
  c.on_command({11, 0, Cmd::kAct, 4, 1});               // another group, tRRD_S = 2 clocks
  EXPECT_NE(c.violations().back().find("tRRD_S"), std::string::npos);
  c.on_command({200, 0, Cmd::kRd, 0, 8});               // wrong row
  EXPECT_NE(c.violations().back().find("not open"), std::string::npos);
}

TEST(DramTiming, SameSeedGivesIdenticalStatistics) {
  auto run = [](uint64_t seed) {
    auto d = load_hbm("h200");
    indexsim::model::dram::ClosedLoopSpec s;
    s.pattern = indexsim::model::dram::Pattern::kRandom;
    s.requests = 20000;
    s.outstanding = 512;
    s.seed = seed;
    run_closed_loop(*d, s);
    StatSink sink;
    d->report(sink, "hbm");
    std::vector<double> v;
    for (const auto& r : sink.rows()) v.push_back(r.value);
    return v;
  };
  EXPECT_EQ(run(42), run(42));
  EXPECT_NE(run(42), run(43));
}

TEST(DramTiming, ARequestSpanningTwoChannelsCompletesWithItsLastByte) {
  auto d = load_hbm("h200", kQuiet);
  const auto& T = d->params().t;
  const Tick P = d->params().clock_period_ps;
  const uint32_t block = d->address_map().interleave_bytes();   // 256 B: 8 bursts per channel
  ASSERT_NE(d->address_map().decode(0).pc, d->address_map().decode(block).pc);
  // Both halves run in parallel on closed banks: ACT, tRCD, then 8 RDs of one bank group tCCD_L
  // apart; the last burst ends tCL + burst after the last RD.
  const uint64_t n = block / d->params().burst_bytes();
  EXPECT_EQ(latency_of(*d, rd(1, 0, 2 * block), 0), (T.tRCDRD + (n - 1) * T.tCCD_L + T.tCL + T.burst) * P);
  EXPECT_EQ(d->totals().read_bursts, 2 * n);
  expect_no_violations(*d);
}

TEST(DramTiming, WritesWaitBelowTheHighWatermarkAndDrainDownToTheLowOne) {
  auto d = load_hbm("h200", kQuiet);
  const uint32_t hi = d->params().write_high_watermark, lo = d->params().write_low_watermark;
  // One open row of pseudo-channel 0 takes all traffic, so only the drain policy orders it.
  auto one_pc = [&](uint64_t i) { return (i * 32) % 256; };
  auto run = [&](uint32_t writes) {
    auto e = load_hbm("h200", kQuiet);
    latency_of(*e, rd(0, 0), 0);                         // opens the row
    const Tick t = 1000 * e->params().clock_period_ps;
    // Reads first: with reads waiting, writes are held until the high watermark.
    for (uint32_t i = 0; i < 8; ++i) EXPECT_TRUE(e->try_enqueue(rd(1000 + i, one_pc(i)), t));
    for (uint32_t i = 0; i < writes; ++i) {
      MemRequest w = rd(100 + i, one_pc(i));
      w.write = true;
      EXPECT_TRUE(e->try_enqueue(w, t));
    }
    drain(*e);
    uint32_t wr_before_rd = 0;
    for (const auto& c : e->checker()->log()) {
      if (c.at * e->params().clock_period_ps < t) continue;
      if (c.cmd == Cmd::kRd) break;
      if (c.cmd == Cmd::kWr) ++wr_before_rd;
    }
    expect_no_violations(*e);
    return wr_before_rd;
  };
  EXPECT_EQ(run(hi - 1), 0u);        // below the high watermark: reads first
  EXPECT_EQ(run(hi), hi - lo);       // at it: drain from hi down to lo, then reads
  (void)d;
}
