// SPDX-License-Identifier: Apache-2.0
// The DRAM mechanisms beyond the basic JEDEC set, one per test, each against its formula in clocks:
// timings in clocks or ns, tRCDRD/tRCDWR, tCCDR, tPPD, tRREFD, command-bus occupancy, the refresh
// schemes (simultaneous, staggered, per bank) with postponement and pull-in, and the write
// accounting of the trace path. The timing checker is on everywhere.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <fstream>
#include <random>
#include <set>
#include <sstream>

#include "sim/memsys/bench.hpp"
#include "sim/memsys/memory_system.hpp"
#include "test_dram_util.hpp"

using indexsim::model::MemCompletion;
using indexsim::model::MemRequest;
using indexsim::model::StatSink;
using indexsim::model::Tick;
using indexsim::model::dram::Cmd;
using indexsim::model::dram::CommandRecord;
using indexsim::model::dram::DramAddress;
using indexsim::model::dram::DramDevice;
using indexsim::test::drain;
using indexsim::test::load_dram;
using indexsim::test::load_hbm;
using indexsim::test::rd;
using indexsim::test::commands;
using indexsim::test::expect_no_violations;
using indexsim::test::find_addr;

namespace {

// One HBM3 stack whose preset states its timings in clocks (tCK 0.625 ns, one SID).
std::unique_ptr<DramDevice> hbm3(std::vector<std::string> sets) {
  sets.push_back("check_timing=true");
  return load_dram("configs/hardware/hbm3-stack-6400.yaml", "memory.hbm", sets);
}


MemRequest wr(uint64_t id, uint64_t addr) {
  MemRequest r = rd(id, addr);
  r.write = true;
  return r;
}

std::string load_error(const std::string& file, const std::vector<std::string>& sets) {
  try {
    load_dram(file, "memory.hbm", sets);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

// Keeps pseudo-channel 0's read queue full over [from, to): row hits of one row of bank 0.
void keep_busy(DramDevice& d, Tick from, Tick to, uint64_t& id) {
  std::vector<uint64_t> row;
  const uint64_t step = d.address_map().interleave_bytes();
  for (uint64_t a = 0; row.size() < d.params().columns; a += step) {
    const DramAddress x = d.address_map().decode(a);
    if (x.pc == 0 && x.bank == 0 && x.row == 0) row.push_back(a);
  }
  std::vector<MemCompletion> out;
  for (Tick now = from; now < to;) {
    d.advance(now, out);
    while (d.try_enqueue(rd(id, row[id % row.size()]), now)) ++id;
    now = std::max(now + 1, d.next_retry());
  }
}

}  // namespace

TEST(DramMechanisms, TimingsInClocksAreExactAndNanosecondsRoundUpToTheNextClock) {
  // The HBM3 stack states tCL in clocks: 23 tCK, where 14.4 ns at 0.625 ns would be ceil(23.04) = 24.
  auto d = hbm3({});
  EXPECT_EQ(d->params().t.tCL, 23u);
  EXPECT_EQ(d->params().t.tRCDRD, 23u);
  EXPECT_EQ(d->params().t.tREFIsb, 391u);            // 244 ns / 0.625 ns = 390.4, up to 391
  ASSERT_EQ(d->params().t.burst, 2u);                 // BL8 at 4 bits per pin per clock
  EXPECT_EQ(d->idle_read_latency_ps(), (23u + 23u + 2u) * 625u);   // tRCD + tCL + burst: 30.00 ns, not 31.25
  // The H200 preset writes ns: 14.4 ns at 0.64 ns = 22.5 clocks, run as 23; the report says so.
  auto h = load_hbm("h200");
  EXPECT_EQ(h->params().t.tCL, 23u);
  StatSink sink;
  h->report(sink, "hbm");
  EXPECT_EQ(sink.get("hbm", "clocks.tCL"), 23.0);
  EXPECT_EQ(sink.get("hbm", "clocks.tRCDWR"), double(h->params().t.tRCDWR));
}

TEST(DramMechanisms, BadTimingKeysAreOneLineErrorsNamingTheKey) {
  const std::string stack = "configs/hardware/hbm3-stack-6400.yaml";
  EXPECT_NE(load_error(stack, {"tCL_ns=14.4"}).find("tCL_tCK"), std::string::npos);          // both units
  EXPECT_NE(load_error(stack, {"tRCD_tCK=23"}).find("tRCD_tCK"), std::string::npos);          // one tRCD and a split
  EXPECT_NE(load_error(stack, {"refresh=all_bank"}).find("all_bank_staggered"), std::string::npos);
  EXPECT_NE(load_error(stack, {"refresh_postpone_max=9"}).find("refresh_postpone_max"), std::string::npos);
  EXPECT_NE(load_error(stack, {"column_command_tCK=3"}).find("column_command_tCK"), std::string::npos);   // > tCCD_S
  EXPECT_NE(load_error(stack, {"read_queue_entries=0"}).find("read_queue_entries"), std::string::npos);   // no burst fits
  EXPECT_NE(load_error(stack, {"queue_scope=bank"}).find("queue_scope"), std::string::npos);
  EXPECT_NE(load_error(stack, {"command_bus_scope=bank"}).find("command_bus_scope"), std::string::npos);
  for (const auto& e : {load_error(stack, {"tCL_ns=14.4"}), load_error(stack, {"refresh=all_bank"})})
    EXPECT_EQ(e.find('\n'), std::string::npos) << e;
}

TEST(DramMechanisms, TrcdwrGovernsAWriteAfterActAndTrcdrdARead) {
  // WR - ACT = tRCDWR and RD - ACT = tRCDRD, each on a closed bank of an idle pseudo-channel.
  auto d = hbm3({"refresh=none", "tRCDWR_tCK=12"});
  const auto& T = d->params().t;
  const Tick P = d->params().clock_period_ps;
  ASSERT_EQ(T.tRCDWR, 12u);
  ASSERT_EQ(T.tRCDRD, 23u);
  ASSERT_TRUE(d->try_enqueue(wr(1, 0), 0));
  drain(*d);
  const uint64_t rd_addr = find_addr(*d, [](const DramAddress& a) { return a.pc == 0 && a.bank == 9; });
  ASSERT_TRUE(d->try_enqueue(rd(2, rd_addr), 1000 * P));
  drain(*d);
  const auto acts = commands(*d, 0, Cmd::kAct);
  ASSERT_EQ(acts.size(), 2u);
  EXPECT_EQ(commands(*d, 0, Cmd::kWr).at(0).at - acts[0].at, T.tRCDWR);
  EXPECT_EQ(commands(*d, 0, Cmd::kRd).at(0).at - acts[1].at, T.tRCDRD);
  expect_no_violations(*d);
}

TEST(DramMechanisms, TccdrSpacesReadsToAnotherStackId) {
  // The H200's stacks are 8-high (2 SIDs). Two open rows, one per SID, and reads alternating
  // between them: consecutive RDs are max(tCCD_S, tCCDR) apart; reads within one SID keep tCCD_S
  // (other bank groups).
  auto d = load_hbm("h200", {"refresh=none", "check_timing=true", "tCCDR_tCK=5"});
  const auto& T = d->params().t;
  const Tick P = d->params().clock_period_ps;
  ASSERT_EQ(d->params().sids, 2u);
  ASSERT_EQ(T.tCCDR, 5u);
  const uint32_t per_sid = d->params().bank_groups * d->params().banks_per_group;
  const uint64_t a0 = find_addr(*d, [](const DramAddress& a) { return a.pc == 0 && a.bank == 0; });
  const uint64_t a1 = find_addr(*d, [&](const DramAddress& a) { return a.pc == 0 && a.bank == per_sid; });
  ASSERT_TRUE(d->try_enqueue(rd(1, a0), 0));
  ASSERT_TRUE(d->try_enqueue(rd(2, a1), 0));
  drain(*d);
  const size_t first = commands(*d, 0, Cmd::kRd).size();
  const Tick t = 1000 * P;
  for (uint64_t i = 0; i < 8; ++i) ASSERT_TRUE(d->try_enqueue(rd(10 + i, (i % 2 ? a1 : a0) + 32 * (i / 2 + 1)), t));
  drain(*d);
  const auto rds = commands(*d, 0, Cmd::kRd);
  ASSERT_EQ(rds.size(), first + 8);
  uint32_t across = 0;
  for (size_t i = first + 1; i < rds.size(); ++i) {
    const bool other_sid = (rds[i].bank < per_sid) != (rds[i - 1].bank < per_sid);
    if (other_sid) {
      EXPECT_GE(rds[i].at - rds[i - 1].at, T.tCCDR);
      ++across;
    }
  }
  EXPECT_GT(across, 0u);
  expect_no_violations(*d);
}

TEST(DramMechanisms, TppdSpacesPrechargesAndActOccupiesTheRowBusForItsClocks) {
  // Two banks with rows open, then a request to another row of each: the two PREs are tPPD apart
  // (otherwise one clock, the row bus). With act_command_tCK = 4 the ACTs to other bank groups
  // are max(tRRD_S, 4) apart, and no row command follows an ACT sooner than 4 clocks.
  auto d = load_hbm("h200", {"refresh=none", "check_timing=true", "tPPD_tCK=6", "act_command_tCK=4"});
  const auto& T = d->params().t;
  const Tick P = d->params().clock_period_ps;
  ASSERT_LT(T.tRRD_S, 4u);
  const auto at = [&](uint32_t bank, uint32_t row) {
    return find_addr(*d, [=](const DramAddress& a) { return a.pc == 0 && a.bank == bank && a.row == row; });
  };
  const uint32_t g1 = d->params().banks_per_group;   // first bank of bank group 1
  ASSERT_TRUE(d->try_enqueue(rd(1, at(0, 0)), 0));
  ASSERT_TRUE(d->try_enqueue(rd(2, at(g1, 0)), 0));
  drain(*d);
  ASSERT_TRUE(d->try_enqueue(rd(3, at(0, 1)), 1000 * P));
  ASSERT_TRUE(d->try_enqueue(rd(4, at(g1, 1)), 1000 * P));
  drain(*d);
  const auto pres = commands(*d, 0, Cmd::kPre);
  ASSERT_EQ(pres.size(), 2u);
  EXPECT_EQ(pres[1].at - pres[0].at, T.tPPD);
  const auto acts = commands(*d, 0, Cmd::kAct);
  ASSERT_EQ(acts.size(), 4u);
  EXPECT_EQ(acts[1].at - acts[0].at, 4u);   // the first two: both banks closed at 0
  for (const auto& c : d->checker()->log()) {
    if (c.pc != 0 || c.cmd == Cmd::kRd || c.cmd == Cmd::kWr) continue;
    for (const auto& a : acts) {
      if (c.at > a.at) {
        EXPECT_GE(c.at - a.at, 4u);
      }
    }
  }
  expect_no_violations(*d);
}

TEST(DramMechanisms, PseudoChannelsSharingTheChannelsCommandBusTakeTurnsOnIt) {
  // A read to a closed bank in each pseudo-channel of channel 0, both arriving at clock 0. With a
  // command bus each, both ACTs issue at the same clock. With one bus per channel (and one for row
  // and column commands), the second ACT waits act_command_tCK for the first, and every command of
  // the channel starts no sooner than the previous one's last bus clock.
  for (const bool shared : {false, true}) {
    auto d = load_hbm("h200", {"refresh=none", "check_timing=true", "act_command_tCK=2", "separate_row_column_buses=false",
                               std::string("command_bus_scope=") + (shared ? "channel" : "pseudo_channel")});
    const auto& p = d->params();
    ASSERT_EQ(p.pseudo_channels_per_channel, 2u);
    const auto in_pc = [&](uint32_t pc) {
      return find_addr(*d, [=](const DramAddress& a) { return a.pc == pc && a.bank == 0 && a.row == 0; });
    };
    ASSERT_TRUE(d->try_enqueue(rd(1, in_pc(0)), 0));
    ASSERT_TRUE(d->try_enqueue(rd(2, in_pc(1)), 0));
    drain(*d);
    const auto a0 = commands(*d, 0, Cmd::kAct), a1 = commands(*d, 1, Cmd::kAct);
    ASSERT_EQ(a0.size(), 1u);
    ASSERT_EQ(a1.size(), 1u);
    if (!shared) {
      EXPECT_EQ(a1[0].at, a0[0].at);
    } else {
      EXPECT_EQ(a1[0].at, a0[0].at + p.t.act_bus);   // ties go to the lower pseudo-channel
      std::vector<CommandRecord> ch;
      for (const auto& c : d->checker()->log())
        if (c.pc < 2) ch.push_back(c);
      std::sort(ch.begin(), ch.end(), [](const CommandRecord& x, const CommandRecord& y) { return x.at < y.at; });
      for (size_t i = 1; i < ch.size(); ++i) {
        const bool col = ch[i - 1].cmd == Cmd::kRd || ch[i - 1].cmd == Cmd::kWr;
        const auto busy = ch[i - 1].cmd == Cmd::kAct ? p.t.act_bus : col ? p.t.col_bus : p.t.row_bus;
        EXPECT_GE(ch[i].at, ch[i - 1].at + busy) << i;
      }
    }
    expect_no_violations(*d);
  }
}

TEST(DramMechanisms, TrrefdSpacesAPerBankRefreshFromTheNextActOfAnotherBank) {
  // REFsb of bank 0 at tREFIsb, a read of bank 5 arriving then: its ACT waits tRREFD (not one
  // clock), so its latency is tRREFD + tRCDRD + tCL + burst.
  auto d = load_hbm("h200", {"refresh=per_bank", "check_timing=true", "tRREFD_tCK=8"});
  const auto& T = d->params().t;
  const Tick P = d->params().clock_period_ps;
  const uint64_t other = find_addr(*d, [](const DramAddress& a) { return a.pc == 0 && a.bank == 5; });
  const Tick due = T.tREFIsb * P;
  ASSERT_TRUE(d->try_enqueue(rd(1, other), due));
  const auto done = drain(*d);
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].done - due, (T.tRREFD + T.tRCDRD + T.tCL + T.burst) * P);
  expect_no_violations(*d);
}

