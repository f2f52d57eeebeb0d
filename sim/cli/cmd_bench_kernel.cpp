// SPDX-License-Identifier: Apache-2.0
// `indexsim bench kernel KERNEL`: one emulated kernel (copy, read, gemm, ...), generated like any other kernel's trace
// and replayed by the same engine, compared with their roofline and the measured H200 figures of
// ../shared/reference/h200-measured.md (which the user passes in; nothing here is hard-coded).
#include <cstdio>
#include <iostream>

#include "sim/cli/cli.hpp"
#include "sim/cli/cmd_bench.hpp"
#include "sim/cli/report.hpp"
#include "sim/engine/simulation.hpp"
#include "sim/validation/kernel_bench.hpp"
#include "sim/core/config_load.hpp"
#include <algorithm>

namespace indexsim::cli {

namespace {

int bench_kernel(const Args& args) {
  Cli ap("bench kernel", "One emulated kernel on a hardware preset: its time, roofline and achieved rate.\n"
                         "usage: indexsim bench kernel --hardware NAME|FILE KERNEL [--SHAPE-KEY VALUE]...\n"
                         "e.g. indexsim bench kernel --hardware h800 gemm --m 64 --n 2112 --k 7168 --dtype fp8");
  ap.option("--hardware NAME|FILE", "hardware preset or YAML file", true)
      .repeated("--set K=V", "hardware.K=V: override one hardware key")
      .flag("--fast", "the fast mode (sampled waves)")
      .option("--timeline FILE", "write a trace-event timeline")
      .flag("--json", "print the run as JSON")
      .free_options("KERNEL and its shape keys (--KEY VALUE: the keys of a validation case's shape: mapping):\n" +
                    sim::kernel_case_usage());
  if (!ap.parse(args)) return 0;
  const std::string hardware = ap.value("--hardware");
  auto sets = ap.values("--set");
  sim::require_prefix(sets, {"hardware"}, "bench kernel");
  const bool fast = ap.has("--fast");
  const std::string timeline = ap.value("--timeline");
  const bool json = ap.has("--json");
  // Every other `--key value` is a shape key: read as a YAML mapping, so the flags and a validation
  // case's shape: go through one reader with the same checks.
  std::string yaml;
  for (auto [key, value] : ap.free()) {
    std::replace(key.begin(), key.end(), '-', '_');
    yaml += key + ": " + value + "\n";
  }
  const std::vector<std::string>& pos = ap.positional();
  if (pos.size() != 1)
    throw std::invalid_argument("name one kernel (indexsim bench kernel --help)");
  auto doc = config::Document::load_string(yaml.empty() ? "{}" : yaml, "bench kernel flags");
  const sim::KernelCase kc = sim::read_kernel_case(pos[0], doc->root());
  doc->check_unused();
  sim::KernelRun k = sim::run_kernel_case(kc, hardware, sets, fast, timeline);
  sim::RunResult& r = k.run;
  if (json) {
    std::cout << r.to_json(true).dump(2) << "\n";
    return 0;
  }
  std::printf("bench kernel %s on %s (%s mode)\n", pos[0].c_str(), r.hardware.c_str(), fast ? "fast" : "detailed");
  const auto& launch = r.config["step"]["trace"].value("launch", nlohmann::json::object());
  if (!launch.empty()) std::printf("  launch: %s\n", launch.dump().c_str());
  for (const auto& kr : r.kernels)
    std::printf("  %-24s ctas %-7llu time %10.2f us  roofline %10.2f us  ratio %.3f  (%s-bound)\n", kr.name.c_str(),
                (unsigned long long)kr.ctas, kr.duration_ns() / 1e3, kr.roofline_ns / 1e3,
                kr.roofline_ns > 0 ? kr.duration_ns() / kr.roofline_ns : 0.0, kr.bound.c_str());
  const std::string per = kc.launches > 1 ? " a launch, of " + std::to_string(kc.launches) + " back to back" : "";
  std::printf("  kernel time        %12.3f us%s (launch overhead excluded; step %.3f us)\n", k.kernel_ns / 1e3,
              per.c_str(), r.step_ns / 1e3);
  if (k.bytes > 0) std::printf("  achieved bandwidth %12.1f GB/s (bytes read + written / kernel time)\n", k.figure("GB/s"));
  if (k.flops > 0) std::printf("  achieved           %12.1f TFLOP/s\n", k.figure("TFLOP/s"));
  std::printf("  L2 hit rate        %12.3f\n  requests simulated %12.0f\n  wall               %12.2f s\n",
              r.get_metric("l2_hit_rate"), r.get_metric("requests"), r.wall_s);
  return 0;
}

}  // namespace

INDEXSIM_BENCH_SUBCOMMAND("kernel", "replay a calibration kernel (copy, read, gemm) on a hardware config", bench_kernel);

}  // namespace indexsim::cli
