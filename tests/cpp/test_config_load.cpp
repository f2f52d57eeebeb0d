// SPDX-License-Identifier: Apache-2.0
// One loader and one `--set` grammar for every command (sim/core/config_load.hpp), the step as a
// document with its defaults in one place, and the values that must agree checked where they meet.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "sim/core/config_load.hpp"
#include "sim/engine/simulation.hpp"
#include "sim/memsys/machine.hpp"
#include "sim/memsys/memory_system.hpp"

using namespace indexsim;

namespace {

std::string temp_file(const std::string& name, const std::string& text) {
  const std::string path = testing::TempDir() + name;
  std::ofstream(path) << text;
  return path;
}

// Exit status and output of the CLI.
std::pair<int, std::string> cli(const std::string& args) {
  const std::string cmd = std::string(INDEXSIM_BINARY) + " " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  std::string out;
  char buf[512];
  while (p && fgets(buf, sizeof buf, p)) out += buf;
  const int status = p ? pclose(p) : -1;
  return {WEXITSTATUS(status), out};
}

const char* kDerived = "base: h200\nname: h200-5stacks\ndescription: five HBM stacks\nmemory:\n  hbm:\n    stacks: 5\n";

}  // namespace

TEST(ConfigLoad, BenchMemoryAcceptsADerivedPresetAsRunDoes) {
  // Five stacks instead of six: the HBM peak is 5/6 of the H200's 4800 GB/s = 4000 GB/s, whether the
  // change comes from a derived file or from the same `--set` path `run` takes.
  const std::string derived = temp_file("h200-5stacks.yaml", kDerived);
  const auto [rc1, by_file] = cli("bench memory --hardware " + derived + " --pattern stream --requests 2000 --json");
  const auto [rc2, by_set] =
      cli("bench memory --hardware h200 --pattern stream --requests 2000 --json --set hardware.memory.hbm.stacks=5");
  ASSERT_EQ(rc1, 0) << by_file;
  ASSERT_EQ(rc2, 0) << by_set;
  EXPECT_NE(by_file.find("\"peak_bandwidth_GBps\": 4000.0"), std::string::npos) << by_file;
  EXPECT_NE(by_set.find("\"peak_bandwidth_GBps\": 4000.0"), std::string::npos) << by_set;
}

TEST(ConfigLoad, AnAssignmentWithoutItsDocumentIsAnError) {
  auto [rc, out] = cli("bench memory --hardware h200 --pattern stream --set memory.hbm.stacks=5");
  EXPECT_EQ(rc, 2);
  EXPECT_NE(out.find("must start with hardware."), std::string::npos) << out;
  std::tie(rc, out) = cli("bench kernel --hardware h200 copy --bytes 1048576 --set workload.model.num_layers=2");
  EXPECT_EQ(rc, 2);
  EXPECT_NE(out.find("takes hardware. assignments only"), std::string::npos) << out;
}

TEST(ConfigLoad, ThePortCountsOfTheCrossbarMustMatchWhatTheyStandFor) {
  // One crossbar port per L2 slice and per SM: changing one count alone is a contradiction.
  for (const auto& [set, key, other] : {std::tuple<std::string, std::string, std::string>{"l2.slices=128", "noc.memory_ports", "l2.slices"},
                                        {"gpu.sm_count=264", "noc.sm_ports", "gpu 264"}}) {
    auto doc = sim::load_document("hardware", "h200", {"hardware." + set});
    try {
      auto system = sim::make_target(doc->root(), "system");
      sim::build_machine(doc->root(), *system);
      FAIL() << set << " was accepted";
    } catch (const config::ConfigError& e) {
      EXPECT_EQ(e.path, key);
      EXPECT_NE(e.rule.find(other), std::string::npos) << e.what();
    }
  }
  // Both changed together agree.
  auto doc = sim::load_document("hardware", "h200", {"hardware.l2.slices=128", "hardware.noc.memory_ports=128"});
  EXPECT_NO_THROW(sim::make_target(doc->root(), "system"));
}

TEST(ConfigLoad, StepParametersAreOneDocumentWithOneSetOfDefaults) {
  // `--set step.context=2048` is `--context 2048`; an unknown step key names itself.
  sim::RunSpec a, b;
  a.hardware = b.hardware = "h200";
  a.workload = b.workload = "glm-5";
  a.step.context = 2048;
  b.sets = {"step.context=2048"};
  EXPECT_EQ(sim::resolve(a)["step"], sim::resolve(b)["step"]);
  EXPECT_EQ(sim::resolve(b)["step"]["context"], 2048);
  b.sets = {"step.contxt=2048"};
  try {
    sim::resolve(b);
    FAIL() << "a misspelt step key was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("step.contxt"), std::string::npos) << e.what();
  }
  trace::StepParams p;
  trace::set_step_param(p, "context", "1.048576e+06");  // a sweep range's point
  EXPECT_EQ(p.context, 1048576u);
  EXPECT_THROW(trace::set_step_param(p, "batch", "-1"), std::invalid_argument);
  EXPECT_THROW(trace::set_step_param(p, "phase", "both"), std::invalid_argument);
  // The run command's default context is the step's (no second default in the CLI).
  const auto [rc, out] = cli("run --hardware h200 --workload glm-5 --json --set workload.model.num_layers=2 "
                             "--set 'workload.layers=[{first: 0, last: 1, attention: dsa, indexer: full, mlp: dense}]'");
  ASSERT_EQ(rc, 0) << out.substr(0, 2000);
  EXPECT_NE(out.find("\"context\": " + std::to_string(trace::StepParams{}.context)), std::string::npos);
}