TEST(DramMechanisms, SimultaneousRefreshStartsEveryPseudoChannelAtOnceStaggeredSpreadsThem) {
  // Simultaneous: REF of every pseudo-channel at tREFI. Staggered: pseudo-channel i at
  // tREFI + i x tREFI / N. (An idle device replays them when work arrives, after tREFI + a bit.)
  for (const bool simultaneous : {true, false}) {
    auto d = hbm3({simultaneous ? "refresh=all_bank_simultaneous" : "refresh=all_bank_staggered"});
    const auto& T = d->params().t;
    const Tick P = d->params().clock_period_ps;
    const uint32_t n = d->params().pseudo_channels();
    for (uint32_t pc = 0; pc < n; ++pc) {
      const uint64_t a = find_addr(*d, [=](const DramAddress& x) { return x.pc == pc; });
      ASSERT_TRUE(d->try_enqueue(rd(pc, a), 2 * T.tREFI * P));
    }
    drain(*d);
    for (uint32_t pc = 0; pc < n; ++pc) {
      const auto refs = commands(*d, pc, Cmd::kRef);
      ASSERT_FALSE(refs.empty());
      EXPECT_EQ(refs[0].at, T.tREFI + (simultaneous ? 0 : Tick(pc) * T.tREFI / n)) << pc;
    }
    expect_no_violations(*d);
  }
}

