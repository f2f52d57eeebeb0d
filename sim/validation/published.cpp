// SPDX-License-Identifier: Apache-2.0
#include "sim/validation/published.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <mutex>
#include <stdexcept>

#include "models/common/params.hpp"
#include "sim/core/parallel.hpp"

namespace indexsim::sim {

using config::Rule;

std::vector<PublishedCase> load_published_cases(const std::string& file) {
  auto doc = config::Document::load_file(file);
  auto root = doc->root();
  root.note("description");
  const bool file_fast = root.opt<std::string>("mode", "fast", Rule::choice({"fast", "detailed"})) == "fast";
  std::map<std::string, Harness> harnesses;
  if (const auto hs = root.opt_child("harnesses"))
    for (const std::string& name : hs->keys()) {
      const config::Node h = hs->child(name);
      Harness x;
      x.name = name;
      x.host_us_per_gpu = h.req<double>("host_us_per_gpu", Rule::positive());
      h.req<std::string>("source");  // required, for the reader: the value is not used
      h.note("what");
      harnesses[name] = x;
    }
  std::vector<PublishedCase> out;
  for (const config::Node& c : root.children("cases")) {
    PublishedCase pc;
    pc.name = c.req<std::string>("name");
    for (const auto& o : out)
      if (o.name == pc.name) c.fail("name", pc.name, "case names must be unique");
    pc.group = c.req<std::string>("group", Rule::choice({"gemm", "attention", "memory", "communication"}));
    pc.hardware = c.req<std::string>("hardware");
    pc.source = c.req<std::string>("source");
    pc.conditions = c.req<std::string>("conditions");
    pc.fast = c.opt<std::string>("mode", file_fast ? "fast" : "detailed", Rule::choice({"fast", "detailed"})) == "fast";
    if (c.has("set")) pc.sets = c.req_list<std::string>("set");
    for (const auto& s : pc.sets)
      if (s.rfind("hardware.", 0) != 0) c.fail("set", s, "a case may only set hardware.K=V (a stated condition)");
    const std::string kernel = c.req<std::string>("kernel");
    pc.kernel = read_kernel_case(kernel, c.child("shape"));
    const config::Node m = c.child("measured");
    pc.measured = m.req<double>("value", Rule::positive());
    std::vector<std::string> units = figure_units();
    pc.unit = m.req<std::string>("unit", Rule::choice(units));
    c.note("notes");
    if (c.has("not_comparable")) pc.not_comparable = c.req<std::string>("not_comparable");
    if (c.has("not_comparable") && pc.not_comparable.empty())
      c.fail("not_comparable", "", "say why the figure cannot be compared with the simulated kernel");
    if (c.has("harness")) {
      const std::string h = c.req<std::string>("harness");
      const auto it = harnesses.find(h);
      if (it == harnesses.end()) c.fail("harness", h, "a name under the file's harnesses:");
      if (!is_collective(kernel)) c.fail("harness", h, "only a collective's figure is bounded by its launch loop here");
      pc.harness = it->second;
    }
    out.push_back(std::move(pc));
  }
  doc->check_unused();
  return out;
}

namespace {

CaseOutcome run_case(const PublishedCase& c) {
  CaseOutcome o;
  o.name = c.name;
  o.group = c.group;
  o.hardware = c.hardware;
  o.unit = c.unit;
  o.source = c.source;
  o.measured = c.measured;
  o.not_comparable = c.not_comparable;
  const auto t0 = std::chrono::steady_clock::now();
  try {
    KernelRun k = run_kernel_case(c.kernel, c.hardware, c.sets, c.fast);
    o.kernel_us = k.kernel_ns / 1e3;
    if (c.harness) {
      o.harness = c.harness->name;
      o.host_bound = c.harness->bound(k, c.kernel.gpus);
    }
    o.simulated = k.figure(c.unit);
    o.error = (o.simulated - o.measured) / o.measured;
    o.launch = k.run.config["step"]["trace"].value("launch", nlohmann::json::object());
  } catch (const std::exception& e) {
    o.failure = "case " + c.name + ": " + e.what();
    for (char& ch : o.failure)
      if (ch == '\n') ch = ' ';
  }
  o.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return o;
}

}  // namespace

PublishedReport run_published(const std::string& file, const std::string& only_case, const std::string& only_group,
                              const std::function<void(size_t, size_t, const std::string&)>& progress, unsigned jobs) {
  PublishedReport rep;
  rep.file = file;
  std::vector<PublishedCase> cases;
  for (auto& c : load_published_cases(file))
    if ((only_case.empty() || c.name == only_case) && (only_group.empty() || c.group == only_group))
      cases.push_back(std::move(c));
  if (cases.empty())
    throw std::invalid_argument(file + ": no case matches" + (only_case.empty() ? "" : " --case " + only_case) +
                                (only_group.empty() ? "" : " --group " + only_group));
  // Every case is a run of its own: `jobs` threads take them in file order, each outcome is stored
  // under its case's index, and the sums below are taken in that order, so the report is the same
  // whatever the thread count.
  std::vector<CaseOutcome> outcomes(cases.size());
  std::mutex progress_mutex;
  for_each_index(0, cases.size(), jobs, [&](size_t i) {
    if (progress) {
      std::lock_guard<std::mutex> lock(progress_mutex);
      progress(i, cases.size(), cases[i].name);
    }
    outcomes[i] = run_case(cases[i]);  // run_case reports a failure in its outcome, never throws
  });

  std::map<std::string, std::pair<double, size_t>> sums;
  double total = 0;
  size_t n_ok = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    CaseOutcome& o = outcomes[i];
    if (o.failure.empty() && !o.not_comparable.empty()) {
      ++rep.not_comparable;
    } else if (o.failure.empty()) {
      auto& g = sums[cases[i].group];
      g.first += std::fabs(o.error);
      g.second += 1;
      total += std::fabs(o.error);
      ++n_ok;
      rep.max_abs_error = std::max(rep.max_abs_error, std::fabs(o.error));
    } else {
      ++rep.failed;
    }
    rep.cases.push_back(std::move(o));
  }
  for (const auto& [g, s] : sums) rep.mape_by_group[g] = s.first / double(s.second);
  rep.mape = n_ok ? total / double(n_ok) : 0;
  return rep;
}

