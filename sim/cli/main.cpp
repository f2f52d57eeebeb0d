// SPDX-License-Identifier: Apache-2.0
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <stdexcept>

#include <systemc>

#include "sim/cli/command.hpp"
#include "models/common/params.hpp"
#include "sim/core/version.hpp"
#include "sim/memtrace/plain_trace.hpp"
#include "sim/placement/placement.hpp"
#include "traces/trace_io.hpp"

namespace indexsim::cli {

namespace {
std::vector<Command>& table() {
  static std::vector<Command> t;
  return t;
}
}  // namespace

bool register_command(const Command& c) {
  table().push_back(c);
  return true;
}
const std::vector<Command>& commands() { return table(); }

ArgParser::ArgParser(const Args& args) : args_(args), used_(args.size(), false) {}

bool ArgParser::flag(const std::string& name) {
  for (size_t i = 0; i < args_.size(); ++i)
    if (!used_[i] && args_[i] == name) {
      used_[i] = true;
      return true;
    }
  return false;
}

bool ArgParser::has(const std::string& name) const {
  for (size_t i = 0; i < args_.size(); ++i)
    if (args_[i] == name) return true;
  return false;
}

std::string ArgParser::value(const std::string& name, const std::string& fallback) {
  for (size_t i = 0; i < args_.size(); ++i) {
    if (used_[i]) continue;
    if (args_[i] == name) {
      if (i + 1 >= args_.size()) throw std::invalid_argument(name + " needs a value");
      used_[i] = used_[i + 1] = true;
      return args_[i + 1];
    }
    if (args_[i].rfind(name + "=", 0) == 0) {
      used_[i] = true;
      return args_[i].substr(name.size() + 1);
    }
  }
  return fallback;
}

std::vector<std::string> ArgParser::values(const std::string& name) {
  std::vector<std::string> out;
  for (;;) {
    const std::string sentinel = "\x01";
    std::string v = value(name, sentinel);
    if (v == sentinel) break;
    out.push_back(v);
  }
  return out;
}

namespace {
uint64_t parse_count(const std::string& name, const std::string& v, uint64_t max) {
  size_t used = 0;
  long double d = 0;
  try {
    d = std::stold(v, &used);
  } catch (...) {
    used = 0;
  }
  // Range before the cast: converting 1e30 or nan to an integer is undefined.
  if (v.empty() || used != v.size() || !(d >= 0) || d >= 18446744073709551616.0L || d != std::floor(d))
    throw std::invalid_argument(name + " = '" + v + "': must be a non-negative integer");
  if (d > static_cast<long double>(max))
    throw std::invalid_argument(name + " = '" + v + "': out of range (at most " + std::to_string(max) + ")");
  return static_cast<uint64_t>(d);
}
}  // namespace

// What value() returns for a flag that is absent: no argument can hold a NUL. An empty value given
// on purpose (`--context ''`) is then parsed, and refused, instead of taken for "not given".
const std::string kAbsent(1, '\0');

uint64_t ArgParser::u64(const std::string& name, uint64_t fallback) {
  const std::string v = value(name, kAbsent);
  return v == kAbsent ? fallback : parse_count(name, v, UINT64_MAX);
}

uint32_t ArgParser::u32(const std::string& name, uint32_t fallback) {
  const std::string v = value(name, kAbsent);
  return v == kAbsent ? fallback : static_cast<uint32_t>(parse_count(name, v, UINT32_MAX));
}

double ArgParser::f64(const std::string& name, double fallback) {
  const std::string v = value(name, kAbsent);
  if (v == kAbsent) return fallback;
  size_t used = 0;
  double d = 0;
  try {
    d = std::stod(v, &used);
  } catch (...) {
    used = 0;
  }
  // No option takes nan or inf, and none a negative value: 0 is each one's "unset" or floor.
  if (v.empty() || used != v.size() || !std::isfinite(d)) throw std::invalid_argument(name + " = '" + v + "': must be a finite number");
  if (d < 0) throw std::invalid_argument(name + " = '" + v + "': must be >= 0");
  return d;
}

std::optional<std::string> ArgParser::optional_value(const std::string& name) {
  for (size_t i = 0; i < args_.size(); ++i) {
    if (used_[i] || args_[i] != name) continue;
    used_[i] = true;
    if (i + 1 < args_.size() && !used_[i + 1] && args_[i + 1].rfind("-", 0) != 0) {
      used_[i + 1] = true;
      return args_[i + 1];
    }
    return std::string();
  }
  return std::nullopt;
}

std::vector<std::pair<std::string, std::string>> ArgParser::options() {
  std::vector<std::pair<std::string, std::string>> out;
  for (size_t i = 0; i < args_.size(); ++i) {
    if (used_[i] || args_[i].rfind("--", 0) != 0) continue;
    const std::string a = args_[i].substr(2);
    const size_t eq = a.find('=');
    used_[i] = true;
    if (eq != std::string::npos) {
      out.emplace_back(a.substr(0, eq), a.substr(eq + 1));
    } else {
      if (i + 1 >= args_.size()) throw std::invalid_argument("--" + a + " needs a value");
      used_[i + 1] = true;
      out.emplace_back(a, args_[++i]);
    }
  }
  return out;
}

std::vector<std::string> ArgParser::positional() {
  std::vector<std::string> out;
  for (size_t i = 0; i < args_.size(); ++i)
    if (!used_[i] && (args_[i].empty() || args_[i][0] != '-')) {
      used_[i] = true;
      out.push_back(args_[i]);
    }
  return out;
}

void ArgParser::finish() const {
  for (size_t i = 0; i < args_.size(); ++i) {
    if (used_[i]) continue;
    // An option read once and given again is left over too: say so, not "unknown".
    const std::string name = args_[i].substr(0, args_[i].find('='));
    if (name.rfind("--", 0) == 0)
      for (size_t j = 0; j < args_.size(); ++j)
        if (j != i && used_[j] && args_[j].substr(0, args_[j].find('=')) == name)
          throw std::invalid_argument(name + " is given more than once");
    throw std::invalid_argument("unknown argument '" + args_[i] + "'");
  }
}

}  // namespace indexsim::cli