TEST(DramMechanisms, PostponedRefreshesAreMadeUpWithinTheWindow) {
  // With up to 8 postponed, a pseudo-channel kept busy past its 5th due refresh issues no REF while
  // busy, then makes the 5 up back to back (tRFC apart) as soon as its queue runs dry (replayed
  // when the next request comes, as idle time is). Kept busy for 20
  // tREFI, it refreshes for the first time at the 9th due one, and never leaves more than 9 tREFI
  // between two REFs (JEDEC's limit), refreshing once per tREFI from then on.
  const std::vector<std::string> sets = {"refresh=all_bank_simultaneous", "refresh_postpone_max=8"};
  {
    auto d = hbm3(sets);
    const auto& T = d->params().t;
    const Tick P = d->params().clock_period_ps;
    uint64_t id = 0;
    keep_busy(*d, 0, (5 * T.tREFI + 100) * P, id);
    drain(*d);
    const Tick last_rd = commands(*d, 0, Cmd::kRd).back().at;
    EXPECT_TRUE(commands(*d, 0, Cmd::kRef).empty());
    ASSERT_TRUE(d->try_enqueue(rd(id, 0), (5 * T.tREFI + 5000) * P));
    drain(*d);
    const auto refs = commands(*d, 0, Cmd::kRef);
    ASSERT_EQ(refs.size(), 5u);
    EXPECT_GT(refs[0].at, last_rd);
    for (size_t k = 1; k < refs.size(); ++k) EXPECT_EQ(refs[k].at - refs[k - 1].at, T.tRFC);
    StatSink s;
    d->report(s, "hbm");
    EXPECT_EQ(s.get("hbm", "refreshes_postponed"), 5.0);   // pseudo-channel 0's; the others were idle
    expect_no_violations(*d);
  }
  {
    auto d = hbm3(sets);
    const auto& T = d->params().t;
    const Tick P = d->params().clock_period_ps;
    uint64_t id = 0;
    keep_busy(*d, 0, 20 * T.tREFI * P, id);
    const auto refs = commands(*d, 0, Cmd::kRef);
    ASSERT_GE(refs.size(), 11u);
    EXPECT_GE(refs[0].at, 9 * T.tREFI);
    EXPECT_LT(refs[0].at, 9 * T.tREFI + T.tRAS + T.tRP + 8);
    for (size_t k = 1; k < refs.size(); ++k) {
      EXPECT_LE(refs[k].at - refs[k - 1].at, 9 * T.tREFI);
      EXPECT_NEAR(double(refs[k].at - refs[k - 1].at), double(T.tREFI), double(T.tRAS + T.tRP + 8));
    }
    expect_no_violations(*d);
  }
}

