// SPDX-License-Identifier: Apache-2.0
// Text reports of a run, shared by `run`, `bench kernel` and `validate`.
#pragma once

#include <memory>
#include <ostream>
#include <string>

#include "sim/cli/cli.hpp"
#include "sim/cli/command.hpp"
#include "sim/engine/simulation.hpp"
#include "sim/store/store.hpp"

namespace indexsim::cli {

// Per-layer and (optionally) per-kernel times, bytes, FLOPs and roofline ratios; step, tokens/s,
// footprint by tensor class, and the component statistics.
void print_result(std::ostream& os, const sim::RunResult& r, bool per_kernel);
// The results database (see sim/store), opened (and checked writable) before a run starts, so that a bad --db fails before the work,
// not after it with the result lost; nullptr when `db` is empty.
std::unique_ptr<sim::Store> open_store(const std::string& db);
// The RunSpec options common to `run` and `sweep`-like commands.
sim::RunSpec parse_run_spec(const Cli& ap);
// One figure through a printf format ("%.3f": 1.11562 -> "1.116", rounded, where std::to_string's
// six digits cut short would say 1.115).
std::string fmt(const char* printf_format, double v);

}  // namespace indexsim::cli
