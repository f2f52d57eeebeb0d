// SPDX-License-Identifier: Apache-2.0
// The trace replay engine: kernels of a DAG over streams, their CTAs dispatched to SMs under
// occupancy limits, each CTA's accesses issued to the memory system with a bounded window of
// outstanding requests per SM, compute on the Tensor Cores overlapped with loads where the kernel
// double-buffers.
//
// Event-driven in plain C++: the loop jumps to the earlier of its own next event (a CTA finishing,
// a kernel becoming ready) and the memory system's next event. Nothing ticks idle cycles.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "models/common/memory_device.hpp"
#include "models/sm/sm.hpp"
#include "models/tensorcore/tensor_core.hpp"
#include "sim/engine/run_result.hpp"
#include "traces/records.hpp"

namespace indexsim::sim {

struct ReplayInput {
  const std::vector<trace::KernelRecord>* kernels = nullptr;
  const std::vector<trace::AccessRecord>* accesses = nullptr;
  std::vector<uint64_t> tensor_base;          // physical base address of each tensor id
  std::vector<double> tensor_peak_GBps;       // peak bandwidth of the region each tensor lives in
  std::vector<std::string> tensor_region;     // region name of each tensor (for statistics)
  std::vector<uint64_t> tensor_bytes;         // footprint of each tensor: a kernel's compulsory traffic is at most this
};

struct ReplayOptions {
  // Fast mode: coarse requests for contiguous runs (SmParams::fast_chunk_bytes), and long kernels
  // sampled (their last waves simulated, the rest at the measured steady rate).
  bool fast = false;
  // Both modes. A segment runs from a moment the machine is idle (a kernel becomes ready with
  // nothing running, ready or about to be) to the next; a kernel that runs alone is a segment of
  // one, and kernels that overlap across streams (IndexShare's prefetch) share one. A segment that
  // repeats an earlier one (the same kernels, by signature: grid, resources, FLOPs, access patterns,
  // tensor regions, becoming ready at the same times) takes its kernels' durations, bytes and busy
  // time instead of being simulated: a decode step's 78 layers cost about two. What it leaves out
  // is the cache and DRAM state the earlier segment left behind. Every distinct segment is still
  // simulated in full, at line granularity in the detailed mode; `false` simulates every kernel
  // (GLM-5 decode on the H200: the step moves by under 0.25 % at 32K, 128K and 1M tokens).
  bool reuse = true;
  std::string timeline_path;         // Chrome/Perfetto trace-event JSON, empty = none
  std::function<void(double fraction)> progress;  // called now and then with the share of CTAs done
};

struct ReplayOutput {
  double step_ns = 0;
  std::vector<KernelResult> kernels;
  uint64_t requests = 0;
  uint64_t bytes_read = 0, bytes_written = 0;
  double sm_busy_fraction = 0;       // mean over SMs of the time a CTA was resident
  double tensor_busy_fraction = 0;   // mean over SMs of tensor-pipe busy time / step time
  std::vector<uint64_t> bytes_by_region_read;  // indexed like region_names
  std::vector<std::string> region_names;
};

ReplayOutput replay(const model::SmParams& sm, const model::TensorCore& tc, model::MemoryDevice& memory,
                    const ReplayInput& in, const ReplayOptions& opt);

// Fast mode: when a sampled kernel of `waves` waves ends. marks[i] is the time at which (i + 1)
// waves' worth of its sampled CTAs had ended, all while the machine was full; at least two. The
// least-squares line t = a + b x through the points (i + 1, marks[i]), its slope b floored at
// `min_ps_per_wave` (the kernel's roofline), at x = waves.
model::Tick extrapolate_sampled_end(const std::vector<model::Tick>& marks, double waves, double min_ps_per_wave);

}  // namespace indexsim::sim
