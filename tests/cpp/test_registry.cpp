// SPDX-License-Identifier: Apache-2.0
// Every model file that implements a chosen-by-name interface must register itself, so that a config
// can pick it with `impl:`; a model file that exists but is unknown to the registry fails here.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "models/common/memory_device.hpp"
#include "models/common/processor.hpp"
#include "models/common/registry.hpp"
#include "sim/techniques/technique.hpp"

namespace fs = std::filesystem;

namespace {
std::string read(const fs::path& p) {
  std::ifstream f(p);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// Files (repo-relative) whose class derives from one of `bases`.
std::set<std::string> implementing(const std::string& folder, const std::vector<std::string>& bases) {
  const fs::path root = fs::path(INDEXSIM_TEST_DATA).parent_path().parent_path();
  std::set<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(root / folder)) {
    if (e.path().extension() != ".cpp") continue;
    fs::path hpp = e.path();
    hpp.replace_extension(".hpp");
    const std::string text = read(e.path()) + (fs::exists(hpp) ? read(hpp) : "");
    for (const auto& b : bases)
      if (text.find("public " + b) != std::string::npos) out.insert(fs::relative(e.path(), root).string());
  }
  return out;
}
}  // namespace

TEST(Registry, EveryMemoryModelFileIsRegistered) {
  std::set<std::string> registered;
  for (const auto& r : indexsim::config::all_registrations()) registered.insert(r.file);
  const auto files = implementing("models", {"MemoryDevice", "FrontDevice"});
  ASSERT_FALSE(files.empty());
  for (const auto& f : files) {
    if (f.find("_sc.cpp") != std::string::npos || f.find("tlm_target") != std::string::npos ||
        f.find("tlm_link") != std::string::npos)
      continue;  // adapters: the processor's side of a TLM-2.0 link stands for the device behind it
    if (f.find("closed_loop") != std::string::npos) continue;  // a test driver, not a device
    if (f.find("memory_ports") != std::string::npos) continue;  // shares a device among requesters, is none
    EXPECT_TRUE(registered.count(f)) << f << " implements a memory device but registers none";
  }
}

TEST(Registry, EveryTechniqueFileIsRegistered) {
  std::set<std::string> registered;
  for (const auto& r : indexsim::config::all_registrations()) registered.insert(r.file);
  for (const auto& f : implementing("sim/techniques", {"Technique"}))
    EXPECT_TRUE(registered.count(f)) << f << " implements a technique but registers none";
  for (const char* name : {"quantize", "dim_prune", "index_pool", "index_share"})
    EXPECT_TRUE(indexsim::sim::TechniqueRegistry::instance().has(name)) << name;
}

TEST(Registry, EveryProcessorAndReplacementPolicyFileIsRegistered) {
  std::set<std::string> registered;
  for (const auto& r : indexsim::config::all_registrations()) registered.insert(r.file);
  const auto files = implementing("models", {"Processor", "ReplacementPolicy", "FirstSmallestPolicy"});
  ASSERT_FALSE(files.empty());
  for (const auto& f : files) EXPECT_TRUE(registered.count(f)) << f << " implements a processor or policy but registers none";
  EXPECT_TRUE(indexsim::model::ProcessorRegistry::instance().has("sm_array"));
  EXPECT_TRUE(indexsim::model::ProcessorRegistry::instance().has("npu"));
}

TEST(Registry, ConfigsPickMemoryDevicesByName) {
  for (const char* name : {"hbm2e", "hbm3", "hbm3e", "ddr5", "sectored_l2", "crossbar", "cxl_type3", "npu_sram", "hbf"})
    EXPECT_TRUE(indexsim::model::MemoryRegistry::instance().has(name)) << name;
}
