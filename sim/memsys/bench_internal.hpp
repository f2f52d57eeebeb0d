// SPDX-License-Identifier: Apache-2.0
// What the synthetic memory benchmark's two engines share (sim/memsys/bench.cpp, the native loop;
// bench_sc.cpp, the SystemC one): the address stream, the latency histogram and the figures made
// once the last request has completed. Internal to sim/memsys.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <unordered_map>
#include <utility>
#include <vector>

#include "models/common/time.hpp"
#include "sim/memsys/bench.hpp"

namespace indexsim::sim::bench_detail {

using model::Tick;

// Latency figures from a histogram of exact latencies: a run of any length holds one entry per
// distinct latency (a few thousand clock multiples), not one per request.
// Exact latencies (ps), counted: a flat array below 256 ns, where nearly all of them fall (a hash
// lookup per completion was a twentieth of a streaming bench), a map above.
class LatencyHistogram {
 public:
  static constexpr Tick kDense = Tick(1) << 18;
  LatencyHistogram() : dense_(kDense, 0) {}
  uint64_t& operator[](Tick latency) { return latency < kDense ? dense_[latency] : sparse_[latency]; }
  std::vector<std::pair<Tick, uint64_t>> sorted() const {
    std::vector<std::pair<Tick, uint64_t>> h;
    for (Tick l = 0; l < kDense; ++l)
      if (dense_[l] != 0) h.emplace_back(l, dense_[l]);
    std::vector<std::pair<Tick, uint64_t>> tail(sparse_.begin(), sparse_.end());
    std::sort(tail.begin(), tail.end());
    h.insert(h.end(), tail.begin(), tail.end());
    return h;
  }

 private:
  std::vector<uint64_t> dense_;
  std::unordered_map<Tick, uint64_t> sparse_;
};


void fill_latency(BenchResult& r, const LatencyHistogram& hist);

// The pattern's requests in issue order: the same addresses whichever engine issues them.
class PatternRequests {
 public:
  explicit PatternRequests(const BenchSpec& s);  // std::invalid_argument on an empty footprint or slot
  model::MemRequest next(uint64_t id, uint32_t source);

 private:
  BenchSpec s_;
  uint64_t units_ = 0, unit_ = 0, rng_ = 0;
};

// The spec a pattern runs with (pointer-chase: one slot).
BenchSpec pattern_spec(const BenchSpec& s);

// What a pattern's completions add up to, whichever engine delivers them.
struct Tally {
  Tally(uint64_t requests, Tick start_ps) : steady(requests), last(start_ps) {}
  // A request accepted at `issued` completed at `done`; a posted write's acceptance is no latency.
  void completed_one(Tick issued, Tick done, bool write) {
    if (!write) ++lat[done - issued];
    last = std::max(last, done);
    ++completed;
    steady.on_completion(completed, done);
  }
  LatencyHistogram lat;
  model::SteadyWindow steady;
  uint64_t completed = 0;
  Tick last;
};

// Bytes, reads, the steady bandwidth and what finish() adds: the device run dry, times, latencies,
// the device's statistics.
void finish_pattern(BenchResult& r, model::MemoryDevice& dev, const BenchSpec& s, const Tally& t,
                    std::chrono::steady_clock::time_point wall0);

}  // namespace indexsim::sim::bench_detail