nlohmann::json PublishedReport::to_json() const {
  nlohmann::json j;
  j["file"] = file;
  j["mape"] = mape;
  j["max_abs_error"] = max_abs_error;
  j["mape_by_group"] = mape_by_group;
  j["failed"] = failed;
  j["not_comparable"] = not_comparable;
  for (const auto& c : cases) {
    nlohmann::json x{{"name", c.name}, {"group", c.group}, {"hardware", c.hardware}, {"unit", c.unit},
                     {"measured", c.measured}, {"source", c.source}, {"wall_s", c.wall_s}};
    if (c.failure.empty()) {
      x["simulated"] = c.simulated;
      x["error"] = c.error;
      x["launch"] = c.launch;
      x["kernel_us"] = c.kernel_us;
      if (!c.harness.empty()) x["harness"] = {{"name", c.harness}, {"host_bound", c.host_bound}};
      if (!c.not_comparable.empty()) x["not_comparable"] = c.not_comparable;
    } else {
      x["failure"] = c.failure;
    }
    j["cases"].push_back(x);
  }
  return j;
}

namespace {
std::string fmt(const char* f, double v) {
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}

// One line a host-bound case: the kernel the simulator gave, under the harness's loop.
std::string host_bound_notes(const std::vector<CaseOutcome>& cases, const std::string& before) {
  std::string s;
  for (const auto& c : cases)
    if (c.host_bound && c.failure.empty())
      s += before + "host-bound: " + c.name + ": the simulated kernel takes " + fmt("%.1f us", c.kernel_us) +
           ", less than the source's host loop (harness " + c.harness + ")\n";
  return s;
}
}  // namespace

std::string PublishedReport::table() const {
  std::string s;
  char line[512];
  std::snprintf(line, sizeof line, "%-52s %-13s %-6s %12s %12s %-8s %8s\n", "case", "group", "hw", "simulated",
                "measured", "unit", "error");
  s += line;
  for (const auto& c : cases) {
    if (!c.failure.empty()) {
      s += "ERROR " + c.failure + "\n";
      continue;
    }
    std::snprintf(line, sizeof line, "%-52s %-13s %-6s %12.1f %12.1f %-8s %+7.1f%%%s%s\n", c.name.c_str(), c.group.c_str(),
                  c.hardware.c_str(), c.simulated, c.measured, c.unit.c_str(), 100 * c.error,
                  c.not_comparable.empty() ? "" : "  (not in the MAPE)", c.host_bound ? "  (host-bound)" : "");
    s += line;
  }
  s += "\n";
  for (const auto& [g, m] : mape_by_group) s += "MAPE " + g + std::string(15 - std::min<size_t>(g.size(), 14), ' ') + fmt("%5.1f %%\n", 100 * m);
  s += "MAPE all" + std::string(12, ' ') + fmt("%5.1f %%", 100 * mape) + "  (" +
       std::to_string(cases.size() - failed - not_comparable) + " cases" +
       (failed ? ", " + std::to_string(failed) + " failed" : std::string()) + "; largest |error| " +
       fmt("%.1f %%)\n", 100 * max_abs_error);
  for (const auto& c : cases)
    if (!c.not_comparable.empty() && c.failure.empty()) s += "not in the MAPE: " + c.name + ": " + c.not_comparable + "\n";
  s += host_bound_notes(cases, "");
  return s;
}

std::string PublishedReport::markdown() const {
  std::string s = "| case | group | hardware | simulated | measured | unit | error | source |\n|---|---|---|---:|---:|---|---:|---|\n";
  for (const auto& c : cases) {
    if (!c.failure.empty()) {
      s += "| " + c.name + " | " + c.group + " | " + c.hardware + " | failed | " + fmt("%.1f", c.measured) + " | " +
           c.unit + " | | " + c.source + " |\n";
      continue;
    }
    s += "| " + c.name + (c.not_comparable.empty() ? "" : " (not in the MAPE)") + (c.host_bound ? " (host-bound)" : "") +
         " | " + c.group + " | " + c.hardware +
         " | " + fmt("%.1f", c.simulated) + " | " + fmt("%.1f", c.measured) + " | " + c.unit + " | " +
         fmt("%+.1f %%", 100 * c.error) + " | " + c.source + " |\n";
  }
  s += "\n| group | MAPE |\n|---|---:|\n";
  for (const auto& [g, m] : mape_by_group) s += "| " + g + " | " + fmt("%.1f %%", 100 * m) + " |\n";
  s += "| all | " + fmt("%.1f %%", 100 * mape) + " |\n\nLargest |error|: " + fmt("%.1f %%", 100 * max_abs_error) + ".\n";
  for (const auto& c : cases)
    if (!c.not_comparable.empty() && c.failure.empty()) s += "\nNot in the MAPE: " + c.name + ": " + c.not_comparable + "\n";
  s += host_bound_notes(cases, "\n");
  return s;
}

}  // namespace indexsim::sim