TEST(ConfigLoad, ASectionNamesAPresetAndOverridesBesideIt) {
  // sections/part.yaml holds {a: 1, b: {c: 2, d: 3}}; the section takes it and lays b.d: 4 over it.
  const std::string dir = testing::TempDir() + "preset_test/";
  std::filesystem::create_directories(dir + "sections");
  std::ofstream(dir + "sections/part.yaml") << "a: 1\nb: {c: 2, d: 3}\n";
  std::ofstream(dir + "hw.yaml") << "unit:\n  preset: sections/part\n  b: {d: 4}\n";
  auto doc = config::Document::load_file(dir + "hw.yaml");
  auto unit = doc->root().child("unit");
  EXPECT_EQ(unit.req<int>("a"), 1);
  EXPECT_EQ(unit.child("b").req<int>("c"), 2);
  EXPECT_EQ(unit.child("b").req<int>("d"), 4);
  doc->check_unused();  // `preset` itself is consumed by the expansion
  // A missing preset names the file, the key and what it looked for.
  std::ofstream(dir + "bad.yaml") << "unit: {preset: sections/nothing}\n";
  try {
    config::Document::load_file(dir + "bad.yaml");
    FAIL() << "a missing preset was accepted";
  } catch (const config::ConfigError& e) {
    EXPECT_EQ(e.path, "unit.preset");
    EXPECT_NE(e.rule.find("sections/nothing.yaml"), std::string::npos) << e.what();
  }
}

TEST(ConfigLoad, TheGpuPresetsShareTheirCxlSramAndHbfSections) {
  // One file each in configs/hardware/sections/: every GPU preset reads the same values, and
  // `--set` reaches into an expanded section as into any other.
  for (const char* gpu : {"a100", "b200", "h100", "h200"}) {
    auto doc = sim::load_document("hardware", gpu, {"hardware.memory.cxl.lanes=8"});
    auto mem = doc->root().child("memory");
    EXPECT_EQ(mem.child("cxl").req<int>("lanes"), 8) << gpu;
    EXPECT_EQ(mem.child("cxl").child("dram").req<std::string>("impl"), "ddr5") << gpu;
    EXPECT_EQ(mem.child("sram").req<std::string>("impl"), "npu_sram") << gpu;
    EXPECT_EQ(mem.child("hbf").req<std::string>("impl"), "hbf") << gpu;
  }
}

TEST(ConfigLoad, AContextBeyondTheModelsPositionsIsRefusedInEveryPhaseUnlessOverridden) {
  // GLM-5 has 202,752 positions (model.max_position_embeddings): a decode step or a chunk at 262,144
  // is refused, naming both numbers and the override; with the override stated it runs, and the
  // resolved workload records the stretched window.
  for (const char* phase : {"decode", "chunk"}) {
    sim::RunSpec s;
    s.hardware = "h200";
    s.workload = "glm-5";
    s.sets = {std::string("step.phase=") + phase, "step.context=262144"};
    try {
      sim::resolve(s);
      FAIL() << phase << " beyond the model's positions was accepted";
    } catch (const std::invalid_argument& e) {
      const std::string m = e.what();
      EXPECT_NE(m.find("262144"), std::string::npos) << m;
      EXPECT_NE(m.find("202752"), std::string::npos) << m;
      EXPECT_NE(m.find("workload.model.max_position_embeddings"), std::string::npos) << m;
    }
    s.sets.push_back("workload.model.max_position_embeddings=1048576");
    EXPECT_EQ(sim::resolve(s)["workload"]["model"]["max_position_embeddings"], 1048576) << phase;
  }
}

TEST(WorkBudget, ARunThatAsksForMoreLineRequestsThanItsBudgetIsRefusedBeforeItStarts) {
  // lines = sum over accesses of bytes_per_cta x cta_count / line_bytes. A two-layer GLM-5 decode
  // step reads its embedding and layer weights, far more than 10^5 lines of 128 B (12.8 MB): a
  // budget of 10^5 refuses it, naming the count; the default lets it run.
  sim::RunSpec s;
  s.hardware = "h200";
  s.workload = "glm-5";
  s.fast = true;
  s.sets = {"workload.model.num_layers=2", "workload.layers=[{first: 0, last: 1, attention: dsa, indexer: full, mlp: dense}]"};
  s.max_line_requests = 1e5;
  try {
    sim::simulate(s);
    FAIL() << "a run over its work budget ran";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("work budget"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("--max-line-requests"), std::string::npos) << e.what();
  }
  s.max_line_requests = sim::RunSpec().max_line_requests;
  EXPECT_GT(sim::simulate(s).step_ns, 0);
}
