// SPDX-License-Identifier: Apache-2.0
// `indexsim bench memory`: a closed-loop load on one memory target of a hardware preset.
#include "sim/cli/cmd_bench.hpp"

#include <cstdio>
#include <fstream>
#include <iostream>

#include <nlohmann/json.hpp>

#include "sim/config/params.hpp"
#include "sim/core/paths.hpp"
#include "sim/memsys/bench.hpp"
#include "sim/memsys/memory_system.hpp"

namespace indexsim::cli {

namespace {
std::vector<BenchSubcommand>& table() {
  static std::vector<BenchSubcommand> t;
  return t;
}

const char* kMemoryUsage =
    "usage: indexsim bench memory --hardware NAME|FILE --pattern stream|random|mix|pointer-chase\n"
    "         [--target hbm|cxl|sram|hbf|l2|system] [--requests N] [--requesters N] [--outstanding N]\n"
    "         [--bytes B] [--footprint-MiB F] [--write-fraction W] [--seed S] [--set key=value]... [--json]\n";

int bench_memory(const Args& args) {
  ArgParser ap(args);
  if (ap.flag("--help") || ap.flag("-h")) {
    std::cout << kMemoryUsage;
    return 0;
  }
  const std::string hw = ap.value("--hardware");
  if (hw.empty()) throw std::invalid_argument(std::string("--hardware is required\n") + kMemoryUsage);
  const std::string pattern_s = ap.value("--pattern");
  if (pattern_s.empty()) throw std::invalid_argument(std::string("--pattern is required\n") + kMemoryUsage);
  sim::BenchSpec spec;
  spec.pattern = sim::parse_bench_pattern(pattern_s);
  const std::string target = ap.value("--target", "hbm");
  spec.requests = ap.u64("--requests", 1000000);
  spec.requesters = static_cast<uint32_t>(ap.u64("--requesters", 132));
  spec.outstanding = static_cast<uint32_t>(ap.u64("--outstanding", 64));
  spec.bytes = static_cast<uint32_t>(ap.u64("--bytes", 64));
  spec.seed = ap.u64("--seed", 1);
  spec.write_fraction = ap.f64("--write-fraction", spec.pattern == sim::BenchPattern::Mix ? 1.0 / 3.0 : 0.0);
  const double footprint_MiB = ap.f64("--footprint-MiB", 0);
  const auto sets = ap.values("--set");
  const bool json = ap.flag("--json");
  ap.finish();
  if (spec.write_fraction < 0 || spec.write_fraction > 1) throw std::invalid_argument("--write-fraction must be in [0, 1]");

  auto doc = config::Document::load_file(sim::find_config("hardware", hw));
  for (const auto& s : sets) doc->set(s);
  auto root = doc->root();
  const std::string hw_name = root.req<std::string>("name");
  root.note("description");
  const double sm_clock_MHz = root.child("gpu").req<double>("sm_clock_MHz", config::Rule::positive());
  root.note("gpu");  // the SM model's section: this command reads only the SM clock
  // Build the whole memory system once, so that every memory key is read and checked.
  auto system = sim::make_target(root, "system");
  doc->check_unused();
  auto dev = target == "system" ? std::move(system) : sim::make_target(root, target);

  // A region target sees device-local addresses; system and l2 see the address map, and load the
  // first cached region (the HBM in the shipped presets).
  std::string region = target;
  spec.base = 0;
  if (target == "system" || target == "l2") {
    for (const auto& r : sim::read_regions(root))
      if (r.cached) { region = r.name; break; }
    spec.base = sim::region_base(root, region);
  }
  const uint64_t cap = dev->capacity_bytes();
  spec.footprint_bytes = footprint_MiB > 0 ? static_cast<uint64_t>(footprint_MiB * 1024 * 1024) : cap;
  if (spec.footprint_bytes > cap) throw std::invalid_argument("--footprint-MiB exceeds the target's capacity");

  const auto r = sim::run_memory_bench(*dev, spec);
  const double peak = dev->peak_bandwidth_GBps();
  double row_hit = -1;
  for (const auto& row : r.stats.rows())
    if (row.statistic == "row_hit_rate" && (row.unit_name == region || row_hit < 0)) row_hit = row.value;
  const double cyc_per_ns = sm_clock_MHz / 1000.0;
  const double sim_ns = static_cast<double>(r.sim_ps) / 1000.0;

  if (json) {
    nlohmann::json j;
    j["hardware"] = hw_name;
    j["config_hash"] = config::stable_hash(doc->resolved());
    j["target"] = target;
    j["pattern"] = sim::to_string(spec.pattern);
    j["requests"] = r.requests;
    j["bytes_per_request"] = spec.bytes;
    j["requesters"] = spec.pattern == sim::BenchPattern::PointerChase ? 1 : spec.requesters;
    j["outstanding"] = spec.pattern == sim::BenchPattern::PointerChase ? 1 : spec.outstanding;
    j["seed"] = spec.seed;
    j["footprint_bytes"] = spec.footprint_bytes;
    j["write_fraction"] = spec.write_fraction;
    j["bandwidth_GBps"] = r.bandwidth_GBps;
    j["peak_bandwidth_GBps"] = peak;
    j["fraction_of_peak"] = peak > 0 ? r.bandwidth_GBps / peak : 0;
    j["latency_ns"] = {{"mean", r.latency_mean_ns}, {"p50", r.latency_p50_ns}, {"p99", r.latency_p99_ns}};
    j["latency_sm_cycles"] = {{"mean", r.latency_mean_ns * cyc_per_ns}, {"p50", r.latency_p50_ns * cyc_per_ns},
                              {"p99", r.latency_p99_ns * cyc_per_ns}};
    j["row_hit_rate"] = row_hit >= 0 ? nlohmann::json(row_hit) : nlohmann::json(nullptr);
    j["sim_time_ns"] = sim_ns;
    j["wall_s"] = r.wall_s;
    j["requests_per_wall_s"] = r.requests_per_wall_s();
    nlohmann::json stats = nlohmann::json::array();
    for (const auto& row : r.stats.rows())
      stats.push_back({{"component", row.unit_name}, {"statistic", row.statistic}, {"value", row.value}, {"unit", row.unit}});
    j["stats"] = stats;
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  std::printf("bench memory  hardware=%s target=%s pattern=%s requests=%llu bytes=%u requesters=%u outstanding=%u seed=%llu\n",
              hw_name.c_str(), target.c_str(), sim::to_string(spec.pattern),
              static_cast<unsigned long long>(r.requests), spec.bytes,
              spec.pattern == sim::BenchPattern::PointerChase ? 1u : spec.requesters,
              spec.pattern == sim::BenchPattern::PointerChase ? 1u : spec.outstanding,
              static_cast<unsigned long long>(spec.seed));
  std::printf("  %-24s %14.1f GB/s  (%.1f %% of %.1f GB/s peak)\n", "bandwidth", r.bandwidth_GBps,
              peak > 0 ? 100 * r.bandwidth_GBps / peak : 0.0, peak);
  std::printf("  %-24s %14.1f ns    (%.0f SM cycles)\n", "latency mean", r.latency_mean_ns, r.latency_mean_ns * cyc_per_ns);
  std::printf("  %-24s %14.1f ns    (%.0f SM cycles)\n", "latency p50", r.latency_p50_ns, r.latency_p50_ns * cyc_per_ns);
  std::printf("  %-24s %14.1f ns    (%.0f SM cycles)\n", "latency p99", r.latency_p99_ns, r.latency_p99_ns * cyc_per_ns);
  if (row_hit >= 0) std::printf("  %-24s %14.3f\n", "row-hit rate", row_hit);
  else std::printf("  %-24s %14s\n", "row-hit rate", "n/a");
  std::printf("  %-24s %14.1f us\n", "simulated time", sim_ns / 1000.0);
  std::printf("  %-24s %14.3f s\n", "wall time", r.wall_s);
  std::printf("  %-24s %14.0f\n", "requests / wall second", r.requests_per_wall_s());
  return 0;
}

int bench(const Args& args) {
  if (args.empty() || args[0].empty() || args[0][0] == '-') {
    std::cerr << "usage: indexsim bench <subcommand> [options]\n\nsubcommands:\n";
    for (const auto& s : table()) std::cerr << "  " << s.name << "\t" << s.summary << "\n";
    return args.empty() ? 2 : (args[0] == "--help" || args[0] == "-h" ? 0 : 2);
  }
  for (const auto& s : table())
    if (args[0] == s.name) return s.fn(Args(args.begin() + 1, args.end()));
  throw std::invalid_argument("unknown bench subcommand '" + args[0] + "'");
}

}  // namespace

bool register_bench_subcommand(const BenchSubcommand& s) {
  table().push_back(s);
  return true;
}
const std::vector<BenchSubcommand>& bench_subcommands() { return table(); }

INDEXSIM_BENCH_SUBCOMMAND("memory", "closed-loop load on a memory target: bandwidth, latency, row hits, speed", bench_memory);
INDEXSIM_COMMAND("bench", "benchmarks: `bench memory`", bench);

}  // namespace indexsim::cli
