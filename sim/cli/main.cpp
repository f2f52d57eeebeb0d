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
