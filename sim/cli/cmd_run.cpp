// SPDX-License-Identifier: Apache-2.0
// `indexsim run`: one step of a workload (emulated, or a trace file) on one hardware config, or a
// whole chunked prefill (--phase prefill: every chunk of the prompt, sampled; time to first token).
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>

#include "models/common/output_file.hpp"
#include "sim/cli/cli.hpp"
#include "sim/cli/command.hpp"
#include "sim/cli/report.hpp"
#include "sim/core/progress.hpp"
#include "sim/core/version.hpp"
#include "sim/engine/prefill.hpp"
#include "sim/engine/segment_file.hpp"
#include "sim/engine/capture_state.hpp"
#include "sim/engine/simulation.hpp"

namespace indexsim::cli {

namespace {

const char* kFooter =
    "--phase decode: one decode step; chunk: one prefill chunk of --chunk tokens ending at --context;\n"
    "prefill: the whole prefill of --context tokens in chunks of --chunk (time to first token), K chunks\n"
    "simulated at spread positions and the rest interpolated between them (--sampled-chunks); where a\n"
    "simulated chunk lies off the line through its neighbours by enough to move the time to first token\n"
    "by P % (--refine-percent), the chunks midway on both sides are simulated too, up to M in all\n"
    "(--max-simulated-chunks); J of them at once on J threads (--jobs; the result does not depend on J).\n"
    "Give exactly one of --workload and --trace.";

void declare(Cli& cli) {
  const sim::PrefillSpec p;  // the whole prefill's defaults live with it
  cli.option("--hardware NAME|FILE", "hardware preset (configs/hardware/) or YAML file", true)
      .option("--workload NAME|FILE", "workload preset (configs/workloads/) or YAML file: an emulated step")
      .option("--trace FILE", "a trace (.itr) to replay instead of a workload")
      .option("--phase decode|prefill|chunk", "decode (default): one step; chunk: one prefill chunk; prefill: the whole prefill")
      .option("--context N", "tokens of context (a chunk: where it ends)")
      .option("--batch B", "sequences in the step")
      .option("--queries Q", "new tokens a sequence in a decode step (MTP: more than 1)")
      .option("--chunk N", "prefill chunk, tokens")
      .option("--sampled-chunks K", "--phase prefill: chunks simulated (default " + std::to_string(p.sampled_chunks) + "; 0: every chunk)")
      .option("--refine-percent P", "--phase prefill: refine where a chunk moves the TTFT by P % (default " +
                                        std::to_string(100 * p.refine_tolerance).substr(0, 3) + ")")
      .option("--max-simulated-chunks M", "--phase prefill: at most M chunks simulated (default " +
                                              std::to_string(p.max_simulated_chunks) + ")")
      .option("--jobs J", "--phase prefill: chunks simulated at once, 1 to 256 (default 1)")
      .option("--seed S", "the emulated step's seed (top-k draws, routing)")
      .option("--techniques NAME|FILE", "technique preset (configs/techniques/) or YAML file (default baseline)")
      .repeated("--set K=V", "override one key: hardware.K=V, workload.K=V, techniques.K=V or step.K=V")
      .flag("--fast", "the fast mode (sampled waves, coarse requests; README \"Timing model\")")
      .option("--engine native|systemc", "the loop that runs the units: native (default) or SystemC, every processor "
                                         "reaching memory through a TLM-2.0 socket (the same results)")
      .flag("--no-reuse", "simulate every kernel, even a segment that repeats an earlier one")
      .flag("--warm-reuse", "a repeated segment takes its figures from its second simulated occurrence (warm L2), ~1.6x wall")
      .option("--segments-from FILE", "start from the segment memos another run stored (--segments-to): its repeated "
                                      "segments are taken, not simulated; the run records that run's key (segments_from)")
      .option("--segments-to FILE", "store this run's segment memos in FILE, for runs that start from them")
      .option("--l2-start capture|clean", "a captured trace's first L2: as its capture's flush left it (default; a memset "
                                          "leaves dirty lines) or empty")
      .option("--steps N", "the decode step N times on one hardware state (1-1000); the result is the last step's")
      .option("--max-line-requests N", "work budget: line requests a run may ask for (default 1e11, about a day; 0: none)")
      .flag("--json", "print the result as JSON")
      .flag("--kernels", "list every kernel in the result")
      .option("--timeline FILE", "write a Chrome/Perfetto trace-event timeline")
      .option("--db FILE", "store the result in this SQLite file")
      .flag("--progress", "print progress with rate and ETA on stderr");
}

}  // namespace

sim::RunSpec parse_run_spec(const Cli& ap) {
  sim::RunSpec spec;
  spec.hardware = ap.value("--hardware");
  if (spec.hardware.empty()) throw std::invalid_argument("--hardware is required (indexsim run --help)");
  spec.workload = ap.value("--workload");
  spec.trace = ap.value("--trace");
  if (spec.workload.empty() == spec.trace.empty())
    throw std::invalid_argument("give exactly one of --workload and --trace (indexsim run --help)");
  spec.techniques = ap.value("--techniques", "baseline");
  const std::string phase = ap.value("--phase", "decode");
  if (phase != "decode" && phase != "prefill" && phase != "chunk")
    throw std::invalid_argument("--phase must be decode, prefill or chunk, not '" + phase + "'");
  spec.step.phase = phase == "decode" ? trace::Phase::decode : trace::Phase::prefill;
  // The step's defaults are StepParams' (traces/generators/step.hpp), here as everywhere.
  spec.step.context = ap.u64("--context", spec.step.context);
  spec.step.batch = ap.u32("--batch", spec.step.batch);
  spec.step.queries = ap.u32("--queries", spec.step.queries);
  spec.step.chunk_tokens = ap.u32("--chunk", spec.step.chunk_tokens);
  spec.step.seed = ap.u64("--seed", spec.step.seed);
  spec.sets = ap.values("--set");
  for (const auto& s : spec.sets) sim::split_set(s);  // reject a bad prefix before any work
  spec.fast = ap.has("--fast");
  spec.reuse = !ap.has("--no-reuse");
  spec.warm_reuse = ap.has("--warm-reuse");
  if (!spec.reuse && spec.warm_reuse) throw std::invalid_argument("run: --no-reuse and --warm-reuse exclude each other");
  spec.timeline = ap.value("--timeline");
  if (const std::string from = ap.value("--segments-from"); !from.empty()) {
    if (!spec.reuse) throw std::invalid_argument("run: --segments-from takes repeated segments from memos; --no-reuse simulates them all");
    sim::SegmentFile f = sim::load_segments(from, sim::code_version());
    spec.segments_of = f.run_key;
    spec.inherited_segments = std::make_shared<const sim::SegmentLibrary>(std::move(f.library));
  }
  spec.engine = ap.value("--engine", "native");
  if (spec.engine != "native" && spec.engine != "systemc")
    throw std::invalid_argument("--engine must be native or systemc, not '" + spec.engine + "'");
  spec.l2_start = ap.value("--l2-start", spec.l2_start);
  sim::check_l2_start(spec.l2_start);  // before any work
  spec.steps = ap.u32("--steps", 1);
  spec.max_line_requests = ap.f64("--max-line-requests", spec.max_line_requests);
  if (spec.steps == 0 || spec.steps > 1000) throw std::invalid_argument("--steps must be between 1 and 1000");
  if (spec.steps > 1 && phase != "decode") throw std::invalid_argument("--steps repeats decode steps: it needs --phase decode");
  return spec;
}

namespace {

int run_cmd(const Args& args) {
  Cli ap("run", "Simulate one step of a workload (emulated) or a trace on one hardware config, or a whole\n"
                "chunked prefill (--phase prefill: time to first token).", kFooter);
  declare(ap);
  if (!ap.parse(args)) return 0;
  // --phase prefill is the whole prefill; parse_run_spec reads the flag as a chunk's phase.
  const bool whole_prefill = ap.value("--phase") == "prefill";
  sim::RunSpec spec = parse_run_spec(ap);
  const sim::PrefillSpec defaults;  // the whole prefill's defaults live with it
  const uint64_t sampled = ap.u64("--sampled-chunks", defaults.sampled_chunks);
  const double refine_percent = ap.f64("--refine-percent", 100 * defaults.refine_tolerance);
  const uint64_t max_simulated = ap.u64("--max-simulated-chunks", defaults.max_simulated_chunks);
  const uint32_t jobs = ap.threads("--jobs", 1);
  if (jobs > 1 && spec.engine == "systemc")
    throw std::invalid_argument("--engine systemc runs one chunk at a time (one SystemC kernel a process): drop --jobs " +
                                std::to_string(jobs));
  if (!(refine_percent >= 0 && refine_percent <= 100))
    throw std::invalid_argument("--refine-percent " + std::to_string(refine_percent) +
                                ": a share of the time to first token, at least 0 and at most 100");
  const bool json = ap.has("--json");
  const bool kernels = ap.has("--kernels");
  const std::string db = ap.value("--db");
  // The share of the step's simulated CTAs done, with the time left at the rate so far.
  std::optional<sim::Progress> bar;
  if (ap.has("--progress")) {
    bar.emplace(whole_prefill ? "prefill" : "replay", whole_prefill ? size_t(std::max<uint64_t>(1, max_simulated)) : 0);
    spec.progress = [&bar](double f) { bar->update(f); };
  }
  const auto store = open_store(db);
  if (!spec.timeline.empty()) temporary_for(spec.timeline, "timeline");  // a bad path fails before the run, not after
  sim::RunResult r;
  const std::string segments_to = ap.value("--segments-to");
  if (!segments_to.empty()) {
    if (whole_prefill) throw std::invalid_argument("--segments-to stores one step's memos: not with --phase prefill (use --phase chunk)");
    if (!spec.reuse) throw std::invalid_argument("run: --segments-to stores repeated segments' memos; --no-reuse keeps none");
    // A path that cannot be written fails before the run, not after it.
    const std::string tmp = temporary_for(segments_to, "segment file");
    if (!std::ofstream(tmp)) throw std::invalid_argument("--segments-to " + segments_to + ": cannot write there (" + tmp + ")");
    std::remove(tmp.c_str());
    spec.kept_segments = std::make_shared<sim::SegmentLibrary>();
  }
  if (whole_prefill) {
    if (!spec.segments_of.empty()) throw std::invalid_argument("--segments-from: a whole prefill's chunks start from its own first chunk's memos");
    if (!spec.trace.empty()) throw std::invalid_argument("--phase prefill simulates a workload's whole prefill: give --workload, not --trace");
    sim::PrefillSpec ps;
    ps.run = spec;
    ps.run.progress = nullptr;
    ps.sampled_chunks = uint32_t(sampled);
    ps.refine_tolerance = refine_percent / 100;
    ps.max_simulated_chunks = uint32_t(std::min<uint64_t>(max_simulated, UINT32_MAX));
    ps.workers = jobs;
    // Of at most M simulated chunks (refinement decides how many), so the ETA is an upper bound.
    if (bar) ps.progress = [&bar](size_t i, uint64_t c) { bar->update(double(i), "chunk " + std::to_string(c)); };
    std::vector<sim::PrefillChunk> chunks;
    r = sim::simulate_prefill(ps, &chunks);
    if (!json) {
      std::printf("prefill of %llu tokens in %zu chunks: %zu simulated, the rest interpolated between them\n",
                  (unsigned long long)chunks.back().end, chunks.size(), size_t(r.get_metric("simulated_chunks")));
      for (const auto& c : chunks)
        if (c.simulated)
          std::printf("  chunk %5llu [%llu, %llu)  %12.1f us%s\n", (unsigned long long)c.index, (unsigned long long)c.begin,
                      (unsigned long long)c.end, c.time_ns / 1e3,
                      c.loo_error != 0 ? ("  (its neighbours' line: " + fmt("%.2f", 100 * c.loo_error) + " %)").c_str() : "");
    }
  } else {
    r = sim::simulate(spec);
    if (!segments_to.empty()) sim::save_segments(*spec.kept_segments, r.key, segments_to);
  }
  if (bar) bar->finish();
  for (const auto& w : r.warnings) std::fprintf(stderr, "warning: %s\n", w.c_str());
  if (store) store->put(r);
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
