// SPDX-License-Identifier: Apache-2.0
// The replay's timeline as Chrome/Perfetto trace-event JSON (load it in ui.perfetto.dev or
// chrome://tracing):
//   - one named track per stream ("stream 1: index_load, ...") with its kernels;
//   - one track per group of 16 processor units with the span of each kernel's CTAs on them; a
//     kernel that took an identical earlier kernel's figures (reused) is drawn on every group for
//     its duration, and a sampled kernel's extrapolated tail after its last simulated CTA, each
//     marked as such;
//   - counter tracks over time, sampled from the memory system's cumulative statistics: the
//     bandwidth of every unit that reports bytes_read and bytes_written (HBM, the CXL pool's DRAM,
//     HBF: bytes of the requests it accepted, so a queue filling shows above the peak for an
//     interval), the hit rate of every unit that reports read_hits/read_misses or hits/misses (L2, an
//     SRAM cache), and the processor's occupancy (the share of units with a CTA resident). They
//     show the traffic the simulation issued: a reused kernel issues none;
//   - flows (arrows) for the dependences between kernels on different streams.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "models/common/stats.hpp"
#include "models/common/time.hpp"
#include "sim/engine/run_result.hpp"

namespace indexsim::sim {

class Timeline {
 public:
  // `path` empty: records nothing. Each processor is (what its units are called, e.g. "SM"; how many);
  // the first one's occupancy is drawn as a counter.
  Timeline(std::string path, const std::vector<std::pair<std::string, uint32_t>>& processors);
  bool on() const { return !path_.empty(); }
  // A CTA of kernel `kernel` (index into the results written later) ran on `unit` of processor
  // `proc` from start to end.
  void cta(uint32_t kernel, uint32_t proc, uint32_t unit, model::Tick start, model::Tick end);
  // Whether a counter sample is due at `now` (samples are at least an interval apart; the interval
  // doubles whenever kMaxSamples would be exceeded, so a long step keeps a bounded file).
  bool sample_due(model::Tick now) const { return on() && (samples_.empty() || now >= samples_.back().t + interval_); }
  // The memory system's cumulative statistics and the processor's resident time at `now`.
  void sample(model::Tick now, const model::StatSink& stats, model::Tick resident_ps);
  // Writes the file; std::runtime_error naming it when it cannot be written. `edges`: dependences
  // (producer, consumer) as indices into `kernels`.
  void write(const std::vector<KernelResult>& kernels, const std::vector<std::pair<uint32_t, uint32_t>>& edges) const;

  static constexpr size_t kMaxSamples = 4096;

 private:
  struct Sample {
    model::Tick t;
    model::Tick resident_ps;
    std::map<std::string, double> values;  // "unit/statistic" -> cumulative value
  };
  static constexpr uint32_t kGroup = 16;
  struct Proc {
    std::string unit_name;
    uint32_t units, first_group;
  };
  std::string path_;
  std::vector<Proc> procs_;
  std::map<std::pair<uint32_t, uint32_t>, std::pair<model::Tick, model::Tick>> spans_;  // (kernel, group) -> first start, last end
  std::vector<Sample> samples_;
  model::Tick interval_ = 1'000'000;  // 1 µs to start with
};

}  // namespace indexsim::sim
