// SPDX-License-Identifier: Apache-2.0
// The one way every command loads a configuration document (run, bench memory, bench kernel, trace
// gen/export, sweep, study, the Python core): by name (configs/KIND/NAME.yaml) or path, with its
// `base:` chain laid under it, then the `--set` assignments addressed to it.
//
// `--set` takes the same paths everywhere: `hardware.a.b=v`, `workload.a.b=v`, `techniques.a.b=v`
// (and `step.K=v` where a command runs a step). A command hands each document the assignments with
// its prefix; one it has no document for is an error naming the assignment.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "models/common/params.hpp"
#include "traces/generators/emulate.hpp"

namespace indexsim::sim {

// Splits "hardware.a.b=v" into the document it targets ("hardware") and the rest ("a.b=v");
// std::invalid_argument for an unknown prefix.
std::pair<std::string, std::string> split_set(const std::string& assignment);

// `kind` is the configs/ folder: "hardware", "workloads" or "techniques"; the assignments of `sets`
// whose prefix is that document's ("hardware", "workload", "techniques") are applied, the others
// left to the caller.
std::shared_ptr<config::Document> load_document(const std::string& kind, const std::string& name_or_path,
                                                const std::vector<std::string>& sets);

// Applies the `step.K=V` assignments of `sets` to `step` (trace::set_step_param); others are left.
void apply_step_sets(trace::StepParams& step, const std::vector<std::string>& sets);

// For commands that take one document only: every assignment must address it, else
// std::invalid_argument naming the first that does not ("bench memory takes hardware.… only").
void require_prefix(const std::vector<std::string>& sets, const std::vector<std::string>& prefixes,
                    const std::string& command);

}  // namespace indexsim::sim
