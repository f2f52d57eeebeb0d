// SPDX-License-Identifier: Apache-2.0
// The indexsim CLI: one file per top-level command (`trace`, `bench`, `run`, ...), each registering
// itself here. A command returns the process exit status.
#pragma once

#include <string>
#include <vector>

namespace indexsim::cli {

using Args = std::vector<std::string>;
using CommandFn = int (*)(const Args& args);

struct Command {
  const char* name;
  const char* summary;
  CommandFn fn;
};

bool register_command(const Command& c);
const std::vector<Command>& commands();

}  // namespace indexsim::cli

#define INDEXSIM_COMMAND(NAME, SUMMARY, FN) \
  static const bool indexsim_cmd_registered_##FN = ::indexsim::cli::register_command({NAME, SUMMARY, FN})
