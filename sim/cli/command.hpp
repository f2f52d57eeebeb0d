// SPDX-License-Identifier: Apache-2.0
// The indexsim CLI: one file per top-level command (`trace`, `bench`, `run`, ...), each registering
// itself here. A command returns the process exit status.
#pragma once

#include <optional>
#include <string>
#include <utility>
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

// Small argument helpers shared by the commands: `--key value` and `--flag`.
class ArgParser {
 public:
  explicit ArgParser(const Args& args);
  bool flag(const std::string& name);                       // consumes --name
  std::string value(const std::string& name, const std::string& fallback = "");
  std::vector<std::string> values(const std::string& name);  // repeated --name v
  bool has(const std::string& name) const;
  uint64_t u64(const std::string& name, uint64_t fallback);
  uint32_t u32(const std::string& name, uint32_t fallback);   // refuses what a 32-bit count cannot hold
  double f64(const std::string& name, double fallback);
  std::vector<std::string> positional();
  // `--name [value]`: nullopt when absent, "" when given without a value.
  std::optional<std::string> optional_value(const std::string& name);
  // Every `--key value` (or `--key=value`) not consumed yet, in order: free-form keys (shape flags).
  std::vector<std::pair<std::string, std::string>> options();
  // Throws std::invalid_argument naming any argument that no one consumed.
  void finish() const;

 private:
  std::vector<std::string> args_;
  std::vector<bool> used_;
};

}  // namespace indexsim::cli

#define INDEXSIM_COMMAND(NAME, SUMMARY, FN) \
  static const bool indexsim_cmd_registered_##FN = ::indexsim::cli::register_command({NAME, SUMMARY, FN})
