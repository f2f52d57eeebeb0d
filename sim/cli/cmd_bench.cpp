// SPDX-License-Identifier: Apache-2.0
// `indexsim bench memory`: a closed-loop load on one memory target of a hardware preset, from a
// synthetic pattern or replayed from a DRAMsim3, Ramulator 2 or DRAMSys memory trace.
#include "sim/cli/cli.hpp"
#include "sim/cli/cmd_bench.hpp"
#include "traces/generators/collective_kernels.hpp"
#include "sim/core/config_load.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>

#include <nlohmann/json.hpp>

#include "models/dram/dram_params.hpp"
#include "models/common/params.hpp"
#include "sim/core/paths.hpp"
#include "sim/memsys/bench.hpp"
#include "sim/memsys/machine.hpp"
#include "sim/memsys/bench_sc.hpp"
#include "sim/memsys/memory_system.hpp"
#include "sim/memtrace/plain_trace.hpp"
#include "sim/memtrace/target.hpp"
#include "sim/memtrace/trace_source.hpp"

namespace indexsim::cli {

namespace {
std::vector<BenchSubcommand>& table() {
  static std::vector<BenchSubcommand> t;
  return t;
}

const char* kMemoryFooter =
    "Give --pattern or --trace (with --format). A trace's time stamps are honoured (cycles at\n"
    "--trace-clock-MHz, by default the target memory's clock_MHz) unless --back-to-back: then requesters x\n"
    "outstanding slots issue it as fast as the memory accepts. --bytes sizes each request (dramsys lines\n"
    "may give their own `(N)`). --engine systemc: a pattern's requests go through a TLM-2.0 initiator\n"
    "(approximately timed) into the target's SystemC face, run by the SystemC kernel; the figures are the\n"
    "native loop's, the wall time is the kernel's.";

int bench_memory(const Args& args) {
  Cli ap("bench memory", "A load pattern or a memory trace on one memory target: bandwidth, latency, row hits, speed.",
         kMemoryFooter);
  ap.option("--hardware NAME|FILE", "hardware preset or YAML file", true)
      .option("--pattern stream|random|mix|pointer-chase", "a synthetic load")
      .option("--trace FILE", "a memory trace instead (--format)")
      .option("--format dramsim3|ramulator-loadstore|ramulator-readwrite|dramsys", "the trace's format")
      .flag("--back-to-back", "a trace's requests as fast as the memory accepts, not at their time stamps")
      .option("--trace-clock-MHz F", "the clock of a trace's cycle stamps (default: the target's)")
      .option("--target REGION|l2|system", "the memory unit (default: the first region of the address map)")
      .option("--requests N", "a pattern's requests (default 1000000)")
      .option("--requesters N", "issuing slots' owners (default 132)")
      .option("--outstanding N", "requests in flight per requester (default 64)")
      .option("--bytes B", "bytes a request (default 64)")
      .option("--footprint-MiB F", "a pattern's address range (default: the target's capacity)")
      .option("--write-fraction W", "share of writes, 0 to 1, drawn at random (default 0; mix: 1/3; not a chase)")
      .option("--seed S", "a pattern's seed (default 1)")
      .repeated("--set K=V", "hardware.K=V: override one hardware key")
      .flag("--json", "print JSON")
      .option("--engine native|systemc", "the loop that drives the target (default native)");
  if (!ap.parse(args)) return 0;
  const std::string hw = ap.value("--hardware");
  const std::string trace_file = ap.value("--trace");
  const bool trace_mode = !trace_file.empty();
  const std::string pattern_s = ap.value("--pattern");
  if (trace_mode && !pattern_s.empty()) throw std::invalid_argument("--pattern and --trace exclude each other");
  if (!trace_mode && pattern_s.empty()) throw std::invalid_argument("--pattern or --trace is required (indexsim bench memory --help)");
  sim::BenchSpec spec;
  sim::TraceReplaySpec tspec;
  sim::memtrace::Format format = sim::memtrace::Format::DramSim3;
  double trace_clock_MHz = 0;
  if (trace_mode) {
    const std::string f = ap.value("--format");
    if (f.empty()) throw std::invalid_argument("--trace needs --format (indexsim bench memory --help)");
    format = sim::memtrace::parse_format(f);
    tspec.back_to_back = ap.has("--back-to-back");
    trace_clock_MHz = ap.f64("--trace-clock-MHz", 0);
    ap.only_for({"--requests", "--footprint-MiB", "--write-fraction", "--seed"}, "--pattern, not to --trace");
  } else {
    ap.only_for({"--format", "--back-to-back", "--trace-clock-MHz"}, "--trace, not to --pattern");
    spec.pattern = sim::parse_bench_pattern(pattern_s);
    spec.requests = ap.u64("--requests", 1000000);
    if (spec.requests == 0) throw std::invalid_argument("--requests = 0: must be >= 1");
    spec.seed = ap.u64("--seed", 1);
    spec.write_fraction = ap.f64("--write-fraction", spec.pattern == sim::BenchPattern::Mix ? 1.0 / 3.0 : 0.0);
    if (spec.write_fraction > 1)
      throw std::invalid_argument("--write-fraction = " + std::to_string(spec.write_fraction) + ": a share, at most 1");
    if (spec.write_fraction > 0 && spec.pattern == sim::BenchPattern::PointerChase)
      throw std::invalid_argument("--write-fraction = " + std::to_string(spec.write_fraction) +
                                  ": a pointer chase only reads (its next address comes from its load)");
  }
  std::string target = ap.value("--target");  // default: the first region of the address map
  spec.requesters = ap.u32("--requesters", 132);
  spec.outstanding = ap.u32("--outstanding", 64);
  spec.bytes = ap.u32("--bytes", 64);
  const double footprint_MiB = trace_mode ? 0 : ap.f64("--footprint-MiB", 0);
  const auto sets = ap.values("--set");
  const bool json = ap.has("--json");
  const std::string engine = ap.value("--engine", "native");
  if (engine != "native" && engine != "systemc")
    throw std::invalid_argument("--engine must be native or systemc, not '" + engine + "'");
  if (engine == "systemc" && trace_mode) throw std::invalid_argument("--engine systemc runs --pattern loads, not --trace");
  if (spec.write_fraction < 0 || spec.write_fraction > 1) throw std::invalid_argument("--write-fraction must be in [0, 1]");

  sim::require_prefix(sets, {"hardware"}, "bench memory");
  auto doc = sim::load_document("hardware", hw, sets);
  auto root = doc->root();
  if (target.empty()) target = sim::read_regions(root).front().name;
  const std::string hw_name = root.req<std::string>("name");
  root.note("description");
  const sim::SystemLayout layout = sim::read_layout(root);
  // The fabric's topology and the collective library's tuning: read (and checked) as a run reads
  // them, though no collective runs here.
  trace::read_fabric_limits(root);
  // Build every part once, so that every memory key is read and checked: the whole system where
  // the preset has one (a shared cache), else each region. The processors are built over it as a
  // run builds them (their ports are checked there); latencies are also given in the cycles of the
  // first one's clock. A stand-alone memory preset (e.g. hbm3-stack-6400) has none.
  double sm_clock_MHz = 0;
  std::unique_ptr<model::MemoryDevice> dev;
  if (!layout.cache.empty()) {
    auto system = sim::make_target(root, "system");
    if (!layout.processors.empty()) sm_clock_MHz = sim::build_machine(root, *system).main().clock_MHz();
    doc->check_unused();
    dev = target == "system" ? std::move(system) : sim::make_target(root, target);
  } else {
    const auto names = sim::target_names(root);
    if (std::find(names.begin(), names.end(), target) == names.end()) {
      std::string choice;
      for (const auto& r : sim::read_regions(root)) choice += (choice.empty() ? "" : ", ") + r.name;
      throw std::invalid_argument("unknown target '" + target + "': this preset has no shared cache, its targets are {" + choice + "}");
    }
    for (const auto& r : sim::read_regions(root))
      if (r.name != target) sim::make_target(root, r.name);
    dev = sim::make_target(root, target);
    doc->check_unused();
  }

  // A region target sees device-local addresses; system and l2 see the address map, and load the
  // first cached region (the HBM in the shipped presets).
  std::string region = target;
  spec.base = 0;
  if (target == "system" || target == layout.cache) {
    for (const auto& r : sim::read_regions(root))
      if (r.cached) { region = r.name; break; }
    spec.base = sim::region_base(root, region);
  }
  const uint64_t cap = dev->capacity_bytes();

  sim::BenchResult r;
  std::string timing;
  if (trace_mode) {
    const config::Node section = sim::memtrace::target_section(root, target);
    std::unique_ptr<sim::memtrace::AddressVectorCodec> codec;
    if (format == sim::memtrace::Format::RamulatorReadWrite)
      codec = std::make_unique<sim::memtrace::AddressVectorCodec>(model::dram::load_dram_params(section));
    if (trace_clock_MHz <= 0 && sim::memtrace::has_timestamps(format) && !tspec.back_to_back) {
      if (!section.has("clock_MHz"))
        throw std::invalid_argument("the target's section has no clock_MHz: give --trace-clock-MHz");
      trace_clock_MHz = section.req<double>("clock_MHz", config::Rule::positive());
    }
    tspec.requesters = spec.requesters;
    tspec.outstanding = spec.outstanding;
    tspec.base = spec.base;
    sim::memtrace::PlainTraceReader reader(trace_file, format, codec.get());
    sim::memtrace::PlainTraceSource source(reader, trace_clock_MHz, spec.bytes, cap);
    r = sim::run_trace_bench(*dev, source, tspec);
    if (r.requests == 0) throw std::invalid_argument("memory trace " + trace_file + " holds no request");
    char buf[96];
    if (tspec.back_to_back) timing = "back-to-back";
    else if (!sim::memtrace::has_timestamps(format)) timing = "in order as accepted (the format has no time stamps)";
    else std::snprintf(buf, sizeof buf, "time stamps at %.6g MHz", trace_clock_MHz), timing = buf;
  } else {
    spec.footprint_bytes = footprint_MiB > 0 ? static_cast<uint64_t>(footprint_MiB * 1024 * 1024) : cap;
    if (spec.footprint_bytes > cap) throw std::invalid_argument("--footprint-MiB exceeds the target's capacity");
    r = engine == "systemc" ? sim::run_memory_bench_systemc(*dev, spec) : sim::run_memory_bench(*dev, spec);
  }
  const double peak = dev->peak_bandwidth_GBps();
  double row_hit = -1;
  for (const auto& row : r.stats.rows())
    if (row.statistic == "row_hit_rate" && (row.unit_name == region || row_hit < 0)) row_hit = row.value;
  const double cyc_per_ns = sm_clock_MHz / 1000.0;
  const double sim_ns = static_cast<double>(r.sim_ps) / 1000.0;
  const bool chase = !trace_mode && spec.pattern == sim::BenchPattern::PointerChase;

  if (json) {
    nlohmann::json j;
    j["hardware"] = hw_name;
    j["config_hash"] = config::stable_hash(doc->resolved());
    j["target"] = target;
    if (trace_mode) {
      j["trace"] = trace_file;
      j["format"] = sim::memtrace::to_string(format);
      // back-to-back: bounded by requesters x outstanding; as-accepted: an untimed format, offered in
      // order whenever the memory takes it (the Ramulator front ends); timestamps: honoured.
      j["timing"] = tspec.back_to_back ? "back-to-back"
                    : sim::memtrace::has_timestamps(format) ? "timestamps" : "as-accepted";
      if (!tspec.back_to_back && sim::memtrace::has_timestamps(format)) j["trace_clock_MHz"] = trace_clock_MHz;
      j["reads"] = r.reads;
      j["writes"] = r.writes;
    } else {
      j["pattern"] = sim::to_string(spec.pattern);
      j["seed"] = spec.seed;
      j["footprint_bytes"] = spec.footprint_bytes;
      j["write_fraction"] = spec.write_fraction;
    }
    j["requests"] = r.requests;
    j["engine"] = engine;
    j["bytes_per_request"] = spec.bytes;
    j["requesters"] = chase ? 1 : spec.requesters;
    j["outstanding"] = chase ? 1 : spec.outstanding;
    j["bandwidth_GBps"] = r.bandwidth_GBps;
    j["peak_bandwidth_GBps"] = peak;
    j["fraction_of_peak"] = peak > 0 ? r.bandwidth_GBps / peak : 0;
    if (!trace_mode) {
      j["steady_bandwidth_GBps"] = r.steady_bandwidth_GBps;
      j["steady_fraction_of_peak"] = peak > 0 ? r.steady_bandwidth_GBps / peak : 0;
    }
    j["latency_ns"] = {{"mean", r.latency_mean_ns}, {"p50", r.latency_p50_ns}, {"p99", r.latency_p99_ns}};
    if (sm_clock_MHz > 0)
      j["latency_sm_cycles"] = {{"mean", r.latency_mean_ns * cyc_per_ns}, {"p50", r.latency_p50_ns * cyc_per_ns},
                                {"p99", r.latency_p99_ns * cyc_per_ns}};
    else
      j["latency_sm_cycles"] = nullptr;
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
  if (trace_mode)
    std::printf("bench memory  hardware=%s target=%s trace=%s format=%s timing=%s requests=%llu (reads %llu, writes %llu) bytes=%u",
                hw_name.c_str(), target.c_str(), trace_file.c_str(), sim::memtrace::to_string(format), timing.c_str(),
                static_cast<unsigned long long>(r.requests), static_cast<unsigned long long>(r.reads),
                static_cast<unsigned long long>(r.writes), spec.bytes);
  else
    std::printf("bench memory  hardware=%s target=%s pattern=%s requests=%llu bytes=%u", hw_name.c_str(),
                target.c_str(), sim::to_string(spec.pattern), static_cast<unsigned long long>(r.requests), spec.bytes);
  if (!trace_mode || tspec.back_to_back)
    std::printf(" requesters=%u outstanding=%u", chase ? 1u : spec.requesters, chase ? 1u : spec.outstanding);
  if (!trace_mode) std::printf(" seed=%llu", static_cast<unsigned long long>(spec.seed));
  if (engine != "native") std::printf(" engine=%s", engine.c_str());
  std::printf("\n");
  std::printf("  %-24s %14.1f GB/s  (%.1f %% of %.1f GB/s peak)\n", "bandwidth", r.bandwidth_GBps,
              peak > 0 ? 100 * r.bandwidth_GBps / peak : 0.0, peak);
  if (!trace_mode && std::isnan(r.steady_bandwidth_GBps))
    std::printf("  %-24s %14s       (writes are posted: completions run ahead of the memory)\n", "bandwidth, steady", "n/a");
  else if (!trace_mode && r.steady_bandwidth_GBps > 0)
    std::printf("  %-24s %14.1f GB/s  (%.1f %%; completions 10 %% to 90 %%)\n", "bandwidth, steady",
                r.steady_bandwidth_GBps, peak > 0 ? 100 * r.steady_bandwidth_GBps / peak : 0.0);
  const char* what = trace_mode || spec.pattern == sim::BenchPattern::Mix ? "read latency" : "latency";
  auto lat_line = [&](const char* q, double ns) {
    const std::string label = std::string(what) + " " + q;
    if (std::isnan(ns)) std::printf("  %-24s %14s        (no reads)\n", label.c_str(), "n/a");
    else if (sm_clock_MHz > 0) std::printf("  %-24s %14.1f ns    (%.0f SM cycles)\n", label.c_str(), ns, ns * cyc_per_ns);
    else std::printf("  %-24s %14.1f ns\n", label.c_str(), ns);
  };
  lat_line("mean", r.latency_mean_ns);
  lat_line("p50", r.latency_p50_ns);
  lat_line("p99", r.latency_p99_ns);
  if (row_hit >= 0) std::printf("  %-24s %14.3f\n", "row-hit rate", row_hit);
  else std::printf("  %-24s %14s\n", "row-hit rate", "n/a");
  std::printf("  %-24s %14.1f us\n", "simulated time", sim_ns / 1000.0);
  std::printf("  %-24s %14.3f s\n", "wall time", r.wall_s);
  std::printf("  %-24s %14.0f\n", "requests / wall second", r.requests_per_wall_s());
  return 0;
}

int bench(const Args& args) {
  if (args.empty() || args[0].empty() || args[0][0] == '-') {
    // Asked for, the help is the output (stdout, status 0); otherwise it explains a usage error.
    const bool asked = !args.empty() && (args[0] == "--help" || args[0] == "-h");
    std::ostream& os = asked ? std::cout : std::cerr;
    os << "usage: indexsim bench <subcommand> [options]     (indexsim bench <subcommand> --help: its options)\n\n"
          "subcommands:\n";
    for (const auto& s : table()) os << "  " << s.name << "\t" << s.summary << "\n";
    return asked ? 0 : 2;
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

INDEXSIM_BENCH_SUBCOMMAND("memory", "a pattern or a memory trace on a memory target: bandwidth, latency, row hits, speed", bench_memory);
INDEXSIM_COMMAND("bench", "benchmarks: memory, speed, kernel, collective (bench --help)", bench);

}  // namespace indexsim::cli
