// SPDX-License-Identifier: Apache-2.0
// `indexsim study [FILE] [--db FILE]`: the default study of the README's main job. Every
// (workload, context, techniques) run is simulated (or found already stored in the database by its
// key), and one table gives indexer-cache memory, step latency, tokens/s and the accuracy cost
// measured by the functional models on the real-vector fixture.
#include <algorithm>
#include <cstdio>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <optional>

#include "kernels/cpu/reference.hpp"
#include "sim/cli/cli.hpp"
#include "sim/cli/command.hpp"
#include "sim/cli/report.hpp"
#include "models/common/params.hpp"
#include "sim/core/paths.hpp"
#include "sim/core/progress.hpp"
#include "sim/core/version.hpp"
#include "sim/engine/prefill.hpp"
#include "sim/engine/simulation.hpp"
#include "sim/functional/accuracy.hpp"
#include "sim/store/store.hpp"

namespace indexsim::cli {

namespace {

namespace fn = sim::functional;
using config::Rule;

// The accuracy column, measured by the functional models on the real-vector fixture with the
// parameters each run recorded (its resolved techniques config, where the loaders wrote every
// default, so none is repeated here), so that editing a techniques file changes the figure: recall@k of the technique's k-token selection against the exact indexer's,
// mean over the fixture's layers and queries.
//   - IndexPool, DimPrune, quantised indexer storage: the stored keys as that technique leaves them.
//   - IndexShare: a layer that reuses the top-k of a layer 1 to group-1 layers before it (the
//     fixture's layers stand for consecutive model layers); mean over those distances.
//   - No technique: the exact indexer (1 by definition). Several at once: the storage techniques
//     as one chain (fn::Case::chained: pool, then prune, then the format), and with IndexShare the
//     earlier layer selects from its keys as that chain leaves them.
class Accuracy {
 public:
  explicit Accuracy(const std::string& fixture_dir) : v_(fn::load_fixture(fixture_dir)) {}
  int64_t tokens() const { return v_.tokens; }

  // Recall@k of the technique's selection; -1 when the combination is not measured. A model that
  // already reuses top-k across layers (GLM-5.2) is measured against its own selection: IndexShare
  // selects nothing it would not, and the storage techniques are measured as they are.
  double of(const nlohmann::json& tech, int k, bool model_shares = false) {
    k_ = int(std::min<int64_t>(k, v_.tokens));
    auto on = [&](const char* name) {
      return tech.contains(name) && tech[name].at("enabled").get<bool>();
    };
    nlohmann::json measured = nlohmann::json::object();
    for (const char* name : {"index_pool", "dim_prune", "index_share"})
      if (on(name) && !(model_shares && std::string(name) == "index_share")) measured[name] = tech[name];
    if (on("quantize") && tech["quantize"].contains("indexer")) measured["quantize"] = tech["quantize"]["indexer"];
    const std::string key = measured.dump() + "@" + std::to_string(k_);
    if (auto it = memo_.find(key); it != memo_.end()) return it->second;
    // The storage techniques as one chain (pool, prune, format); IndexShare then selects with it
    // from an earlier layer. Pooling along a token's vectors needs that many vectors a token in the
    // fixture (the causal one has two): a larger ratio is not measured there, rather than as 2:1.
    std::vector<fn::Case> parts;
    bool measurable = true;
    if (measured.contains("index_pool")) {
      const fn::PoolSpec p = pool_spec(measured["index_pool"]);
      measurable = p.axis != fn::PoolAxis::vectors || p.ratio <= v_.heads;
      parts.push_back(fn::Case::pooled(p));
    }
    if (measured.contains("dim_prune")) parts.push_back(fn::Case::pruned(prune_spec(measured["dim_prune"])));
    if (measured.contains("quantize")) parts.push_back(fn::Case::quantized(format_of(measured["quantize"])));
    const fn::Case storage = parts.empty() ? fn::Case::exact() : parts.size() == 1 ? parts[0] : fn::Case::chained(parts);
    double r = -1;
    if (measurable)
      r = measured.contains("index_share") ? share_recall(storage, measured["index_share"].at("group").get<int>())
                                           : recall_of(storage);
    return memo_[key] = r;
  }