TEST(DramMechanisms, RefreshesPulledInWhileIdleCancelTheNextDueOnes) {
  // Idle from 0 with up to 4 pulled in: 4 REFs back to back from clock 0 (tRFC apart). Then kept
  // busy from tREFI/2 to 6 tREFI: the dues at 1..4 tREFI are covered, so the first REF under load
  // is the 5th due one (5 tREFI), not the 1st.
  auto d = hbm3({"refresh=all_bank_simultaneous", "refresh_pull_in_max=4"});
  const auto& T = d->params().t;
  const Tick P = d->params().clock_period_ps;
  uint64_t id = 0;
  keep_busy(*d, T.tREFI * P / 2, 6 * T.tREFI * P, id);
  drain(*d);
  const auto refs = commands(*d, 0, Cmd::kRef);
  ASSERT_GE(refs.size(), 5u);
  for (size_t k = 0; k < 4; ++k) EXPECT_EQ(refs[k].at, k * T.tRFC) << k;
  EXPECT_GE(refs[4].at, 5 * T.tREFI);
  EXPECT_LT(refs[4].at, 5 * T.tREFI + T.tRAS + T.tRP + 8);
  StatSink s;
  d->report(s, "hbm");
  EXPECT_EQ(s.get("hbm", "refreshes_pulled_in"), 4.0);   // pseudo-channel 0's; the others never woke
  expect_no_violations(*d);
}

