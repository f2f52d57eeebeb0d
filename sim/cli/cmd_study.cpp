// SPDX-License-Identifier: Apache-2.0
// `indexsim study [FILE] [--db FILE]`: the default study of the README's main job. Every
// (workload, context, techniques) run is simulated (or found already stored in the database by its
// key), and one table gives indexer-cache memory, step latency, tokens/s and the accuracy cost
// measured by the functional models on the real-vector fixture.
#include <cstdio>
#include <iostream>
#include <map>

#include "kernels/cpu/reference.hpp"
#include "sim/cli/command.hpp"
#include "sim/cli/report.hpp"
#include "sim/config/params.hpp"
#include "sim/core/paths.hpp"
#include "sim/engine/simulation.hpp"
#include "sim/functional/accuracy.hpp"
#include "sim/store/store.hpp"

namespace indexsim::cli {

namespace {

namespace fn = sim::functional;
using config::Rule;

// Recall@k of each technique's stored keys against the exact indexer, mean over the fixture layers.
// IndexShare's cost is the recall of a layer's exact top-k when the previous layer's is used.
std::map<std::string, double> accuracy(int k) {
  const fn::VectorSet v = fn::load_fixture(fn::default_fixture_dir());
  fn::EvalOptions opt;
  opt.ks = {k};
  fn::PoolSpec pool;
  pool.ratio = 4;
  pool.recent_full = 1024;
  fn::PruneSpec prune;
  prune.variance_share = 0.95;
  const auto res = fn::run_study(v, {fn::Case::exact(), fn::Case::pooled(pool), fn::Case::pruned(prune),
                                     fn::Case::quantized(fn::Format::fp4_e2m1), fn::Case::quantized(fn::Format::fp8_e4m3)},
                                 opt);
  std::map<std::string, double> out = {{"baseline", res[0].recall[0]},
                                       {"indexpool", res[1].recall[0]},
                                       {"dimprune", res[2].recall[0]},
                                       {"quantize-fp4", res[3].recall[0]}};
  double share = 0;
  int n = 0;
  for (int l = 1; l < v.layers; ++l)
    for (int q = 0; q < v.queries; ++q) {
      const int64_t visible = std::min<int64_t>(v.tokens, v.query_pos[q] + 1);
      if (visible <= k) continue;
      auto exact = kernels::cpu::topk(fn::scores(v.query_of(l, q), v.dim, v.heads, opt.score, v.keys_of(l), visible), k);
      auto prev = kernels::cpu::topk(
          fn::scores(v.query_of(l - 1, q), v.dim, v.heads, opt.score, v.keys_of(l - 1), visible), k);
      share += fn::recall(prev, exact);
      ++n;
    }
  out["indexshare"] = n ? share / n : -1;
  return out;
}

int study(const Args& args) {
  ArgParser ap(args);
  const std::string db_path = ap.value("--db", "results/default-study.sqlite");
  auto pos = ap.positional();
  ap.finish();
  const std::string file = sim::find_config("studies", pos.empty() ? "default" : pos[0]);
  auto doc = config::Document::load_file(file);
  auto root = doc->root();
  const auto hardware = root.req<std::string>("hardware");
  const auto workloads = root.req_list<std::string>("workloads");
  const auto contexts = root.req_list<double>("contexts", Rule::positive());
  const auto techniques = root.req_list<std::string>("techniques");
  const uint32_t batch = root.req<uint32_t>("batch", Rule::range(1, 4096));
  const uint32_t queries = root.req<uint32_t>("queries", Rule::range(1, 64));
  const uint64_t seed = root.req<uint64_t>("seed");
  const bool fast = root.req<bool>("fast");
  const int k = root.req<int>("recall_k", Rule::range(1, 1 << 20));
  // --set overrides applied to every run of the study (e.g. a placement policy).
  const auto sets = root.has("sets") ? root.req_list<std::string>("sets") : std::vector<std::string>{};
  for (const auto& s : sets) sim::split_set(s);  // a bad prefix fails here, before any run
  doc->check_unused();

  std::fprintf(stderr, "study %s: accuracy on the real-vector fixture...\n", file.c_str());
  const auto acc = accuracy(k);
  sim::Store store(db_path);
  const size_t total = workloads.size() * contexts.size() * techniques.size();
  size_t done = 0;
  const std::string recall_col = "recall@" + std::to_string(k);
  std::printf("%-14s %9s %-13s %15s %12s %12s %11s %10s\n", "workload", "context", "techniques", "indexer_cache",
              "step_us", "roofline_us", "tokens/s", recall_col.c_str());
  for (const auto& w : workloads)
    for (double ctx : contexts)
      for (const auto& t : techniques) {
        sim::RunSpec spec;
        spec.hardware = hardware;
        spec.workload = w;
        spec.techniques = t;
        spec.step.context = uint64_t(ctx);
        spec.step.batch = batch;
        spec.step.queries = queries;
        spec.step.seed = seed;
        spec.fast = fast;
        spec.sets = sets;
        ++done;
        std::fprintf(stderr, "[%zu/%zu] %s %s %.0f\n", done, total, w.c_str(), t.c_str(), ctx);
        sim::RunResult r;
        try {
          r = sim::simulate(spec);
        } catch (const std::exception& e) {
          std::printf("%-14s %9.0f %-13s failed: %s\n", w.c_str(), ctx, t.c_str(), e.what());
          continue;
        }
        auto it = acc.find(t);
        r.metric("accuracy_recall_at_k", it != acc.end() ? it->second : -1, "fraction");
        store.put(r);
        std::printf("%-14s %9.0f %-13s %11.1f MiB %12.1f %12.1f %11.1f %10s\n", w.c_str(), ctx, t.c_str(),
                    r.get_metric("footprint_indexer_cache") / (1 << 20), r.step_ns / 1e3, r.roofline_ns / 1e3,
                    r.get_metric("tokens_per_second"),
                    it != acc.end() ? std::to_string(it->second).substr(0, 6).c_str() : "n/a");
        std::fflush(stdout);
      }
  std::printf("\nresults stored in %s (one row per run in table runs; metrics, kernels, components)\n", db_path.c_str());
  return 0;
}

}  // namespace

INDEXSIM_COMMAND("study", "run a study file (default: configs/studies/default.yaml) and print its table", study);

}  // namespace indexsim::cli