 private:
  static fn::PoolSpec pool_spec(const nlohmann::json& p) {
    fn::PoolSpec s;
    s.ratio = p.at("ratio").get<int>();
    s.axis = p.at("axis").get<std::string>() == "vectors" ? fn::PoolAxis::vectors : fn::PoolAxis::tokens;
    s.gate = p.at("gate").get<std::string>() == "softmax" ? kernels::cpu::Gate::softmax : kernels::cpu::Gate::sigmoid;
    s.recent_full = p.at("recent_full").get<int64_t>();
    s.precision = fn::parse_format(p.at("precision").get<std::string>());
    return s;
  }
  static fn::PruneSpec prune_spec(const nlohmann::json& p) {
    fn::PruneSpec s;
    s.basis = p.at("basis").get<std::string>() == "hadamard_pca" ? fn::PruneBasis::hadamard_pca : fn::PruneBasis::pca;
    s.variance_share = p.at("variance_share").get<double>();
    s.keep_dims = p.at("keep_dims").get<int>();
    return s;
  }
  // The techniques configs name formats as the simulator's byte counts do (fp8, fp4).
  static fn::Format format_of(const nlohmann::json& f) {
    const std::string n = f.get<std::string>();
    return fn::parse_format(n == "fp8" ? "fp8_e4m3" : n == "fp4" ? "fp4_e2m1" : n);
  }
  double recall_of(const fn::Case& c) const {
    fn::EvalOptions opt;
    opt.ks = {k_};
    return fn::run_study(v_, {c}, opt)[0].recall[0];
  }
  double share_recall(const fn::Case& storage, int group) const {
    // A layer reuses the top-k of a layer 1 to group-1 layers before it: the mean over every such
    // pair of fixture layers (a distance d has layers - d of them).
    const std::vector<double> by_distance = fn::share_recalls(v_, storage, k_, group - 1);
    double sum = 0, n = 0;
    for (int d = 1; d <= int(by_distance.size()); ++d) {
      const double r = by_distance[size_t(d - 1)];
      if (r < 0) continue;
      sum += r * (v_.layers - d);
      n += v_.layers - d;
    }
    return n > 0 ? sum / n : -1;
  }

