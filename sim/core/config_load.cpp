// SPDX-License-Identifier: Apache-2.0
#include "sim/core/config_load.hpp"

#include <algorithm>
#include <stdexcept>

#include "sim/core/paths.hpp"

namespace indexsim::sim {

namespace {
std::string prefix_of(const std::string& kind) { return kind == "workloads" ? "workload" : kind; }
}  // namespace

std::pair<std::string, std::string> split_set(const std::string& a) {
  const auto dot = a.find('.');
  const std::string head = dot == std::string::npos ? "" : a.substr(0, dot);
  if (head != "hardware" && head != "workload" && head != "techniques" && head != "step")
    throw std::invalid_argument("--set '" + a + "': the path must start with hardware., workload., techniques. or step.");
  return {head, a.substr(dot + 1)};
}

std::shared_ptr<config::Document> load_document(const std::string& kind, const std::string& name,
                                                const std::vector<std::string>& sets) {
  auto doc = config::Document::load_file(find_config(kind, name));
  doc->inherit([&](const std::string& base) { return find_config(kind, base); });
  const std::string prefix = prefix_of(kind);
  for (const auto& s : sets) {
    auto [head, rest] = split_set(s);
    if (head == prefix) doc->set(rest);
  }
  return doc;
}

void apply_step_sets(trace::StepParams& step, const std::vector<std::string>& sets) {
  for (const auto& s : sets) {
    auto [head, rest] = split_set(s);
    if (head != "step") continue;
    const auto eq = rest.find('=');
    if (eq == std::string::npos) throw std::invalid_argument("--set '" + s + "': needs KEY=VALUE");
    trace::set_step_param(step, rest.substr(0, eq), rest.substr(eq + 1));
  }
}

void require_prefix(const std::vector<std::string>& sets, const std::vector<std::string>& prefixes,
                    const std::string& command) {
  std::string list;
  for (const auto& p : prefixes) list += (list.empty() ? "" : " or ") + p + ".";
  for (const auto& s : sets)
    if (std::find(prefixes.begin(), prefixes.end(), split_set(s).first) == prefixes.end())
      throw std::invalid_argument("--set '" + s + "': " + command + " takes " + list + " assignments only");
}

}  // namespace indexsim::sim
