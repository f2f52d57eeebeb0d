// SPDX-License-Identifier: Apache-2.0
// Segment memos on disk (sim/engine/segment_file.hpp): a run that starts from a file gets what it
// would get from the same memos in memory, and records whose they are; a damaged or foreign file is
// refused naming the file.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "sim/core/version.hpp"
#include "sim/engine/segment_file.hpp"
#include "sim/engine/simulation.hpp"

using namespace indexsim;
using namespace indexsim::sim;

namespace {

RunSpec tiny_decode(uint64_t context) {
  RunSpec s;
  s.hardware = "h200";
  s.workload = std::string(INDEXSIM_TEST_DATA) + "/workloads/tiny-dsa.yaml";
  s.step.context = context;
  s.fast = true;
  return s;
}

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("indexsim-test-" + std::to_string(::getpid()) + "-" + name)).string();
}

std::string read_all(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

void write_all(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), std::streamsize(bytes.size()));
}

// A seed run's memos, kept in memory.
struct Seeded {
  RunResult seed;
  std::shared_ptr<SegmentLibrary> memos = std::make_shared<SegmentLibrary>();
};
Seeded seed_run() {
  Seeded s;
  RunSpec r = tiny_decode(4096);
  r.kept_segments = s.memos;
  s.seed = simulate(r);
  return s;
}

}  // namespace

TEST(SegmentFile, ARunFromTheFileEqualsOneFromTheSameMemosInMemoryAndRecordsTheSeed) {
  const Seeded s = seed_run();
  ASSERT_FALSE(s.memos->empty());
  const std::string path = temp_path("memos.seg");
  save_segments(*s.memos, s.seed.key, path);
  const SegmentFile f = load_segments(path, code_version());
  std::remove(path.c_str());
  EXPECT_EQ(f.run_key, s.seed.key);
  EXPECT_EQ(f.code_version, code_version());

  RunSpec in_memory = tiny_decode(8192);
  in_memory.inherited_segments = s.memos;
  RunSpec from_file = tiny_decode(8192);
  from_file.inherited_segments = std::make_shared<const SegmentLibrary>(f.library);
  from_file.segments_of = f.run_key;
  const RunResult a = simulate(in_memory), b = simulate(from_file);
  EXPECT_EQ(a.step_ns, b.step_ns);
  ASSERT_EQ(a.kernels.size(), b.kernels.size());
  size_t reused = 0;
  for (size_t i = 0; i < a.kernels.size(); ++i) {
    EXPECT_EQ(a.kernels[i].end_ns, b.kernels[i].end_ns) << a.kernels[i].name;
    reused += b.kernels[i].simulated == "reused";
  }
  EXPECT_GT(reused, 0u);  // the memos were found: the weight GEMMs repeat at the other context
  // The inheriting run's key names its seed: another run than the same step alone.
  EXPECT_EQ(b.config.value("segments_from", ""), s.seed.key);
  EXPECT_FALSE(a.config.contains("segments_from"));
  EXPECT_NE(a.key, b.key);
}

TEST(SegmentFile, ADamagedMissingOrForeignFileIsRefusedNamingTheFile) {
  const Seeded s = seed_run();
  const std::string path = temp_path("damaged.seg");
  save_segments(*s.memos, s.seed.key, path);
  const std::string whole = read_all(path);
  const auto refused = [&](const std::string& bytes, const std::string& why, const std::string& version) {
    write_all(path, bytes);
    try {
      load_segments(path, version);
      ADD_FAILURE() << "accepted: " << why;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
    }
  };
  refused(whole.substr(0, whole.size() / 2), "ends early", code_version());
  refused("not a segment file at all", "not a segment file", code_version());
  refused(whole + "x", "bytes after the last memo", code_version());
  refused(whole, "stored by code version", "another-version");
  std::string huge = whole;  // the code version's length, read as a count of 2^56 bytes
  huge[8 + 7] = '\x01';
  refused(huge, "a string of", code_version());
  std::remove(path.c_str());
  try {
    load_segments(path, code_version());
    ADD_FAILURE() << "a missing file was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("missing"), std::string::npos) << e.what();
  }
}
