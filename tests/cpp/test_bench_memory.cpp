// SPDX-License-Identifier: Apache-2.0
// The closed-loop bench driver and the `indexsim bench memory` command.
#include <gtest/gtest.h>

#include <cstdio>

#include <nlohmann/json.hpp>

#include "models/common/params.hpp"
#include "sim/memsys/bench.hpp"
#include "sim/memsys/memory_system.hpp"
#include "tests/cpp/test_memsys_fixed.hpp"

using indexsim::sim::BenchPattern;
using indexsim::sim::BenchSpec;
using indexsim::sim::run_memory_bench;
using indexsim::test::FixedLatencyMemory;

namespace {
constexpr indexsim::model::Tick D = 250000;  // 250 ns

std::string hw(const std::string& name) { return std::string(INDEXSIM_TEST_DATA) + "/../../configs/hardware/" + name + ".yaml"; }

std::string run_cli(const std::string& args) {
  const std::string cmd = std::string(INDEXSIM_BINARY) + " bench memory " + args + " 2>/dev/null";
  FILE* f = popen(cmd.c_str(), "r");
  std::string out;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, f)) out.append(buf, n);
  EXPECT_EQ(pclose(f), 0) << cmd;
  return out;
}
}  // namespace

TEST(BenchMemory, PointerChaseOnAFixedMemoryMeasuresItsLatency) {
  FixedLatencyMemory m(D);
  BenchSpec s;
  s.pattern = BenchPattern::PointerChase;
  s.requests = 1000;
  s.requesters = 8;  // ignored: a chase has one request in flight
  s.outstanding = 8;
  s.footprint_bytes = 1 << 20;
  const auto r = run_memory_bench(m, s);
  EXPECT_DOUBLE_EQ(r.latency_mean_ns, 250.0);
  EXPECT_DOUBLE_EQ(r.latency_p99_ns, 250.0);
  EXPECT_EQ(r.sim_ps, 1000 * D);  // strictly one after another
}

TEST(BenchMemory, ClosedLoopBandwidthFollowsLittlesLaw) {
  FixedLatencyMemory m(D);
  BenchSpec s;
  s.pattern = BenchPattern::Random;
  s.requests = 6400;
  s.requesters = 16;
  s.outstanding = 4;
  s.bytes = 128;
  s.footprint_bytes = 1 << 20;
  const auto r = run_memory_bench(m, s);
  // 64 requests of 128 B in flight for 250 ns each: 8192 B / 250 ns = 32.768 GB/s.
  EXPECT_DOUBLE_EQ(r.bandwidth_GBps, 64 * 128 / 250.0);
  // Completions come 64 at a time every 250 ns; the 640th ends wave 10 and the 5760th wave 90:
  // (5760 - 640) x 128 B over 80 x 250 ns is Little's law again.
  EXPECT_DOUBLE_EQ(r.steady_bandwidth_GBps, 64 * 128 / 250.0);
  EXPECT_EQ(r.requests, 6400u);
}

TEST(BenchMemory, SameSeedSameResultsOtherSeedOtherAddresses) {
  auto run = [](uint64_t seed) {
    auto doc = indexsim::config::Document::load_file(hw("h200"));
    auto dev = indexsim::sim::make_target(doc->root(), "hbm");
    BenchSpec s;
    s.pattern = BenchPattern::Random;
    s.requests = 20000;
    s.requesters = 64;
    s.outstanding = 8;
    s.seed = seed;
    s.footprint_bytes = dev->capacity_bytes();
    const auto r = run_memory_bench(*dev, s);
    std::vector<double> v = {static_cast<double>(r.sim_ps), r.latency_mean_ns, r.latency_p99_ns};
    for (const auto& row : r.stats.rows()) v.push_back(row.value);
    return v;
  };
  EXPECT_EQ(run(11), run(11));
  EXPECT_NE(run(11), run(12));
}

