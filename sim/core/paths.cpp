// SPDX-License-Identifier: Apache-2.0
#include "sim/core/paths.hpp"

#include <dlfcn.h>

#include <filesystem>
#include <cstdlib>
#include <stdexcept>
#include <vector>

#include "sim/core/version.hpp"

namespace indexsim::sim {

namespace {

// Where an installed copy keeps its configs: share/indexsim beside the lib/ or bin/ folder of the
// library or program this code was linked into (cmake/install.cmake). Empty if it cannot tell.
std::string installed_data_dir() {
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&installed_data_dir), &info) == 0 || !info.dli_fname) return {};
  namespace fs = std::filesystem;
  return (fs::path(info.dli_fname).parent_path().parent_path() / "share" / "indexsim").string();
}

}  // namespace

std::string find_config(const std::string& kind, const std::string& name) {
  namespace fs = std::filesystem;
  if (name.empty()) throw std::invalid_argument("no " + kind + " config given");
  if (fs::is_regular_file(name)) return name;
  if (fs::is_directory(name)) throw std::invalid_argument(kind + " config '" + name + "' is a directory, not a YAML file");
  const std::string rel = "configs/" + kind + "/" + name + ".yaml";
  // INDEXSIM_CONFIG_DIR (the installed Python package sets it) is searched first.
  std::vector<std::string> roots;
  if (const char* env = std::getenv("INDEXSIM_CONFIG_DIR")) roots.push_back(fs::path(env).parent_path().string());
  roots.push_back(".");
  roots.push_back(source_dir());
  if (std::string installed = installed_data_dir(); !installed.empty()) roots.push_back(installed);
  for (const std::string& root : roots) {
    const fs::path p = fs::path(root) / rel;
    if (fs::is_regular_file(p)) return p.string();
  }
  throw std::invalid_argument(kind + " config '" + name + "' not found (tried the path itself and " + rel + ")");
}

}  // namespace indexsim::sim