namespace {
void usage(std::ostream& os) {
  os << "usage: indexsim <command> [options]     (indexsim <command> --help: that command's options)\n"
        "       indexsim --version\n\ncommands:\n";
  for (const auto& c : indexsim::cli::commands()) os << "  " << c.name << "\t" << c.summary << "\n";
  os << "\nexit status: 0 done; 1 the simulation or a file operation failed; 2 bad usage, config or input (a\n"
        "  config error, a trace error, tensors that do not fit the hardware's memories); 3 (sweep) some runs failed,\n"
        "  and are stored with their errors\n";
}

// SystemC prints its copyright banner when the kernel starts, before sc_main, unless this variable
// is set: a static initialiser runs earlier still. The user's own setting is kept.
const bool banner_off = [] { return setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0) == 0; }();
}  // namespace

// libsystemc provides main(), which calls sc_main: the CLI is an ordinary SystemC program.
int sc_main(int argc, char* argv[]) {
  sc_core::sc_report_handler::set_actions("/IEEE_Std_1666/deprecated", sc_core::SC_DO_NOTHING);
  if (argc < 2) {
    usage(std::cerr);
    return 2;
  }
  if (std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h") {
    usage(std::cout);
    return 0;
  }
  if (std::string(argv[1]) == "--version") {
    std::cout << "indexsim " << indexsim::sim::code_version() << "\n";
    return 0;
  }
  const std::string name = argv[1];
  indexsim::cli::Args args(argv + 2, argv + argc);
  for (const auto& c : indexsim::cli::commands()) {
    if (name != c.name) continue;
    try {
      return c.fn(args);
    } catch (const indexsim::config::ConfigError& e) {
      std::cerr << "indexsim: config error: " << e.what() << "\n";
      return 2;
    } catch (const indexsim::trace::TraceError& e) {
      std::cerr << "indexsim " << name << ": trace error: " << e.what() << "\n";
      return 2;
    } catch (const indexsim::sim::memtrace::MemTraceError& e) {
      std::cerr << "indexsim " << name << ": trace error: " << e.what() << "\n";
      return 2;
    } catch (const indexsim::sim::PlacementError& e) {
      std::cerr << "indexsim " << name << ": " << e.what() << "\n";  // "placement: ..."
      return 2;
    } catch (const std::invalid_argument& e) {
      std::cerr << "indexsim " << name << ": " << e.what() << "\n";
      return 2;
    } catch (const std::exception& e) {
      std::cerr << "indexsim " << name << ": error: " << e.what() << "\n";
      return 1;
    }
  }
  std::cerr << "indexsim: unknown command '" << name << "'\n";
  usage(std::cerr);
  return 2;
}
