// SPDX-License-Identifier: Apache-2.0
// The layers of DESIGN.md, checked on the source tree: models/common is the ground floor (it includes
// nothing of the project above it), models/ and traces/ include nothing from sim/, and sim/ includes
// nothing from analysis/. A line that breaks a rule is named with its file and line number.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "sim/core/config_load.hpp"
#include "sim/memsys/memory_system.hpp"

namespace fs = std::filesystem;

namespace {

const fs::path kRoot = fs::path(INDEXSIM_TEST_DATA).parent_path().parent_path();

// "file:line: text" for every project include in `folder` whose path starts with one of `banned`.
std::vector<std::string> includes_of(const std::string& folder, const std::vector<std::string>& banned) {
  std::vector<std::string> found;
  for (const auto& e : fs::recursive_directory_iterator(kRoot / folder)) {
    const auto ext = e.path().extension();
    if (ext != ".cpp" && ext != ".hpp" && ext != ".cu" && ext != ".h") continue;
    std::ifstream f(e.path());
    std::string line;
    for (int n = 1; std::getline(f, line); ++n) {
      const auto at = line.find("#include \"");
      if (at == std::string::npos) continue;
      const std::string path = line.substr(at + 10);
      for (const auto& b : banned)
        if (path.rfind(b, 0) == 0)
          found.push_back(fs::relative(e.path(), kRoot).string() + ":" + std::to_string(n) + ": " + line);
    }
  }
  return found;
}

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += "\n  " + x;
  return s;
}

}  // namespace

TEST(Layering, ModelsAndTracesIncludeNothingFromSim) {
  const auto a = includes_of("models", {"sim/", "analysis/"});
  const auto b = includes_of("traces", {"sim/", "analysis/", "kernels/"});
  EXPECT_TRUE(a.empty()) << "models/ includes the engine:" << joined(a);
  EXPECT_TRUE(b.empty()) << "traces/ includes the engine:" << joined(b);
}

TEST(Layering, TheGroundFloorIncludesOnlyItself) {
  // models/common is below every unit folder and the engine. The processor contract speaks in the
  // trace's kernel and access records (traces/records.hpp: plain structs that include nothing of
  // the project), so that one header is the exception.
  std::vector<std::string> banned = {"sim/", "traces/generators/", "traces/trace", "traces/codec", "analysis/", "kernels/"};
  for (const auto& e : fs::directory_iterator(kRoot / "models"))
    if (e.is_directory() && e.path().filename() != "common") banned.push_back("models/" + e.path().filename().string() + "/");
  const auto v = includes_of("models/common", banned);
  EXPECT_TRUE(v.empty()) << "models/common reaches up:" << joined(v);
}

TEST(Layering, TheCheckFindsABrokenRule) {
  // The scanner itself: a folder that does include sim/ must be reported (sim/ includes sim/).
  EXPECT_FALSE(includes_of("sim/engine", {"sim/"}).empty());
}

namespace {

// "file:line: text" for every line of code under `folder` with a string literal that is, or starts
// with, one of `names` followed by a dot (a key path). Comments are skipped.
std::vector<std::string> literals_of(const std::string& folder, const std::set<std::string>& names) {
  std::vector<std::string> found;
  for (const auto& e : fs::recursive_directory_iterator(kRoot / folder)) {
    const auto ext = e.path().extension();
    if (ext != ".cpp" && ext != ".hpp") continue;
    std::ifstream f(e.path());
    std::string line;
    for (int n = 1; std::getline(f, line); ++n) {
      const std::string code = line.substr(0, line.find("//"));
      for (const auto& name : names)
        if (code.find("\"" + name + "\"") != std::string::npos || code.find("\"" + name + ".") != std::string::npos)
          found.push_back(fs::relative(e.path(), kRoot).string() + ":" + std::to_string(n) + ": " + line);
    }
  }
  return found;
}

// The device names of the shipped hardware: the sections that play a role in `system:` (processors,
// interconnect, cache) and the regions of the address map.
std::set<std::string> device_names() {
  std::set<std::string> names;
  for (const auto& e : fs::directory_iterator(kRoot / "configs" / "hardware")) {
    if (e.path().extension() != ".yaml") continue;
    auto doc = indexsim::sim::load_document("hardware", e.path().string(), {});
    const auto layout = indexsim::sim::read_layout(doc->root());
    for (const auto& p : layout.processors) names.insert(p.section);
    names.insert(layout.interconnect);
    if (!layout.cache.empty()) names.insert(layout.cache);
    for (const auto& r : indexsim::sim::read_regions(doc->root())) names.insert(r.name);
  }
  return names;
}

}  // namespace

TEST(Layering, TheCoreNamesNoDevice) {
  // sim/ reads the hardware through the roles of its `system:` section and the region table, never a
  // section or a region by name: a new device is a config change.
  const auto names = device_names();
  for (const char* expected : {"gpu", "npu", "l2", "noc", "hbm", "cxl", "sram", "hbf"})
    EXPECT_TRUE(names.count(expected)) << expected << " is not among the presets' device names";
  const auto v = literals_of("sim", names);
  EXPECT_TRUE(v.empty()) << "sim/ names a device:" << joined(v);
  // The scanner itself: the replacement policies register under their names in models/.
  EXPECT_FALSE(literals_of("models", {"lru"}).empty());
}
