// SPDX-License-Identifier: Apache-2.0
// The shipped GPU configs against each other: a memory-bound kernel runs faster on every GPU with
// more HBM bandwidth, and never beats that bandwidth.
#include <gtest/gtest.h>

#include "sim/engine/simulation.hpp"
#include "traces/generators/emulate.hpp"

using namespace indexsim;

TEST(GpuPresets, AMemoryBoundCopyOrdersByHbmBandwidthAndStaysUnderIt) {
  // 256 MiB read + 256 MiB written: twice the largest L2 (B200, 126 MiB), so HBM serves it.
  // Formula: time >= 2 x bytes / peak HBM bandwidth (the kernel's roofline); and for GPUs of
  // increasing peak (A100 < H100 < H200 < B200) the copy time strictly falls.
  const uint64_t bytes = uint64_t(256) << 20;
  const trace::TraceData td = trace::emulate_copy(bytes);
  double previous_ns = 0;
  for (const char* gpu : {"a100", "h100", "h200", "b200"}) {
    sim::RunSpec s;
    s.hardware = gpu;
    s.fast = true;
    s.trace_data = &td;
    const sim::RunResult r = sim::simulate(s);
    ASSERT_EQ(r.status, "ok") << gpu << ": " << r.error;
    ASSERT_EQ(r.kernels.size(), 1u);
    const auto& k = r.kernels[0];
    const double ns = k.end_ns - k.start_ns;
    EXPECT_GE(ns, k.roofline_ns) << gpu;
    // A streaming copy reaches most of the bus (the measured H200 copy is 90 % of its peak).
    EXPECT_LE(ns, k.roofline_ns / 0.75) << gpu;
    if (previous_ns > 0) {
      EXPECT_LT(ns, previous_ns) << gpu << " is no faster than the GPU before it";
    }
    previous_ns = ns;
  }
}

TEST(GpuPresets, AReadOnlyStreamStaysUnderItsRooflineAndKeepsTheDramBusBusierThanACopy) {
  // 256 MiB read, nothing written. Formula: time >= bytes / peak HBM bandwidth; and the share of its
  // time the DRAM data bus carries data (hbm bus_utilisation) is at least the copy's, which also
  // pays write drains and read/write turnarounds. (Not the copy's bytes over its kernel time: up to
  // the L2's capacity of its writes is still dirty in the L2 when the kernel ends.)
  const uint64_t bytes = uint64_t(256) << 20;
  trace::CopyShape read_only;
  read_only.write = false;
  const trace::TraceData reads = trace::emulate_copy(bytes, read_only), copy = trace::emulate_copy(bytes);
  auto run = [](const trace::TraceData& td) {
    sim::RunSpec s;
    s.hardware = "h200";
    s.fast = true;
    s.trace_data = &td;
    const sim::RunResult r = sim::simulate(s);
    EXPECT_EQ(r.status, "ok") << r.error;
    return r;
  };
  const sim::RunResult r = run(reads), c = run(copy);
  const auto& k = r.kernels.at(0);
  EXPECT_LE(k.roofline_ns / (k.end_ns - k.start_ns), 1.0);
  const double read_bus = r.components.get("hbm", "bus_utilisation"), copy_bus = c.components.get("hbm", "bus_utilisation");
  EXPECT_GT(copy_bus, 0.5);
  EXPECT_GE(read_bus, copy_bus);
}
