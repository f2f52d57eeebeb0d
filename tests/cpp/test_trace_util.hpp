// SPDX-License-Identifier: Apache-2.0
// Helpers shared by the trace and workload tests: paths, file bytes, running the CLI.
#pragma once

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "models/common/params.hpp"
#include "traces/generators/collective_kernels.hpp"
#include "traces/launch_limits.hpp"

namespace indexsim::test {

inline std::string workload_dir() { return std::string(INDEXSIM_TEST_DATA) + "/../../configs/workloads"; }
inline std::string workload_file(const std::string& name) { return workload_dir() + "/" + name + ".yaml"; }
inline const std::vector<std::string>& shipped_workloads() {
  static const std::vector<std::string> w = {"deepseek-v3.2", "glm-5", "glm-5.2", "glm-5.3-flash"};
  return w;
}

// Hopper launch limits with the H200 preset's NVLink fabric: what the shipped 8-GPU workloads
// need to emulate a step (their collectives are shaped from it).
inline trace::LaunchLimits hopper_limits() {
  static const trace::LaunchLimits lim = [] {
    trace::LaunchLimits l;
    auto doc = config::Document::load_file(std::string(INDEXSIM_TEST_DATA) + "/../../configs/hardware/h200.yaml");
    l.fabric = trace::read_fabric_limits(doc->root());
    return l;
  }();
  return lim;
}

// A fresh temporary path per test, removed with the test's directory.
inline std::string temp_path(const std::string& leaf) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  const auto dir = std::filesystem::temp_directory_path() /
                   ("indexsim_test_" + std::string(info->test_suite_name()) + "_" + info->name());
  std::filesystem::create_directories(dir);
  return (dir / leaf).string();
}

inline std::vector<uint8_t> file_bytes(const std::string& p) {
  std::ifstream in(p, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}
inline void write_bytes(const std::string& p, const std::vector<uint8_t>& b) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
}

struct CliResult {
  int status = -1;
  std::string output;  // stdout and stderr together
};
inline CliResult run_cli(const std::string& args) {
  CliResult r;
  const std::string cmd = std::string(INDEXSIM_BINARY) + " " + args + " 2>&1";
  FILE* f = popen(cmd.c_str(), "r");
  if (!f) return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) r.output.append(buf, n);
  const int st = pclose(f);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

}  // namespace indexsim::test