TEST(DramMechanisms, RandomTrafficUnderEveryNewConstraintNeverBreaksOne) {
  for (const char* refresh : {"refresh=per_bank", "refresh=all_bank_simultaneous", "refresh=all_bank_staggered",
                              "command_bus_scope=channel"}) {
    auto d = load_hbm("h200", {refresh, "check_timing=true", "write_high_watermark=8", "write_low_watermark=2",
                               "tCCDR_tCK=3", "tPPD_tCK=2", "tRREFD_tCK=4", "act_command_tCK=2",
                               "refresh_postpone_max=4", "refresh_pull_in_max=2"});
    std::mt19937_64 rng(11);
    std::vector<MemCompletion> out;
    Tick now = 0;
    for (uint64_t i = 0; i < 30000; ++i) {
      MemRequest r = rd(i, rng() % (64u << 20) / 32 * 32, 32u << (rng() % 3));
      r.addr = r.addr / r.bytes * r.bytes;
      r.write = rng() % 3 == 0;
      now += rng() % 3000;
      for (Tick nx; (nx = d->next_event()) <= now;) d->advance(nx, out);
      while (!d->try_enqueue(r, now)) d->advance(now = d->next_retry(), out);
    }
    drain(*d);
    expect_no_violations(*d);
    const auto s = d->totals();
    EXPECT_GT(s.refreshes, 0u) << refresh;
    EXPECT_GT(s.refreshes_postponed + s.refreshes_pulled_in, 0u) << refresh;
  }
}

