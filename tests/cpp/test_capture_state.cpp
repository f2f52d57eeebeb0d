// SPDX-License-Identifier: Apache-2.0
// A captured trace's replay starts from the L2 its capture left (RunSpec::l2_start): the harness's
// memset flush leaves the L2 full of dirty lines, which the step's misses write back.
#include <gtest/gtest.h>

#include "sim/engine/simulation.hpp"
#include "traces/generators/emulate.hpp"

using namespace indexsim;

namespace {

trace::TraceData captured_read(uint64_t bytes, const char* flush_mode) {
  trace::CopyShape read_only;
  read_only.write = false;
  trace::TraceData td = trace::emulate_copy(bytes, read_only);
  td.metadata["source"] = "captured";
  td.metadata["timing"] = {{"l2_flush_MiB", 256}};
  if (flush_mode) td.metadata["timing"]["l2_flush_mode"] = flush_mode;
  return td;
}

sim::RunResult run(const trace::TraceData& td, const std::string& l2_start) {
  sim::RunSpec s;
  s.hardware = "h200";
  s.trace_data = &td;
  s.l2_start = l2_start;
  sim::RunResult r = sim::simulate(s);
  EXPECT_EQ(r.status, "ok") << r.error;
  return r;
}

double hbm_bytes_issued(const sim::RunResult& r) {
  return r.components.get("hbm", "write_bursts_issued") * 32;  // H200 HBM3E: BL8 x 32 bit = 32 B
}

}  // namespace

TEST(CaptureState, AMemsetFlushsDirtyLinesAreWrittenBackByTheStepsMisses) {
  // 16 MiB read, all misses, into an L2 (60 MiB) left full of a 256 MiB memset's dirty lines:
  // every line the stream allocates evicts one dirty line, and so does the copy that a read from
  // the far partition leaves in its own (l2.replicate_far_reads; half the lines). Formula: bytes
  // written back = 1.5 x bytes read (within 5 %), and none from a clean L2. (The H200 writes back
  // much less, 3.4-4.1 MB of 16.8: traces/captured/ncu/ncu_l2_policy_sizes.csv; not modelled.)
  const uint64_t bytes = uint64_t(16) << 20;
  const trace::TraceData td = captured_read(bytes, nullptr);  // no mode recorded: a memset
  const sim::RunResult dirty = run(td, "capture"), clean = run(td, "clean");
  EXPECT_NEAR(hbm_bytes_issued(dirty), 1.5 * double(bytes), 0.05 * 1.5 * double(bytes));
  EXPECT_EQ(hbm_bytes_issued(clean), 0.0);
  // The write-backs share the HBM with the reads: the step is slower.
  EXPECT_GT(dirty.step_ns, clean.step_ns);
  // The start is part of the run's configuration, hence of its key.
  EXPECT_EQ(dirty.config["l2_start"]["dirty_flush_MiB"], 256);
  EXPECT_FALSE(clean.config.contains("l2_start"));
  EXPECT_NE(dirty.key, clean.key);
}

TEST(CaptureState, AReadFlushOrAnEmulatedStepStartsClean) {
  const uint64_t bytes = uint64_t(4) << 20;
  const trace::TraceData read_flush = captured_read(bytes, "read");
  const sim::RunResult a = run(read_flush, "capture"), b = run(read_flush, "clean");
  EXPECT_EQ(a.step_ns, b.step_ns);
  EXPECT_EQ(a.key, b.key);
  trace::CopyShape read_only;
  read_only.write = false;
  const trace::TraceData emulated = trace::emulate_copy(bytes, read_only);  // source: emulated
  EXPECT_EQ(hbm_bytes_issued(run(emulated, "capture")), 0.0);
}

TEST(CaptureState, AnUnknownStartIsRefusedByName) {
  const trace::TraceData td = captured_read(uint64_t(1) << 20, nullptr);
  sim::RunSpec s;
  s.hardware = "h200";
  s.trace_data = &td;
  s.l2_start = "warm";
  try {
    sim::simulate(s);
    FAIL() << "l2_start 'warm' was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'warm'"), std::string::npos) << e.what();
  }
}

TEST(CaptureState, ACorruptFlushIsRefusedByName) {
  const std::pair<const char*, nlohmann::json> cases[] = {
      {"l2_flush_MiB", "lots"}, {"l2_flush_MiB", -1}, {"l2_flush_MiB", uint64_t(1) << 40},
      {"l2_flush_mode", "memset"}, {"l2_flush_mode", 1}};
  for (const auto& [key, bad] : cases) {
    trace::TraceData td = captured_read(uint64_t(1) << 20, nullptr);
    td.metadata["timing"][key] = bad;
    sim::RunSpec s;
    s.hardware = "h200";
    s.trace_data = &td;
    try {
      sim::simulate(s);
      FAIL() << key << " " << bad.dump() << " was accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(std::string("timing.") + key), std::string::npos) << e.what();
    }
  }
}
