// SPDX-License-Identifier: Apache-2.0
#include "sim/core/paths.hpp"

#include <filesystem>
#include <cstdlib>
#include <stdexcept>
#include <vector>

#include "sim/core/version.hpp"

namespace indexsim::sim {

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
  for (const std::string& root : roots) {
    const fs::path p = fs::path(root) / rel;
    if (fs::is_regular_file(p)) return p.string();
  }
  throw std::invalid_argument(kind + " config '" + name + "' not found (tried the path itself and " + rel + ")");
}

}  // namespace indexsim::sim