TEST(DramMechanisms, AWriteOnlyTraceReportsItsWriteBandwidthAndNoReadLatency) {
  // 20,000 posted writes: the run lasts until the last write burst is on the bus (each accepted
  // write issued, none left queued), its bandwidth is bytes / that time, and there is no read
  // latency to report (NaN, printed n/a), not 0 ns.
  auto d = hbm3({"refresh=none"});
  std::vector<indexsim::sim::TimedRequest> v;
  for (uint64_t i = 0; i < 20000; ++i) v.push_back({i * 32, 32, true, 0});
  indexsim::sim::VectorSource src(v);
  indexsim::sim::TraceReplaySpec spec;
  const auto r = indexsim::sim::run_trace_bench(*d, src, spec);
  EXPECT_EQ(r.writes, 20000u);
  EXPECT_EQ(d->totals().write_bursts, 20000u);
  EXPECT_EQ(r.end_ps, d->last_write_issued_ps());
  EXPECT_NEAR(r.bandwidth_GBps, 20000.0 * 32 / (double(r.sim_ps) / 1000.0), 1e-9);
  EXPECT_GT(r.bandwidth_GBps, 0.5 * d->peak_bandwidth_GBps());
  EXPECT_TRUE(std::isnan(r.latency_mean_ns));
  EXPECT_TRUE(std::isnan(r.latency_p99_ns));
  EXPECT_EQ(r.stats.get("", "read_latency_mean_ns", -7.0), -7.0);   // no row at all
}

TEST(DramMechanisms, WriteWatermarksMayBeFractionsOfTheWriteQueue) {
  // high = round(0.75 x 64) = 48, low = round(0.25 x 64) = 16: the counts the preset writes.
  std::ifstream f(indexsim::test::repo_path("configs/hardware/hbm3-stack-6400.yaml"));
  std::stringstream ss;
  ss << f.rdbuf();
  std::string text = ss.str();
  const auto replace = [&](const std::string& from, const std::string& to) {
    const size_t at = text.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    text.replace(at, from.size(), to);
  };
  replace("write_high_watermark: 48", "write_high_watermark_fraction: 0.75");
  replace("write_low_watermark: 16", "write_low_watermark_fraction: 0.25");
  auto doc = indexsim::config::Document::load_string(text, "fractions.yaml");
  const auto p = indexsim::model::dram::load_dram_params(doc->root().child("memory").child("hbm"));
  EXPECT_EQ(p.write_high_watermark, 48u);
  EXPECT_EQ(p.write_low_watermark, 16u);
  // A count and a fraction for the same mark: a one-line error naming both keys.
  auto both = indexsim::config::Document::load_string(text + "    write_low_watermark: 16\n", "both.yaml");
  try {
    indexsim::model::dram::load_dram_params(both->root().child("memory").child("hbm"));
    ADD_FAILURE() << "no error";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("write_low_watermark_fraction"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("not both"), std::string::npos) << e.what();
  }
}

TEST(DramMechanisms, AChannelQueueIsSharedByItsPseudoChannels) {
  // 8 read entries: per pseudo-channel, PC 0 and PC 1 take 8 each; per channel, 8 between them.
  for (const bool per_channel : {false, true}) {
    auto d = hbm3({"refresh=none", "read_queue_entries=8", "write_high_watermark=6", "write_low_watermark=2",
                   per_channel ? "queue_scope=channel" : "queue_scope=pseudo_channel"});
    std::vector<uint64_t> pc0, pc1;
    const uint64_t step = d->address_map().interleave_bytes();
    for (uint64_t a = 0; pc0.size() < 16 || pc1.size() < 16; a += step) {
      const DramAddress x = d->address_map().decode(a);
      if (x.pc == 0 && pc0.size() < 16) pc0.push_back(a);
      if (x.pc == 1 && pc1.size() < 16) pc1.push_back(a);
    }
    ASSERT_EQ(d->address_map().decode(pc1[0]).pc / d->params().pseudo_channels_per_channel, 0u);   // one channel
    uint32_t taken0 = 0, taken1 = 0;
    for (int i = 0; i < 5; ++i) taken0 += d->try_enqueue(rd(i, pc0[i]), 0);
    for (int i = 0; i < 16; ++i) taken1 += d->try_enqueue(rd(100 + i, pc1[i]), 0);   // time 0: nothing issues
    EXPECT_EQ(taken0, 5u);
    EXPECT_EQ(taken1, per_channel ? 3u : 8u);
    drain(*d);
    expect_no_violations(*d);
  }
}