// --write-fraction W makes each request of a stream or a random load a write with probability W
// (it was read only by the mix, and silently ignored by the others); a chase stays reads.
TEST(BenchMemory, EveryPatternButTheChaseWritesItsShare) {
  FixedLatencyMemory mem(D);
  const auto writes = [&](BenchPattern p, double w) {
    BenchSpec s;
    s.pattern = p;
    s.requests = 4000;
    s.requesters = 4;
    s.outstanding = 4;
    s.write_fraction = w;
    s.footprint_bytes = 1 << 20;
    return run_memory_bench(mem, s).writes;
  };
  EXPECT_EQ(writes(BenchPattern::Stream, 1.0), 4000u);
  EXPECT_EQ(writes(BenchPattern::Stream, 0.0), 0u);
  const double half = double(writes(BenchPattern::Random, 0.5)) / 4000;
  EXPECT_NEAR(half, 0.5, 0.05);  // 4000 draws: the standard deviation of the share is 0.008
  EXPECT_EQ(writes(BenchPattern::PointerChase, 0.0), 0u);
}

TEST(BenchMemory, H200StreamBeatsRandomAndTheRowHitRateSaysWhy) {
  auto doc = indexsim::config::Document::load_file(hw("h200"));
  auto root = doc->root();
  auto bench = [&](BenchPattern p) {
    auto dev = indexsim::sim::make_target(root, "hbm");
    BenchSpec s;
    s.pattern = p;
    s.requests = 100000;
    s.requesters = 132;
    s.outstanding = 64;
    s.footprint_bytes = dev->capacity_bytes();
    auto r = run_memory_bench(*dev, s);
    return std::make_pair(r.bandwidth_GBps / dev->peak_bandwidth_GBps(), r.stats.get("hbm", "row_hit_rate"));
  };
  const auto stream = bench(BenchPattern::Stream), random = bench(BenchPattern::Random);
  EXPECT_GE(stream.first, 0.85);  // reference §1.4: streaming reads reach 88 to 93 % of peak
  EXPECT_LT(random.first, 0.7 * stream.first);
  EXPECT_GT(stream.second, 0.8);
  EXPECT_LT(random.second, 0.2);
}

TEST(BenchMemory, CliJsonReportsEveryFigure) {
  const auto out = run_cli("--hardware " + hw("h200") + " --pattern stream --target sram --requests 20000 --requesters 8 --outstanding 8 --json");
  const auto j = nlohmann::json::parse(out.substr(out.find('{')));
  for (const char* k : {"bandwidth_GBps", "peak_bandwidth_GBps", "fraction_of_peak", "steady_bandwidth_GBps",
                        "steady_fraction_of_peak", "latency_ns", "row_hit_rate",
                        "sim_time_ns", "wall_s", "requests_per_wall_s", "config_hash", "stats"})
    EXPECT_TRUE(j.contains(k)) << k;
  EXPECT_EQ(j["requests"], 20000);
  EXPECT_GT(j["bandwidth_GBps"].get<double>(), 0);
  EXPECT_GT(j["latency_ns"]["p99"].get<double>(), 0);
}

TEST(BenchMemory, CliTableNamesTheFigures) {
  const auto out = run_cli("--hardware " + hw("h200") + " --pattern pointer-chase --target hbf --requests 200");
  for (const char* k : {"bandwidth", "latency mean", "latency p50", "latency p99", "row-hit rate", "simulated time",
                        "wall time", "requests / wall second"})
    EXPECT_NE(out.find(k), std::string::npos) << k;
}

TEST(BenchMemory, CliRejectsAnUnknownPatternAndAMisspeltKey) {
  const std::string cmd = std::string(INDEXSIM_BINARY) + " bench memory --hardware " + hw("h200");
  EXPECT_NE(std::system((cmd + " --pattern zigzag >/dev/null 2>&1").c_str()), 0);
  EXPECT_NE(std::system((cmd + " --pattern stream --set l2.wayz=4 >/dev/null 2>&1").c_str()), 0);
}
