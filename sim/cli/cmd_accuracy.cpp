// SPDX-License-Identifier: Apache-2.0
// `indexsim accuracy`: what each indexer-cache technique costs in accuracy on the real-vector
// fixture (key and score cosine retention, top-k recall against the exact indexer).
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "sim/cli/cli.hpp"
#include "sim/cli/command.hpp"
#include "sim/functional/accuracy.hpp"

namespace {

using namespace indexsim::sim::functional;

int cmd_accuracy(const indexsim::cli::Args& args) {
  indexsim::cli::Cli ap("accuracy", "What each indexer-cache technique costs in accuracy on the real-vector fixture: key and\n"
                                    "score cosine retention, top-k recall against the exact indexer.");
  ap.option("--fixture DIR", "vector fixture (default: tests/data/vectors of the source tree)")
      .flag("--json", "print JSON instead of a table")
      .repeated("--k K", "a top-k budget for recall (default 64 256 2048)")
      .option("--score dot|relu", "dot: q.k over the 4 heads (default); relu: sum over heads of ReLU(q_h.k_h)")
      .option("--queries N", "use N of the fixture's queries per layer, evenly spaced (quicker)")
      .option("--random SEED", "Gaussian vectors of the fixture's shape instead of the real ones (an extra case)");
  if (!ap.parse(args)) return 0;
  const std::string dir = ap.value("--fixture", default_fixture_dir());
  const bool json = ap.has("--json");
  EvalOptions opt;
  const std::vector<std::string> ks = ap.values("--k");
  if (!ks.empty()) {
    opt.ks.clear();
    for (const std::string& k : ks) {
      const uint64_t v = indexsim::cli::parse_count("--k", k, INT32_MAX);
      if (v < 1) throw std::invalid_argument("--k = '" + k + "': must be a positive integer");
      opt.ks.push_back(int(v));
    }
  }
  const std::string score = ap.value("--score", "dot");
  if (score == "relu")
    opt.score = ScoreMode::relu_heads;
  else if (score != "dot")
    throw std::invalid_argument("--score = '" + score + "': must be dot or relu");
  const bool random = ap.has("--random");
  const uint64_t seed = ap.u64("--random", 0);
  const uint64_t queries = ap.u64("--queries", 0);

  VectorSet v = load_fixture(dir);
  if (random) v = random_vectors(v.layers, v.tokens, v.queries, v.dim, v.heads, seed);
  if (queries > 0) v = with_queries(v, int(std::min<uint64_t>(queries, uint64_t(v.queries) + 1)));
  const std::vector<CaseResult> results = run_study(v, default_cases(v), opt);
  // IndexShare: a layer selects with the top-k of a layer 1..3 before it (the issue's reuse by the
  // next one to three layers), each budget once for every distance.
  constexpr int kShareDistances = 3;
  std::map<int, std::vector<double>> share;
  for (int k : opt.ks) share[k] = share_recalls(v, Case::exact(), k, kShareDistances);

  if (json) {
    nlohmann::json j;
    j["fixture"] = dir;
    j["vectors"] = random ? "gaussian seed " + std::to_string(seed) : "fixture";
    j["layers"] = v.layers;
    j["tokens"] = v.tokens;
    j["queries"] = v.queries;
    j["dim"] = v.dim;
    j["score"] = score;
    j["ks"] = opt.ks;
    j["causal"] = v.causal;
    for (int k : opt.ks) j["random_recall"]["recall@" + std::to_string(k)] = random_recall(v, k);
    for (int k : opt.ks)
      for (int d = 1; d <= int(share[k].size()); ++d)
        if (share[k][size_t(d - 1)] >= 0)
          j["share_recall"]["layers_back_" + std::to_string(d)]["recall@" + std::to_string(k)] = share[k][size_t(d - 1)];
    for (const CaseResult& r : results) {
      auto figures = [&](const Figures& f) {
        nlohmann::json row{{"bytes_per_token", f.bytes_per_token}, {"key_cos", f.key_cos}, {"score_cos", f.score_cos}};
        if (f.kept_dims > 0) row["kept_dims"] = f.kept_dims;
        for (size_t i = 0; i < opt.ks.size(); ++i) row["recall@" + std::to_string(opt.ks[i])] = f.recall[i];
        return row;
      };
      nlohmann::json row = figures(r);
      row["technique"] = r.technique;
      row["params"] = r.params;
      for (const Figures& f : r.layers) row["per_layer"].push_back(figures(f));
      j["results"].push_back(row);
    }
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  std::printf("# %s: %d layers x %lld tokens x %d dims, %d queries per layer, score %s%s; means over layers\n",
              random ? ("Gaussian vectors, seed " + std::to_string(seed)).c_str() : dir.c_str(), v.layers,
              static_cast<long long>(v.tokens), v.dim, v.queries, score.c_str(),
              v.causal ? ", causal (a query scores its prefix)" : "");
  std::printf("%-9s %-44s %6s %8s %8s %8s", "technique", "parameters", "dims", "B/token", "key_cos", "score_cos");
  for (int k : opt.ks) std::printf(" %9s", ("R@" + std::to_string(k)).c_str());
  std::printf("\n");
  for (const CaseResult& r : results) {
    char dims[16] = "-";
    if (r.kept_dims > 0) std::snprintf(dims, sizeof dims, "%.1f", r.kept_dims);
    std::printf("%-9s %-44s %6s %8.1f %8.4f %9.4f", r.technique.c_str(), r.params.c_str(), dims, r.bytes_per_token,
                r.key_cos, r.score_cos);
    for (double x : r.recall) std::printf(" %9.4f", x);
    std::printf("\n");
  }
  // IndexShare: a layer selects with the top-k of a layer d before it (the fixture's layers are
  // consecutive model layers: the causal fixture keeps four adjacent ones).
  for (int d = 1; d < v.layers && d <= kShareDistances; ++d) {
    std::printf("%-9s %-44s %6s %8s %8s %9s", "share", ("top-k of the layer " + std::to_string(d) + " before").c_str(), "-",
                "0.0", "-", "-");
    for (int k : opt.ks) std::printf(" %9.4f", share[k][size_t(d - 1)]);
    std::printf("\n");
  }
  std::printf("%-9s %-44s %6s %8s %8s %9s", "random", "k tokens drawn uniformly (the floor)", "-", "-", "-", "-");
  for (int k : opt.ks) std::printf(" %9.4f", random_recall(v, k));
  std::printf("\n");
  return 0;
}

}  // namespace

INDEXSIM_COMMAND("accuracy", "accuracy cost of the indexer-cache techniques on real vectors", cmd_accuracy);
