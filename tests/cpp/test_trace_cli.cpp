// SPDX-License-Identifier: Apache-2.0
// `indexsim trace`: gen writes a checkable trace; check exits non-zero naming the block and byte
// offset of the first defect (one test per defect); info reports totals; bad input fails clearly.
#include <gtest/gtest.h>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "tests/cpp/test_trace_util.hpp"
#include "traces/codec.hpp"
#include "traces/trace_io.hpp"

using indexsim::test::CliResult;
using indexsim::test::file_bytes;
using indexsim::test::run_cli;
using indexsim::test::temp_path;
using indexsim::test::workload_file;
using indexsim::test::write_bytes;

namespace {
std::string small_trace() {
  const std::string p = temp_path("step.itr");
  const CliResult r = run_cli("trace gen --workload " + workload_file("glm-5.3-flash") +
                              " --phase decode --context 5000 --batch 2 --queries 1 --seed 3 -o " + p);
  EXPECT_EQ(r.status, 0) << r.output;
  return p;
}
bool contains(const std::string& s, const std::string& what) { return s.find(what) != std::string::npos; }
}  // namespace

TEST(TraceCli, GenWritesATraceThatChecksClean) {
  const std::string p = small_trace();
  const CliResult r = run_cli("trace check " + p);
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "OK")) << r.output;
}

TEST(TraceCli, GenFindsABareWorkloadName) {
  const std::string p = temp_path("named.itr");
  const CliResult r = run_cli("trace gen --workload glm-5 --context 4096 -o " + p);
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(std::filesystem::exists(p));
}

TEST(TraceCli, CheckNamesTheBlockAndOffsetOfAFlippedByte) {
  const std::string p = small_trace();
  auto b = file_bytes(p);
  // Walk to the block that holds the file's middle byte (16-byte fixed header, JSON, its CRC; each
  // block a type byte, payload length and CRC, then the payload) and flip a byte of its payload.
  auto u32 = [&b](size_t at) { return uint32_t(b[at]) | uint32_t(b[at + 1]) << 8 | uint32_t(b[at + 2]) << 16 | uint32_t(b[at + 3]) << 24; };
  size_t at = 16 + u32(12) + 4;
  while (at + 9 + u32(at + 1) < b.size() / 2) at += 9 + u32(at + 1);
  ASSERT_GT(u32(at + 1), 0u);
  b[at + 9 + u32(at + 1) / 2] ^= 0x10;
  write_bytes(p, b);
  const CliResult r = run_cli("trace check " + p);
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "CRC mismatch")) << r.output;
  EXPECT_TRUE(contains(r.output, "block ")) << r.output;
  EXPECT_TRUE(contains(r.output, "at byte offset ")) << r.output;
}

TEST(TraceCli, CheckReportsATruncatedFile) {
  const std::string p = small_trace();
  auto b = file_bytes(p);
  b.resize(b.size() - 100);
  write_bytes(p, b);
  const CliResult r = run_cli("trace check " + p);
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "truncated")) << r.output;
}

TEST(TraceCli, CheckReportsAWrongMagic) {
  const std::string p = small_trace();
  auto b = file_bytes(p);
  b[3] = 'Z';
  write_bytes(p, b);
  const CliResult r = run_cli("trace check " + p);
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "wrong magic")) << r.output;
}

TEST(TraceCli, CheckReportsANewerVersion) {
  const std::string p = small_trace();
  auto b = file_bytes(p);
  b[8] = static_cast<uint8_t>(indexsim::trace::kFormatVersion + 1);
  write_bytes(p, b);
  const CliResult r = run_cli("trace check " + p);
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "newer than this reader's version")) << r.output;
}

// info --json: the same totals the library computes, and the metadata says how the trace was made.
TEST(TraceCli, InfoJsonReportsTotalsAndMetadata) {
  const std::string p = small_trace();
  const CliResult r = run_cli("trace info --json " + p);
  ASSERT_EQ(r.status, 0) << r.output;
  const auto j = nlohmann::json::parse(r.output.substr(r.output.find('{')));
  EXPECT_EQ(j["metadata"]["source"], "emulated");
  EXPECT_EQ(j["metadata"]["workload"], "glm-5.3-flash");
  EXPECT_EQ(j["metadata"]["step"]["context"], 5000);
  // 11 DSA layers × 2 sequences × 1 query × 528 B appended to the KV cache.
  EXPECT_EQ(j["by_kind"]["kv_append"]["bytes_written"], 11 * 2 * 528);
  EXPECT_GT(j["totals"]["kernels"].get<int>(), 45 * 3);
}

TEST(TraceCli, DumpPrintsRecordsUpToTheLimit) {
  const std::string p = small_trace();
  const CliResult r = run_cli("trace dump --limit 5 " + p);
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "tensor 0 act.in"));
  EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '@'), 5);
}

TEST(TraceCli, BadInputFailsWithAClearMessage) {
  CliResult r = run_cli("trace check /nonexistent/x.itr");
  EXPECT_NE(r.status, 0);
  EXPECT_TRUE(contains(r.output, "cannot open")) << r.output;
  r = run_cli("trace gen --workload glm-5 --contxt 5 -o " + temp_path("x.itr"));
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(contains(r.output, "unknown argument '--contxt'")) << r.output;
  r = run_cli("trace gen --workload no-such-model -o " + temp_path("x.itr"));
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(contains(r.output, "workloads config 'no-such-model' not found")) << r.output;
  r = run_cli("trace gen --workload glm-5 --phase both -o " + temp_path("x.itr"));
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(contains(r.output, "--phase")) << r.output;
  r = run_cli("trace gen --workload glm-5 --set indexer.tpok=3 -o " + temp_path("x.itr"));
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(contains(r.output, "indexer.tpok")) << r.output;
}
