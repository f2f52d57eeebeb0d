// SPDX-License-Identifier: Apache-2.0
// `indexsim bench speed`: the simulator's own speed on a fixed set of runs, so that every change
// can be measured against it: wall seconds (median of interleaved repeats: the machines are
// shared), the simulated time, and for the sampled whole prefill its agreement with every chunk
// simulated.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <map>

#include "sim/cli/cli.hpp"
#include "sim/cli/cmd_bench.hpp"
#include "sim/cli/report.hpp"
#include "sim/core/version.hpp"
#include "sim/engine/prefill.hpp"
#include "sim/engine/simulation.hpp"

namespace indexsim::cli {

namespace {

struct Case {
  std::string name, what;
  sim::RunSpec spec;
  bool prefill = false;
  uint32_t sampled = 0;
  std::string reference = {};  // the case this one's simulated time is compared with (vs_all)
};

sim::RunSpec decode(const std::string& workload, uint64_t context) {
  sim::RunSpec s;
  s.hardware = "h200";
  s.workload = workload;
  s.step.context = context;
  s.fast = true;
  s.sets = {"techniques.placement.cxl_enabled=true"};
  return s;
}

std::vector<Case> cases() {
  std::vector<Case> v;
  v.push_back({"decode-glm5-128k", "GLM-5 decode at 131072, H200, fast", decode("glm-5", 131072)});
  sim::RunSpec glm5_1m = decode("glm-5", 1048576);
  glm5_1m.sets.push_back("workload.model.max_position_embeddings=1048576");  // beyond its 202,752: a what-if
  v.push_back({"decode-glm5-1m", "GLM-5 decode at 1048576 (window stretched), H200, fast", glm5_1m});
  v.push_back({"decode-dsv32-128k", "DeepSeek-V3.2 decode at 131072, H200, fast", decode("deepseek-v3.2", 131072)});
  // The whole-prefill fixture: two layers, small experts (tests/data/workloads/tiny-dsa.yaml).
  sim::RunSpec p = decode(sim::source_dir() + "/tests/data/workloads/tiny-dsa.yaml", 1024);
  p.sets.clear();
  p.step.chunk_tokens = 64;
  v.push_back({"prefill-tiny-all", "tiny-dsa whole prefill of 1024 in 64-token chunks, every chunk", p, true, 0});
  v.push_back({"prefill-tiny-sampled", "the same, 4 chunks sampled", p, true, 4, "prefill-tiny-all"});
  // One real prefill chunk, its long kernels sampled (fast mode) and not (every CTA).
  sim::RunSpec c = decode("glm-5.3-flash", 16384);
  c.step.phase = trace::Phase::prefill;
  c.step.chunk_tokens = 4096;
  sim::RunSpec every = c;
  every.sets.push_back("hardware.gpu.fast_mode_sample_waves=1000000");
  every.sets.push_back("hardware.gpu.fast_mode_run_on_waves=1000000");  // at least the waves above, or the config is refused
  every.sets.push_back("hardware.gpu.fast_mode_min_sample_waves=1000000");
  every.sets.push_back("hardware.gpu.fast_mode_math_bound_marks=0");  // a math-bound kernel runs every CTA too
  every.sets.push_back("hardware.gpu.fast_mode_gemm_sample_waves=0");  // and so does a GEMM of few waves
  v.push_back({"chunk-flash-16k", "GLM-5.3-Flash prefill chunk of 4096 at 16384, H200, fast", c, false, 0,
               "chunk-flash-16k-all"});
  v.push_back({"chunk-flash-16k-all", "the same, every CTA simulated (no wave sampling)", every});
  // The SystemC engine against the native one on the default study's million-token run: the same
  // simulated time (vs_all 0), at the wall its TLM-2.0 links cost.
  const sim::RunSpec glm52 = decode("glm-5.2", 1048576);
  v.push_back({"decode-glm52-1m", "GLM-5.2 decode at 1048576, H200, fast", glm52});
  sim::RunSpec glm52_sc = glm52;
  glm52_sc.engine = "systemc";
  v.push_back({"decode-glm52-1m-systemc", "the same under --engine systemc (every unit behind a TLM-2.0 link)", glm52_sc,
               false, 0, "decode-glm52-1m"});
  return v;
}

int bench_speed(const Args& args) {
  Cli ap("bench speed", "The simulator's own speed: fixed runs, N times each, interleaved (run 1 of every case, then run\n"
                        "2, ...); the median wall per case, and a sampled case's simulated time against its reference\n"
                        "(vs_all) when both ran.");
  ap.option("--repeat N", "runs of each case (default 3)")
      .repeated("--only NAME", "only this case (repeatable: these cases)")
      .flag("--list", "list the cases");
  if (!ap.parse(args)) return 0;
  const uint64_t repeat = ap.u64("--repeat", 3);
  const std::vector<std::string> only = ap.values("--only");
  const bool list = ap.has("--list");
  if (repeat == 0) throw std::invalid_argument("--repeat 0: at least one run");
  std::vector<Case> all = cases();
  if (list) {
    for (const auto& c : all) std::printf("%-24s %s\n", c.name.c_str(), c.what.c_str());
    return 0;
  }
  for (const std::string& name : only)
    if (std::none_of(all.begin(), all.end(), [&](const Case& c) { return c.name == name; }))
      throw std::invalid_argument("no case '" + name + "' (bench speed --list)");
  if (!only.empty())
    all.erase(std::remove_if(all.begin(), all.end(),
                             [&](const Case& c) { return std::find(only.begin(), only.end(), c.name) == only.end(); }),
              all.end());
  std::map<std::string, std::vector<double>> wall;
  std::map<std::string, double> simulated_us;
  for (uint64_t r = 0; r < repeat; ++r)
    for (const auto& c : all) {
      std::fprintf(stderr, "[%llu/%llu] %s\n", (unsigned long long)(r + 1), (unsigned long long)repeat, c.name.c_str());
      const auto t0 = std::chrono::steady_clock::now();
      double us = 0;
      if (c.prefill) {
        sim::PrefillSpec ps;
        ps.run = c.spec;
        ps.sampled_chunks = c.sampled;
        us = sim::simulate_prefill(ps).step_ns / 1e3;
      } else {
        us = sim::simulate(c.spec).step_ns / 1e3;
      }
      wall[c.name].push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      simulated_us[c.name] = us;  // the same every repeat (deterministic)
    }
  std::printf("%-24s %12s %14s %12s  %s\n", "case", "wall_s", "simulated_us", "vs_all", "what");
  for (const auto& c : all) {
    auto w = wall[c.name];
    std::sort(w.begin(), w.end());
    const double median = w.size() % 2 ? w[w.size() / 2] : 0.5 * (w[w.size() / 2 - 1] + w[w.size() / 2]);
    std::string agree = "";
    if (!c.reference.empty() && simulated_us.count(c.reference))
      agree = fmt("%.2f", 100 * (simulated_us[c.name] / simulated_us[c.reference] - 1)) + " %";
    std::printf("%-24s %12.2f %14.1f %12s  %s\n", c.name.c_str(), median, simulated_us[c.name], agree.c_str(), c.what.c_str());
  }
  return 0;
}

}  // namespace

INDEXSIM_BENCH_SUBCOMMAND("speed", "the simulator's wall time on a fixed set of runs (median of interleaved repeats)",
                          bench_speed);

}  // namespace indexsim::cli
