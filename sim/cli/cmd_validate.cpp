// SPDX-License-Identifier: Apache-2.0
// `indexsim validate --trace CAPTURED.itr --hardware H`: replays a captured trace and reports each
// kernel's simulated time against the time measured on the GPU, its error, and the MAPE.
#include <cstdio>
#include <iostream>

#include "sim/cli/command.hpp"
#include "sim/cli/report.hpp"
#include "sim/engine/simulation.hpp"
#include "sim/engine/validate.hpp"

namespace indexsim::cli {

namespace {

const char* kUsage =
    "usage: indexsim validate --trace CAPTURED.itr --hardware NAME|FILE [--set hardware.K=V]... [--fast]\n"
    "         [--db FILE] [--json]\n";

int validate_cmd(const Args& args) {
  ArgParser ap(args);
  if (ap.flag("--help") || ap.flag("-h")) {
    std::cout << kUsage;
    return 0;
  }
  sim::RunSpec spec;
  spec.hardware = ap.value("--hardware");
  spec.trace = ap.value("--trace");
  if (spec.hardware.empty() || spec.trace.empty())
    throw std::invalid_argument(std::string("--trace and --hardware are required\n") + kUsage);
  spec.sets = ap.values("--set");
  spec.fast = ap.flag("--fast");
  const std::string db = ap.value("--db");
  const bool json = ap.flag("--json");
  ap.finish();
  sim::RunResult r = sim::simulate(spec);
  const sim::Validation v = sim::validate_run(r);
  r.metric("validation_mape", v.mape, "fraction");
  for (const auto& [kind, m] : v.mape_by_kind) r.metric("validation_mape_" + kind, m, "fraction");
  if (!db.empty()) store_result(db, r);
  if (json) {
    nlohmann::json j;
    j["mape"] = v.mape;
    j["mape_by_kind"] = v.mape_by_kind;
    for (const auto& k : v.kernels)
      j["kernels"].push_back({{"name", k.name}, {"kind", k.kind}, {"simulated_ns", k.simulated_ns},
                              {"measured_ns", k.measured_ns}, {"error", k.error}});
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  std::printf("validate %s on %s\n\n%-36s %-14s %12s %12s %8s\n", spec.trace.c_str(), r.hardware.c_str(), "kernel",
              "kind", "sim_us", "measured_us", "error");
  for (const auto& k : v.kernels)
    std::printf("%-36s %-14s %12.3f %12.3f %+7.1f%%\n", k.name.substr(0, 36).c_str(), k.kind.c_str(),
                k.simulated_ns / 1e3, k.measured_ns / 1e3, 100 * k.error);
  std::printf("\n");
  for (const auto& [kind, m] : v.mape_by_kind) std::printf("MAPE %-14s %6.1f %%\n", kind.c_str(), 100 * m);
  std::printf("MAPE %-14s %6.1f %%  (%zu kernels)\n", "all", 100 * v.mape, v.kernels.size());
  return 0;
}

}  // namespace

INDEXSIM_COMMAND("validate", "replay a captured trace and report simulated vs measured kernel times", validate_cmd);

}  // namespace indexsim::cli
