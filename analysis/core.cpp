// SPDX-License-Identifier: Apache-2.0
// The `indexsim._core` extension: everything that needs no SystemC elaboration, so that Python can
// resolve and hash configs, plan sweeps, merge shards, summarise traces and run the functional
// accuracy models in-process. Simulations stay in the `indexsim` executable (one per process).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "models/common/params.hpp"
#include "sim/core/version.hpp"
#include "sim/engine/simulation.hpp"
#include "sim/functional/accuracy.hpp"
#include "sim/store/store.hpp"
#include "sim/sweep/runner.hpp"
#include "traces/trace_data.hpp"

namespace py = pybind11;
using namespace indexsim;

namespace {

py::object to_py(const nlohmann::json& j) { return py::module_::import("json").attr("loads")(j.dump()); }

sim::RunSpec run_spec(const std::string& hardware, const std::string& workload, const std::string& techniques,
                      const std::string& trace, const std::string& phase, uint64_t context, uint32_t batch,
                      uint32_t queries, uint32_t chunk, uint64_t seed, const std::vector<std::string>& sets,
                      bool fast) {
  sim::RunSpec s;
  s.hardware = hardware, s.workload = workload, s.techniques = techniques, s.trace = trace;
  if (phase != "decode" && phase != "prefill") throw std::invalid_argument("phase must be decode or prefill");
  s.step.phase = phase == "decode" ? trace::Phase::decode : trace::Phase::prefill;
  s.step.context = context, s.step.batch = batch, s.step.queries = queries, s.step.chunk_tokens = chunk;
  s.step.seed = seed, s.sets = sets, s.fast = fast;
  for (const auto& x : sets) sim::split_set(x);
  return s;
}

}  // namespace

PYBIND11_MODULE(_core, m) {
  m.doc() = "IndexSim core: config resolution, hashing, sweep plans, shard merges, traces, accuracy models";
  py::register_exception<config::ConfigError>(m, "ConfigError", PyExc_ValueError);

  m.def("code_version", &sim::code_version);
  m.def("stable_hash", [](const std::string& json_text) { return sim::run_key(nlohmann::json::parse(json_text)); },
        "The run key of a resolved config given as JSON text", py::arg("json_text"));
  m.def(
      "resolve",
      [](const std::string& hardware, const std::string& workload, const std::string& techniques,
         const std::string& trace, const std::string& phase, uint64_t context, uint32_t batch, uint32_t queries,
         uint32_t chunk, uint64_t seed, const std::vector<std::string>& sets, bool fast) {
        const auto cfg = sim::resolve(run_spec(hardware, workload, techniques, trace, phase, context, batch, queries,
                                               chunk, seed, sets, fast));
        return py::make_tuple(sim::run_key(cfg), to_py(cfg));
      },
      "(key, resolved config) of a run, without running it", py::arg("hardware"), py::arg("workload") = "",
      py::arg("techniques") = "baseline", py::arg("trace") = "", py::arg("phase") = "decode",
      // The step's defaults are StepParams' (one place for every command).
      py::arg("context") = trace::StepParams{}.context, py::arg("batch") = trace::StepParams{}.batch,
      py::arg("queries") = trace::StepParams{}.queries, py::arg("chunk") = trace::StepParams{}.chunk_tokens,
      py::arg("seed") = trace::StepParams{}.seed, py::arg("sets") = std::vector<std::string>{}, py::arg("fast") = false);
  m.def(
      "sweep_plan",
      [](const std::string& spec_path, const std::string& db) {
        const auto spec = sim::sweep::SweepSpec::load_file(spec_path);
        nlohmann::json out = nlohmann::json::array();
        for (const auto& r : sim::sweep::plan(spec, db)) out.push_back(r.to_json(spec));
        return to_py(out);
      },
      "The runs of a sweep spec (index, key, point, args, done)", py::arg("spec_path"), py::arg("db") = "");
  m.def(
      "merge",
      [](const std::string& db, const std::vector<std::string>& shards) {
        sim::Store into(db);
        return into.merge(shards);
      },
      "Copies the runs of the shards that db lacks; returns how many", py::arg("db"), py::arg("shards"));
  m.def(
      "trace_summary",
      [](const std::string& path) {
        const auto t = trace::read_trace(path);
        nlohmann::json j = {{"metadata", t.metadata},
                            {"tensors", t.tensors.size()},
                            {"kernels", t.kernels.size()},
                            {"accesses", t.accesses.size()}};
        return to_py(j);
      },
      "Metadata and record counts of a trace (CRC-checked by the C++ reader)", py::arg("path"));
  m.def(
      "accuracy_study",
      [](const std::string& fixture_dir, const std::string& score) {
        using namespace sim::functional;
        const VectorSet v = load_fixture(fixture_dir.empty() ? default_fixture_dir() : fixture_dir);
        EvalOptions opt;
        if (score == "relu_heads") opt.score = ScoreMode::relu_heads;
        else if (score != "dot") throw std::invalid_argument("score must be dot or relu_heads");
        nlohmann::json out = nlohmann::json::array();
        for (const auto& r : run_study(v, default_cases(v), opt)) {
          nlohmann::json row = {{"technique", r.technique}, {"params", r.params},  {"kept_dims", r.kept_dims},
                                {"bytes_per_token", r.bytes_per_token}, {"key_cos", r.key_cos},
                                {"score_cos", r.score_cos}};
          for (size_t i = 0; i < opt.ks.size() && i < r.recall.size(); ++i)
            row["recall@" + std::to_string(opt.ks[i])] = r.recall[i];
          out.push_back(row);
        }
        return to_py(out);
      },
      "The functional accuracy models on the real-vector fixture (sim/functional)", py::arg("fixture_dir") = "",
      py::arg("score") = "dot");
}
