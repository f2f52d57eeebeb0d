// SPDX-License-Identifier: Apache-2.0
// `indexsim bench <subcommand>`: the first positional picks an entry of this table, so a new
// benchmark (e.g. `kernel`) is one file that registers itself with INDEXSIM_BENCH_SUBCOMMAND.
#pragma once

#include "sim/cli/command.hpp"

namespace indexsim::cli {

struct BenchSubcommand {
  const char* name;
  const char* summary;
  CommandFn fn;  // receives the arguments after the subcommand name
};

bool register_bench_subcommand(const BenchSubcommand& s);
const std::vector<BenchSubcommand>& bench_subcommands();

}  // namespace indexsim::cli

#define INDEXSIM_BENCH_SUBCOMMAND(NAME, SUMMARY, FN) \
  static const bool indexsim_bench_registered_##FN = ::indexsim::cli::register_bench_subcommand({NAME, SUMMARY, FN})
