// SPDX-License-Identifier: Apache-2.0
// The trace replay engine: drives the kernels of a DAG over streams through a processor
// (models/common/processor.hpp), which runs their CTAs against the memory system.
//
// Event-driven in plain C++: the loop jumps to the earlier of its own next event (a kernel becoming
// ready, a sampled or reused kernel ending) and the processor's. Nothing ticks idle cycles. Its
// pieces: segment_reuse (repeated segments taken from memos), sampling (fast mode), roofline (lower
// bounds), timeline (Perfetto output).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "models/common/processor.hpp"
#include "sim/engine/run_result.hpp"
#include "sim/engine/segment_reuse.hpp"
#include "sim/workload/workload.hpp"
#include "traces/records.hpp"

namespace indexsim::sim {

struct ReplayInput {
  // The kernel DAG, as the techniques left it: live kernels run in its topological order, and
  // ReplayOutput::kernels follows that order.
  const Workload* workload = nullptr;
  std::vector<uint64_t> tensor_base;          // physical base address of each tensor id
  std::vector<uint32_t> tensor_region;        // region of each tensor id: an index into region_peak_GBps
  std::vector<double> region_peak_GBps;       // peak bandwidth of each region
  std::vector<uint64_t> tensor_bytes;         // footprint of each tensor: a kernel's compulsory traffic is at most this
  std::vector<uint8_t> tensor_tag;            // MemRequest::tag of each tensor's requests: 1 + its class (empty: none)
};

// The busy figures of one processor over the step (ReplayOutput::processors).
struct ProcessorBusy {
  std::string unit_name;
  uint32_t units = 0;
  double busy_fraction = 0;      // mean over units of the time a CTA (task) was resident
  double compute_fraction = 0;   // mean over units of compute-pipe busy time / step time
  uint32_t kernels = 0;          // kernels it ran
};

struct ReplayOptions {
  // Fast mode: coarse requests for contiguous runs, and long kernels sampled (sampling.hpp).
  bool fast = false;
  // Both modes: repeated segments take an earlier one's figures (segment_reuse.hpp); `false`
  // simulates every kernel (GLM-5 decode on the H200: the step moves by under 0.25 % at 32K, 128K
  // and 1M tokens).
  bool reuse = true;
  // Memos from a segment's second simulated occurrence (a warm one), not its first: component
  // counters and hit rates match a run without reuse, at one more simulated occurrence per kind.
  bool warm_memos = false;
  // Memos of an earlier replay on the same hardware, looked up after this one's own (must outlive
  // the replay); and whether ReplayOutput::segments gets this replay's.
  const SegmentLibrary* inherited_segments = nullptr;
  bool keep_segments = false;
  std::string timeline_path;         // Chrome/Perfetto trace-event JSON, empty = none
  // With a timeline: fills a sink with the memory system's cumulative statistics, for the
  // timeline's counter tracks (sampled every microsecond or so of simulated time).
  std::function<void(model::StatSink&)> sample_counters;
  // Fills a sink with the memory system's cumulative statistics, read whenever the machine is idle:
  // the counters of what is not simulated are derived from them (ReplayOutput::unsimulated).
  std::function<void(model::StatSink&)> counters;
  std::function<void(double fraction)> progress;  // called now and then with the share of CTAs done
  // The SystemC engine (sim/engine/systemc.hpp): suspends the replay's SystemC thread until time `t`
  // (model::kNever: until news) or until a unit outside the replay's calls has news (an external
  // target answered), and returns the time it woke. Empty: the native loop jumps to `t`.
  std::function<model::Tick(model::Tick t)> wait_until;
  // The replay starts at this time, its processors and memory carrying the state an earlier replay
  // left when it ended then (consecutive decode steps). The output's times are from it.
  model::Tick start_ps = 0;
};

struct ReplayOutput {
  double step_ns = 0;
  model::Tick end_ps = 0;            // when the last kernel ended (start_ps + the step)
  std::vector<KernelResult> kernels;
  uint64_t requests = 0;
  uint64_t bytes_read = 0, bytes_written = 0;
  double sm_busy_fraction = 0;       // mean over units of the time a CTA was resident
  double tensor_busy_fraction = 0;   // mean over units of compute-pipe busy time / step time
  std::vector<ProcessorBusy> processors;  // every processor, the GPU's first
  SegmentLibrary segments;           // with ReplayOptions::keep_segments: the memos this replay stored
  // With ReplayOptions::counters: the memory counters of the reused segments and the sampled-away
  // CTAs, to add to the simulated ones (model::StatSink::add_counters).
  std::vector<model::StatSink::Extra> unsimulated;
};

ReplayOutput replay(model::Processor& processor, const ReplayInput& in, const ReplayOptions& opt);
// Several processors over one memory system (each on its own port, models/common/memory_ports.hpp):
// a kernel runs on processors[Workload::Kernel::processor]; dependences cross them as any other.
// Segment memos hold every processor's busy time; a kernel's processor is part of its signature.
ReplayOutput replay(const std::vector<model::Processor*>& processors, const ReplayInput& in, const ReplayOptions& opt);

}  // namespace indexsim::sim
