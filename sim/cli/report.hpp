// SPDX-License-Identifier: Apache-2.0
// Text reports of a run, shared by `run`, `bench kernel` and `validate`.
#pragma once

#include <ostream>
#include <string>

#include "sim/cli/command.hpp"
#include "sim/engine/simulation.hpp"

namespace indexsim::cli {

// Per-layer and (optionally) per-kernel times, bytes, FLOPs and roofline ratios; step, tokens/s,
// footprint by tensor class, and the component statistics.
void print_result(std::ostream& os, const sim::RunResult& r, bool per_kernel);
// Writes the run to a results database (see sim/store).
void store_result(const std::string& db, const sim::RunResult& r);
// The RunSpec options common to `run` and `sweep`-like commands.
sim::RunSpec parse_run_spec(ArgParser& ap);

}  // namespace indexsim::cli