TEST(DramMechanisms, ComparisonPresetsLoadEveryKeyAndKeepTheirSourcesLatencyAndMapping) {
  // Each preset states its source's clocks: an idle read is tRCDRD + tCL + burst clocks (DRAMsim3's
  // HBM2: 14 + 14 + 2 at 1 ns; the Ramulator 2 HBM3 model: 23 + 23 + 2 at 0.625 ns; both 30 ns).
  for (const char* file : {"configs/hardware/hbm2-dramsim3-8gb-x128.yaml", "configs/hardware/hbm3-8hi-ramulator2-6400.yaml"}) {
    auto doc = indexsim::config::Document::load_file(indexsim::test::repo_path(file));
    auto target = indexsim::sim::make_target(doc->root(), "hbm");   // what bench memory builds
    doc->root().req<std::string>("name");
    doc->root().req<std::string>("description");
    doc->check_unused();
    const auto& d = dynamic_cast<const DramDevice&>(*target->part("hbm"));
    const auto& T = d.params().t;
    EXPECT_EQ(d.idle_read_latency_ps(), (T.tRCDRD + T.tCL + T.burst) * d.params().clock_period_ps) << file;
    EXPECT_EQ(d.idle_read_latency_ps(), 30000u) << file;
  }
  // DRAMsim3's rorabgbachco, from the least significant end: 64 B column, channel, bank, bank
  // group, row (one rank): column = a/64 % 32, channel = a/2 KiB % 8, bank = a/16 KiB % 4,
  // bank group = a/64 KiB % 4, row = a / 256 KiB.
  auto d = load_dram("configs/hardware/hbm2-dramsim3-8gb-x128.yaml", "memory.hbm");
  std::mt19937_64 rng(3);
  for (int i = 0; i < 1000; ++i) {
    const uint64_t a = rng() % d->capacity_bytes() / 64 * 64;
    const DramAddress x = d->address_map().decode(a);
    EXPECT_EQ(x.column, a / 64 % 32);
    EXPECT_EQ(x.pc, a / 2048 % 8);
    EXPECT_EQ(x.bank % 4, a / 16384 % 4);
    EXPECT_EQ(x.group, a / 65536 % 4);
    EXPECT_EQ(x.row, a / 262144);
    EXPECT_EQ(d->address_map().encode(x), a);
  }
}

TEST(DramMechanisms, ChannelHashSpreadsWholePeriodStridesAndStaysABijection) {
  // H200: 192 pseudo-channels x 256 B = one 48 KiB interleave period. A plain map sends every
  // access of a 48 KiB stride to one pseudo-channel (the camping a 12,288-wide FP32 score matrix
  // shows); rotated by a hash of the bits above the channel digits, 192 such accesses reach most
  // pseudo-channels (a uniform throw of 192 balls in 192 bins fills 1 - 1/e of them, ~121), a
  // sequential period still visits every pseudo-channel exactly once, and decode/encode stay
  // inverse.
  for (const bool rotate : {false, true}) {
    auto d = load_hbm("h200", {rotate ? "channel_hash=rotate" : "channel_hash=none"});
    const auto& m = d->address_map();
    const uint64_t period = uint64_t(d->params().pseudo_channels()) * d->params().channel_interleave_bytes;
    ASSERT_EQ(period, 48u * 1024);
    std::set<uint32_t> strided;
    for (uint64_t i = 0; i < 192; ++i) strided.insert(m.decode(12345 * period + i * period).pc);
    if (rotate) {
      EXPECT_GT(strided.size(), 100u);
    } else {
      EXPECT_EQ(strided.size(), 1u);
    }
    for (uint64_t p = 0; p < 4; ++p) {
      std::set<uint32_t> seq;
      for (uint64_t i = 0; i < 192; ++i) seq.insert(m.decode((777 + p) * period + i * 256).pc);
      EXPECT_EQ(seq.size(), 192u);
    }
    std::mt19937_64 rng(5);
    for (int i = 0; i < 2000; ++i) {
      const uint64_t a = rng() % d->capacity_bytes() / 32 * 32;
      EXPECT_EQ(m.encode(m.decode(a)), a);
    }
  }
  // The XOR map has its own hash: the two together are refused, naming the key.
  EXPECT_NE(load_error("configs/hardware/h200.yaml", {"channel_hash=rotate", "address_mapping=row_bank_column_channel_xor"})
                .find("channel_hash"),
            std::string::npos);
  // The XOR mapping hashes its banks itself: a second hash on top is refused, naming the key.
  EXPECT_NE(load_error("configs/hardware/h200.yaml", {"bank_hash=rotate", "channel_hash=none",
                                                      "address_mapping=row_bank_column_channel_xor"})
                .find("bank_hash"),
            std::string::npos);
}
