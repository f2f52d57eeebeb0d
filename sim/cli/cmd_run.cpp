// SPDX-License-Identifier: Apache-2.0
// `indexsim run`: one step of a workload (emulated, or a trace file) on one hardware config.
#include <cstdio>
#include <iostream>
#include <map>

#include "sim/cli/command.hpp"
#include "sim/cli/report.hpp"
#include "sim/engine/simulation.hpp"

namespace indexsim::cli {

namespace {

const char* kUsage =
    "usage: indexsim run --hardware NAME|FILE (--workload NAME|FILE [--phase decode|prefill] [--context N]\n"
    "         [--batch B] [--queries Q] [--chunk N] [--seed S] | --trace FILE) [--techniques NAME|FILE]\n"
    "         [--set hardware.K=V|workload.K=V|techniques.K=V|step.K=V]... [--fast] [--no-reuse] [--json] [--kernels]\n"
    "         [--timeline FILE] [--db FILE] [--progress]\n";

}  // namespace

sim::RunSpec parse_run_spec(ArgParser& ap) {
  sim::RunSpec spec;
  spec.hardware = ap.value("--hardware");
  if (spec.hardware.empty()) throw std::invalid_argument(std::string("--hardware is required\n") + kUsage);
  spec.workload = ap.value("--workload");
  spec.trace = ap.value("--trace");
  if (spec.workload.empty() == spec.trace.empty())
    throw std::invalid_argument(std::string("give exactly one of --workload and --trace\n") + kUsage);
  spec.techniques = ap.value("--techniques", "baseline");
  const std::string phase = ap.value("--phase", "decode");
  if (phase != "decode" && phase != "prefill") throw std::invalid_argument("--phase must be decode or prefill, not '" + phase + "'");
  spec.step.phase = phase == "decode" ? trace::Phase::decode : trace::Phase::prefill;
  // The step's defaults are StepParams' (traces/generators/step.hpp), here as everywhere.
  spec.step.context = ap.u64("--context", spec.step.context);
  spec.step.batch = uint32_t(ap.u64("--batch", spec.step.batch));
  spec.step.queries = uint32_t(ap.u64("--queries", spec.step.queries));
  spec.step.chunk_tokens = uint32_t(ap.u64("--chunk", spec.step.chunk_tokens));
  spec.step.seed = ap.u64("--seed", spec.step.seed);
  spec.sets = ap.values("--set");
  for (const auto& s : spec.sets) sim::split_set(s);  // reject a bad prefix before any work
  spec.fast = ap.flag("--fast");
  spec.reuse = !ap.flag("--no-reuse");
  spec.timeline = ap.value("--timeline");
  return spec;
}

namespace {

int run_cmd(const Args& args) {
  ArgParser ap(args);
  if (ap.flag("--help") || ap.flag("-h")) {
    std::cout << kUsage;
    return 0;
  }
  sim::RunSpec spec = parse_run_spec(ap);
  const bool json = ap.flag("--json");
  const bool kernels = ap.flag("--kernels");
  const std::string db = ap.value("--db");
  if (ap.flag("--progress")) {
    spec.progress = [](double f) { std::fprintf(stderr, "\r  replay %5.1f %%", 100.0 * f); };
  }
  ap.finish();
  sim::RunResult r = sim::simulate(spec);
  if (spec.progress) std::fprintf(stderr, "\r                      \r");
  if (!db.empty()) store_result(db, r);
  if (json) {
    std::cout << r.to_json(kernels).dump(2) << "\n";
  } else {
    print_result(std::cout, r, kernels);
  }
  return 0;
}

}  // namespace

INDEXSIM_COMMAND("run", "simulate one step of a workload or a trace on a hardware config", run_cmd);

}  // namespace indexsim::cli
