// SPDX-License-Identifier: Apache-2.0
// A command's command line: its options are declared with a line of help each, CLI11 parses them
// (`--key value`, `--key=value`, repeated and optional values, unknown or doubled options, missing
// values, required options) and writes the help, and the command reads the values back. Numbers are
// read here, so that every command refuses a bad count or value alike, naming the flag and value.
// Bad usage is std::invalid_argument (exit status 2, main.cpp).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace indexsim::cli {

using Args = std::vector<std::string>;

class Cli {
 public:
  // `command`: the words after `indexsim` ("run", "bench memory"). `footer`: what the option lines
  // cannot say (how options combine, defaults that depend on others), printed after them.
  Cli(const std::string& command, const std::string& description, const std::string& footer = "");
  ~Cli();
  Cli(const Cli&) = delete;
  Cli& operator=(const Cli&) = delete;

  // A name may carry what its value is, for the help: "--hardware NAME|FILE" (default VALUE).
  Cli& option(const std::string& name, const std::string& help, bool required = false);  // --name VALUE, once
  Cli& repeated(const std::string& name, const std::string& help);   // --name VALUE, any number of times
  Cli& flag(const std::string& name, const std::string& help);       // --name
  Cli& optional(const std::string& name, const std::string& help);   // --name [VALUE]
  Cli& positionals(const std::string& name, const std::string& help);  // words that are not options
  // Options not declared, `--key value` or `--key=value`, are kept in order (a kernel's shape keys).
  Cli& free_options(const std::string& help);

  // False when --help was asked: the help is printed to stdout and the command returns 0.
  bool parse(const Args& args);
  std::string help() const;

  bool has(const std::string& name) const;  // given at all (a flag: set)
  std::string value(const std::string& name, const std::string& fallback = "") const;
  std::vector<std::string> values(const std::string& name) const;
  uint64_t u64(const std::string& name, uint64_t fallback) const;
  uint32_t u32(const std::string& name, uint32_t fallback) const;   // refuses what a 32-bit count cannot hold
  double f64(const std::string& name, double fallback) const;       // finite
  uint32_t threads(const std::string& name, uint32_t fallback) const;  // a thread count: 1 to 256
  // `--name [value]`: nullopt when absent, "" when given without a value.
  std::optional<std::string> optional_value(const std::string& name) const;
  const std::vector<std::string>& positional() const;
  // Options of another mode are refused, not ignored: the first of `names` given throws
  // "<name> applies to <what>".
  void only_for(const std::vector<const char*>& names, const std::string& what) const;
  const std::vector<std::pair<std::string, std::string>>& free() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The number rules, for values that do not come from a declared option (a shape key).
uint64_t parse_count(const std::string& name, const std::string& text, uint64_t max);
double parse_finite(const std::string& name, const std::string& text);

}  // namespace indexsim::cli
