// SPDX-License-Identifier: Apache-2.0
// One run, end to end: configs → workload DAG (emulated or from a trace) → technique transforms →
// placement → replay on the hardware models → RunResult. Everything a run needs is in RunSpec, and
// everything it read is in RunResult::config, whose hash is the run key.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "sim/core/config_load.hpp"
#include "sim/engine/run_result.hpp"
#include "sim/engine/segment_reuse.hpp"
#include "traces/generators/emulate.hpp"

namespace indexsim::sim {

class ScBindings;  // sim/engine/systemc.hpp (SystemC's headers stay out of what includes this one)

struct RunSpec {
  std::string hardware;                 // name (configs/hardware/NAME.yaml) or path
  std::string workload;                 // name or path; unused when `trace` is given
  std::string techniques = "baseline";  // name (configs/techniques/NAME.yaml) or path
  std::string trace;                    // replay this .itr file instead of emulating
  const trace::TraceData* trace_data = nullptr;  // or replay this in-memory trace (benchmarks)
  // or replay the trace this builds for the loaded processor's launch limits (kernel benchmarks:
  // a library picks its launch shape from the device it runs on)
  std::function<trace::TraceData(const trace::LaunchLimits&)> build_trace;
  trace::StepParams step;
  std::vector<std::string> sets;        // "hardware.a.b=v", "workload.…", "techniques.…"
  bool fast = false;                    // coarse requests for contiguous runs
  bool reuse = true;                    // repeated segments of kernels are simulated once (both modes)
  bool warm_reuse = false;              // memos from a segment's second occurrence (ReplayOptions::warm_memos)
  // The step this many times in a row on one hardware state (caches, SRAM, DRAM carried over): the
  // result is the last one's, with steady-state hit rates; 1 is a step from cold caches.
  uint32_t steps = 1;
  // Work budget: a run whose kernels' accesses add up to more line requests than this is refused
  // before it starts, naming the figure (a CRC-valid trace can declare 2^32 CTAs of a terabyte
  // each). The detailed mode serves about a million lines a wall second, so 1e11 is about a day
  // and ten times a 1M-token decode step or prefill chunk; 0: no budget. Not part of the run key.
  double max_line_requests = 1e11;
  // Segment memos of an earlier run on the same hardware, looked up after the run's own; and, if
  // set, where the run leaves its own (a whole prefill's first chunk, for the others).
  std::shared_ptr<const SegmentLibrary> inherited_segments;
  std::shared_ptr<SegmentLibrary> kept_segments;
  // The key of the stored run whose memos inherited_segments holds, when they come from one (a
  // segment file): recorded in the configuration as `segments_from`, since the result depends on them.
  std::string segments_of;
  // "native" (the plain C++ loop) or "systemc" (sim/engine/systemc.hpp): with the project's own
  // units the same results, bit for bit. A SystemC run's configuration records `engine: systemc`.
  std::string engine = "native";
  // SystemC engine: binds the hardware's external regions (impl: tlm_target) to the caller's own
  // targets, during elaboration; modules made here belong to the run's SystemC context.
  std::function<void(ScBindings&)> bind;
  // The L2 state a captured trace's replay starts from. "capture": as the capture's timing loop
  // left it before each repetition (its metadata's timing.l2_flush_MiB, l2_flush_mode): a memset
  // flush (mode write, the only one before the mode was recorded) leaves the L2 full of the flush
  // buffer's dirty lines, which the step's misses write back (traces/captured/README.md measures
  // it); a read flush leaves clean lines, as good as empty. "clean": empty, whatever the capture
  // did. Emulated workloads always start clean.
  std::string l2_start = "capture";
  std::string timeline;                 // Perfetto JSON output path, empty = none
  std::function<void(double)> progress;
  // Stop once the step is built and placed and its work budget checked, before replaying it: what a
  // run refuses (a tensor that does not fit, a budget exceeded) it refuses in seconds.
  bool plan_only = false;
};

// Resolves every config without running (sweeps use it to find runs already done).
nlohmann::json resolve(const RunSpec& spec);
// What resolve() adds for RunSpec::segments_of: a sweep that learns a point's seed after resolving
// it records the seed here, so that the point's key is the one its run computes.
void record_segments_from(nlohmann::json& config, const std::string& run_key);
RunResult simulate(const RunSpec& spec);

}  // namespace indexsim::sim