  int k_ = 1;
  fn::VectorSet v_;
  std::map<std::string, double> memo_;
};

// Whether the workload's own layers reuse an earlier layer's top-k (a layer rule `indexer: shared`).
bool model_shares(const nlohmann::json& workload) {
  if (!workload.contains("layers")) return false;
  for (const auto& [key, rule] : workload.at("layers").items())
    if (rule.value("indexer", "") == "shared") return true;
  return false;
}

const char* kFooter =
    "FILE or configs/studies/NAME.yaml lists the hardware, workloads, contexts and techniques; every\n"
    "combination is one run, stored in --db, and one table row: indexer-cache memory, step time,\n"
    "communication, roofline, tokens/s, speed-up over the baseline and the recall@k accuracy cost.\n"
    "extra_rows: [{techniques: T, hardware: H, workloads: [W...]}, ...] adds rows after each workload\n"
    "and context's techniques: on other hardware (default: the study's; an NPU co-design row), for\n"
    "other workloads (default: the study's; a workload only extra rows name gets a baseline row too),\n"
    "each against that workload and context's baseline on the study's hardware.\n"
    "workload_contexts: {W: [C...], ...} gives a workload its own contexts instead of the study's.\n"
    "prefill: {workload, context, chunk, sampled_chunks, techniques, jobs} adds a time-to-first-token\n"
    "table: each technique's whole chunked prefill of one prompt against its baseline.\n"
    "A run already stored in --db (same resolved configuration) is reused, not simulated again.";

int study(const Args& args) {
  Cli ap("study", "A study: every technique on every workload and context, stored, and one table of what each\n"
                  "does to indexer-cache memory, step time and accuracy.", kFooter);
  ap.positionals("study", "the study (configs/studies/NAME.yaml or a file; default: default)")
      .option("--db FILE", "the results database (default results/default-study.sqlite)")
      .flag("--rerun-stale", "simulate again the stored runs of another code version (default: reuse them, and say how many)")
      .flag("--rerun", "simulate every run again");
  if (!ap.parse(args)) return 0;
  const std::string db_path = ap.value("--db", "results/default-study.sqlite");
  const bool rerun_stale = ap.has("--rerun-stale");
  const bool rerun = ap.has("--rerun");
  const auto& pos = ap.positional();
  if (pos.size() > 1) throw std::invalid_argument("study takes one study file or name, got also '" + pos[1] + "'");
  const std::string file = sim::find_config("studies", pos.empty() ? "default" : pos[0]);
  auto doc = config::Document::load_file(file);
  auto root = doc->root();
  const auto hardware = root.req<std::string>("hardware");
  const auto workloads = root.req_list<std::string>("workloads");
  const auto contexts = root.req_list<double>("contexts", Rule::positive());
  // A workload's own contexts instead of the study's (a model inside its position window: GLM-5 at
  // 128K, GLM-5.2 at 1M).
  std::map<std::string, std::vector<double>> own_contexts;
  if (root.has("workload_contexts")) {
    const config::Node wc = root.child("workload_contexts");
    for (const auto& name : wc.keys()) own_contexts[name] = wc.req_list<double>(name, Rule::positive());
  }
  const auto contexts_of = [&](const std::string& w) -> const std::vector<double>& {
    const auto it = own_contexts.find(w);
    return it == own_contexts.end() ? contexts : it->second;
  };
  // Rows per workload: (techniques, hardware). The study's workloads get its techniques on its
  // hardware; then every extra row that names them (or names none). A workload only extra rows
  // name gets the baseline first, the reference of its speed-ups.
  const auto study_techniques = root.req_list<std::string>("techniques");
  std::vector<std::pair<std::string, std::vector<std::pair<std::string, std::string>>>> plan;
  for (const auto& w : workloads) {
    plan.push_back({w, {}});
    for (const auto& t : study_techniques) plan.back().second.emplace_back(t, hardware);
  }
  if (root.has("extra_rows"))
    for (const auto& row : root.children("extra_rows")) {
      const auto t = row.req<std::string>("techniques");
      const auto hw = row.opt<std::string>("hardware", hardware);
      const auto names = row.has("workloads") ? row.req_list<std::string>("workloads") : workloads;
      for (const auto& w : names) {
        auto it = std::find_if(plan.begin(), plan.end(), [&](const auto& p) { return p.first == w; });
        if (it == plan.end()) {
          plan.push_back({w, {{"baseline", hardware}}});
          it = plan.end() - 1;
        }
        it->second.emplace_back(t, hw);
      }
    }
  const uint32_t batch = root.req<uint32_t>("batch", Rule::range(1, 4096));
  const uint32_t queries = root.req<uint32_t>("queries", Rule::range(1, 64));
  const uint64_t seed = root.req<uint64_t>("seed");
  const bool fast = root.req<bool>("fast");
  const int k = root.req<int>("recall_k", Rule::range(1, 1 << 20));
  // The accuracy column's fixture (a folder of tests/data) and whether recall is taken at the run's
  // own budget ratio: k of the fixture's n tokens as recall_k is of the run's context (DSA keeps 2048
  // of 131072: 128 of the causal fixture's 8192), or at recall_k itself.
  const std::string fixture = root.opt<std::string>("accuracy_fixture", "vectors");
  const bool at_ratio = root.opt<bool>("recall_at_context_ratio", false);
  // A second fixture for what the first cannot measure (pooling along more vectors a token than it
  // stores); such a row's figure is marked and says where it was measured.
  const std::string fallback_fixture = root.opt<std::string>("accuracy_fallback_fixture", "");
  // --set overrides applied to every run of the study (e.g. a placement policy).
  const auto sets = root.has("sets") ? root.req_list<std::string>("sets") : std::vector<std::string>{};
  for (const auto& s : sets) sim::split_set(s);  // a bad prefix fails here, before any run
  // Time to first token per technique: one prompt's whole chunked prefill (sampled chunks, README
  // "Whole prefill"), on the study's hardware, against that prompt's baseline.
  struct PrefillRows {
    std::string workload;
    uint64_t context = 0;
    uint32_t chunk = 0, sampled = 0, jobs = 1;
    std::vector<std::string> techniques;
  };
  std::optional<PrefillRows> prefill;
  if (root.has("prefill")) {
    const config::Node pn = root.child("prefill");
    PrefillRows p;
    p.workload = pn.req<std::string>("workload");
    p.context = pn.req<uint64_t>("context", Rule::positive());
    p.chunk = pn.req<uint32_t>("chunk", Rule::positive());
    p.sampled = pn.opt<uint32_t>("sampled_chunks", sim::PrefillSpec{}.sampled_chunks);
    p.jobs = pn.opt<uint32_t>("jobs", 1, Rule::range(1, 256));
    p.techniques = pn.req_list<std::string>("techniques");
    if (p.techniques.empty() || p.techniques.front() != "baseline")
      pn.fail("techniques", p.techniques.empty() ? "" : p.techniques.front(), "must start with baseline (the speed-ups' reference)");
    prefill = p;
  }
  doc->check_unused();

  // The fixture's load comes before the first run (seconds, the causal fixture's 8192 tokens): said,
  // so that a study that seems idle is not.
  std::fprintf(stderr, "study: loading the accuracy fixture tests/data/%s\n", fixture.c_str());
  Accuracy accuracy(sim::source_dir() + "/tests/data/" + fixture);
  std::unique_ptr<Accuracy> fallback;
  if (!fallback_fixture.empty()) fallback = std::make_unique<Accuracy>(sim::source_dir() + "/tests/data/" + fallback_fixture);
  const auto k_of = [&](const Accuracy& a, double context) {
    return at_ratio ? int(std::max<int64_t>(1, std::llround(double(a.tokens()) * k / context))) : k;
  };
  bool fallback_used = false;
  sim::Store store(db_path);
  size_t total = 0;
  for (const auto& name_rows : plan) total += contexts_of(name_rows.first).size() * name_rows.second.size();
  if (prefill) total += prefill->techniques.size();
  for (const auto& oc : own_contexts)
    if (std::none_of(plan.begin(), plan.end(), [&](const auto& p) { return p.first == oc.first; }))
      root.fail("workload_contexts", oc.first, "must name a workload of the study or of its extra rows");
  size_t done = 0, simulated = 0, reused = 0, stale = 0;
  sim::Progress progress("study", total);
  // The run stored under `key` is this run (of this code version, or of another unless
  // --rerun-stale); otherwise `make` simulates it and it is stored. Counted either way.
  const auto stored_or = [&](const std::string& key, const std::string& label,
                             const std::function<sim::RunResult()>& make) -> sim::RunResult {
    const sim::Stored held = rerun ? sim::Stored::absent : store.stored(key);
    stale += held == sim::Stored::stale;
    if (held == sim::Stored::current || (held == sim::Stored::stale && !rerun_stale)) {
      ++reused;
      progress.update(double(done - 1), label + " (stored)");
      return *store.get(key);
    }
    progress.update(double(done - 1), label);
    sim::RunResult r = make();
    store.put(r);
    ++simulated;
    return r;
  };
  const std::string recall_col = at_ratio ? "recall@k/n" : "recall@" + std::to_string(k);
  if (at_ratio)
    std::printf("# accuracy: tests/data/%s, recall@k with k / %lld = %d / context (the run's own budget ratio)\n",
                fixture.c_str(), static_cast<long long>(accuracy.tokens()), k);
  std::printf("%-16s %9s %-22s %15s %12s %9s %12s %11s %8s %10s\n", "workload", "context", "techniques", "indexer_cache",
              "step_us", "comm_us", "roofline_us", "tokens/s", "speed-up", recall_col.c_str());
  std::map<std::pair<std::string, double>, double> baseline_ns;  // the speed-up's reference: the baseline's step
  std::vector<std::string> notes;                                  // runs that did not do as configured
  for (const auto& [w, rows] : plan)
    for (double ctx : contexts_of(w))
      for (const auto& [t, hw] : rows) {
        sim::RunSpec spec;
        spec.hardware = hw;
        spec.workload = w;
        spec.techniques = t;
        spec.step.context = uint64_t(ctx);
        spec.step.batch = batch;
        spec.step.queries = queries;
        spec.step.seed = seed;
        spec.fast = fast;
        spec.sets = sets;
        ++done;
        sim::RunResult r;
        double recall = -1;
        bool on_fallback = false;
        try {
          // A stored run of the same resolved configuration is this run (its key says so); a
          // simulated one is stored with its accuracy.
          r = stored_or(sim::run_key(sim::resolve(spec)), w + " " + t + " " + std::to_string(uint64_t(ctx)), [&] {
            sim::RunResult x = sim::simulate(spec);
            const bool shares = x.config.contains("workload") && model_shares(x.config.at("workload"));
            double rec = accuracy.of(x.config.at("techniques"), k_of(accuracy, ctx), shares);
            bool fb = false;
            if (rec < 0 && fallback) {
              rec = fallback->of(x.config.at("techniques"), k_of(*fallback, ctx), shares);
              fb = rec >= 0;
            }
            x.metric("accuracy_recall_at_k", rec, "fraction");
            if (fb) x.metric("accuracy_on_fallback_fixture", 1, "flag");
            return x;
          });
          recall = r.get_metric("accuracy_recall_at_k");
          on_fallback = r.get_metric("accuracy_on_fallback_fixture", 0) > 0;
        } catch (const std::exception& e) {
          std::printf("%-16s %9.0f %-22s failed: %s\n", w.c_str(), ctx, t.c_str(), e.what());
          continue;
        }
        if (t == "baseline" && hw == hardware) baseline_ns[{w, ctx}] = r.step_ns;
        const auto base = baseline_ns.find({w, ctx});
        const std::string speedup =
            base != baseline_ns.end() && r.step_ns > 0 ? fmt("%.3f", base->second / r.step_ns) : "n/a";
        fallback_used |= on_fallback;
        const std::string recall_s = recall >= 0 ? std::to_string(recall).substr(0, 6) + (on_fallback ? "*" : "") : "n/a";
        std::printf("%-16s %9.0f %-22s %11.1f MiB %12.1f %9.1f %12.1f %11.1f %8s %10s\n", w.c_str(), ctx, t.c_str(),
                    r.get_metric("footprint_indexer_cache") / (1 << 20), r.step_ns / 1e3,
                    r.get_metric("communication_time"), r.roofline_ns / 1e3, r.get_metric("tokens_per_second"),
                    speedup.c_str(), recall_s.c_str());
        std::fflush(stdout);
        for (const auto& warning : r.warnings)
          notes.push_back(w + " " + t + " " + std::to_string(uint64_t(ctx)) + ": " + warning);
      }
  if (fallback_used)
    std::printf("\n* accuracy measured on tests/data/%s (%lld tokens, at the same budget ratio): tests/data/%s "
                "cannot express the technique (it stores fewer vectors a token than it pools)\n",
                fallback_fixture.c_str(), static_cast<long long>(fallback->tokens()), fixture.c_str());
  if (prefill) {
    // The prompt's baseline first: the reference of the speed-ups.
    const std::string how = prefill->sampled ? std::to_string(prefill->sampled) + " sampled" : "every chunk simulated";
    std::printf("\n# time to first token: the whole prefill of %llu tokens in %u-token chunks, %s (README \"Whole prefill\")\n",
                (unsigned long long)prefill->context, prefill->chunk, how.c_str());
    std::printf("%-24s %9s %-22s %12s %8s %10s %10s\n", "workload", "context", "techniques", "ttft_ms", "speed-up",
                "simulated", "fit_error");
    double base_ttft = 0;
    for (const auto& t : prefill->techniques) {
      sim::PrefillSpec ps;
      ps.run.hardware = hardware;
      ps.run.workload = prefill->workload;
      ps.run.techniques = t;
      ps.run.step.context = prefill->context;
      ps.run.step.chunk_tokens = prefill->chunk;
      ps.run.step.batch = batch;
      ps.run.step.seed = seed;
      ps.run.fast = fast;
      ps.run.sets = sets;
      ps.sampled_chunks = prefill->sampled;
      ps.workers = prefill->jobs;  // the result does not depend on it
      ++done;
      sim::RunResult r;
      try {
        r = stored_or(sim::prefill_key(ps), prefill->workload + " " + t + " prefill", [&] { return sim::simulate_prefill(ps); });
      } catch (const std::exception& e) {
        std::printf("%-24s %9llu %-22s failed: %s\n", prefill->workload.c_str(), (unsigned long long)prefill->context,
                    t.c_str(), e.what());
        continue;
      }
      const double ttft = r.get_metric("ttft");
      if (t == "baseline") base_ttft = ttft;
      const std::string speedup = base_ttft > 0 && ttft > 0 ? fmt("%.3f", base_ttft / ttft) : "n/a";
      std::printf("%-24s %9llu %-22s %12.3f %8s %10.0f %9.2f%%\n", prefill->workload.c_str(),
                  (unsigned long long)prefill->context, t.c_str(), ttft / 1e3, speedup.c_str(),
                  r.get_metric("simulated_chunks"), 100 * r.get_metric("fit_max_error"));
      std::fflush(stdout);
      for (const auto& warning : r.warnings) notes.push_back(prefill->workload + " " + t + " prefill: " + warning);
    }
  }
  // The table measures what the configurations did: where that is not what they asked for, it says so.
  if (!notes.empty()) std::printf("\nnot as configured (%zu):\n", notes.size());
  for (const auto& n : notes) std::printf("  %s\n", n.c_str());
  progress.update(double(total));
  progress.finish();
  std::printf("\n%zu runs: %zu simulated, %zu reused from %s", total, simulated, reused, db_path.c_str());
  if (stale)
    std::printf(" (%zu stored by another code version than %s: %s)", stale, sim::code_version().c_str(),
                rerun_stale ? "simulated again" : "reused; --rerun-stale simulates them again");
  std::printf("\nresults stored in %s (one row per run in table runs; metrics, kernels, components)\n", db_path.c_str());
  return 0;
}

}  // namespace

INDEXSIM_COMMAND("study", "run a study file (default: configs/studies/default.yaml) and print its table", study);

}  // namespace indexsim::cli
