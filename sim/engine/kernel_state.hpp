// SPDX-License-Identifier: Apache-2.0
// What the replay engine knows of one kernel of the DAG while it runs: its dependences, its CTA
// counts, its traffic so far, its roofline, and what segment reuse and sampling need. Shared by the
// engine's pieces (replay.cpp, segment_reuse.cpp); the processor keeps its own state.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "models/common/time.hpp"
#include "traces/records.hpp"

namespace indexsim::sim {

struct SegmentMember;

// A kernel's gathers in lines of the L2: summed over their rows, and distinct over the kernel
// (both 0 without gathers). Segment reuse matches them within a tolerance.
struct GatherSummary {
  double row_lines = 0, distinct_lines = 0;
};

struct KernelState {
  const trace::KernelRecord* rec = nullptr;
  std::vector<const trace::AccessRecord*> accesses;
  uint32_t proc = 0;              // index into the replay's processors
  uint64_t mm_k = 0, mm_n = 0;    // Workload::Kernel's
  std::vector<uint32_t> dependents;
  uint32_t deps_left = 0;
  model::Tick deps_done = 0;      // when the last dependence finished
  uint64_t ctas_done = 0;
  uint64_t ctas_simulated = 0;    // all of them, or the sampled waves in the fast mode
  model::Tick start = model::kNever, end = 0;
  // Fast mode: contiguous runs go out as chunks only in a kernel that fills a wave. One that does
  // not is latency-bound: a chunk frees its window entries when its slowest line returns, which
  // slows a lone CTA's stream by ~20 %, so its requests stay line-sized.
  bool coarse = false;
  // Sampled kernels: when each whole number of waves' worth of CTAs had ended, while the machine
  // was still full (before the last sampled CTA started); whether the sample may stop once those
  // marks are steady (sampling.hpp), and the CTAs it then never started, warmed when the others end.
  std::vector<model::Tick> wave_done;
  bool sampled = false;           // more waves than WaveSampling::max_waves: sampled
  uint64_t sample_first = 0;      // the sample's first CTA in the grid (0: whole, or a sample that starts cold)
  // WaveSampling::gemm_waves: a GEMM that replays its last full waves and its partial one from a
  // cold start; each full wave before them takes a sampled wave's time (sampling.hpp). The only
  // kernel that skips CTAs without wave sampling.
  bool gemm_sample() const { return !sampled && sample_first > 0; }
  bool may_stop = false;
  // WaveSampling::math_bound_marks (fast mode): whether its CTAs are watched (a double-buffered
  // kernel), whether every one that ended after its first wave mark was math-bound, and whether it
  // may stop at those marks (it has waves beyond them).
  bool math_watched = false;
  bool math_bound = true;
  bool may_stop_math = false;
  uint64_t unstarted = 0;
  // Fast mode, a kernel not wave-sampled: the share of its lines simulated, the rest projected at
  // its steady rate by the processor (WaveSampling::line_marks); 1: every line.
  double line_share = 1;
  int per_unit = 0;
  uint64_t wave = 0;              // CTAs of one full wave: units x per_unit
  uint64_t bytes_read = 0, bytes_written = 0, requests = 0;
  double mem_roofline_ns = 0, flop_roofline_ns = 0;   // compulsory bytes / peak, FLOPs / peak
  double roofline_ns() const { return std::max(mem_roofline_ns, flop_roofline_ns); }
  // The grid in full waves, and the fastest a wave can go (its share of the roofline), for sampling.
  double waves() const { return double(rec->cta_count()) / double(wave); }
  // Where a math-bound kernel ends, in waves: each unit runs ceil(grid / units) CTAs' math, one
  // after another (a 31.03-wave grid of one CTA per SM ends after 32 CTA times, not 31.03).
  double whole_waves() const {
    const uint64_t units = wave / uint64_t(per_unit);
    return double((rec->cta_count() + units - 1) / units) / double(per_unit);
  }
  // Its marks show a math-bound kernel: then its end is read on the line through the marks after
  // the first (the first wave starts on cold caches; the math paces the rest), at whole waves.
  bool math_paced() const { return math_watched && math_bound && wave_done.size() >= 3; }
  double roofline_ps_per_wave() const { return roofline_ns() * 1e3 / waves(); }
  // Segment reuse (ReplayOptions::reuse).
  std::string signature;          // everything that decides the kernel's timing, except addresses
  GatherSummary gather;           // its gathers' lines (segment_reuse.cpp), set with the signature
  model::Tick ready_at = 0;
  bool reused = false;
  // Host time the simulator spent on it: from its launch (warming included) to its last simulated
  // CTA's end. Kernels that overlap in simulated time share host time, so these do not add up.
  std::chrono::steady_clock::time_point wall_start;
  double wall_s = 0;
  const SegmentMember* stand_in = nullptr;   // takes this member's figures when it becomes ready
};

}  // namespace indexsim::sim
