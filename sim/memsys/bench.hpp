// SPDX-License-Identifier: Apache-2.0
// A closed-loop memory benchmark driven straight on a timing core, no SystemC event per request:
// requesters x outstanding slots; a slot issues its next request when its previous one completes;
// time jumps to the device's next event. That is what lets a core replay millions of requests
// per wall second. Pointer-chase is one slot: each address is known only when the last returns.
//
// run_trace_bench replays a request stream (a DRAMsim3, Ramulator or DRAMSys trace, sim/memtrace)
// instead of a synthetic pattern, in one of two modes:
//  - timed: each request is offered at its time stamp, in trace order; a request the memory refuses
//    waits (and so do the ones behind it) until the memory accepts it, as the trace front ends of
//    DRAMsim3 and DRAMSys do. Nothing else bounds the requests in flight.
//  - back-to-back: time stamps are ignored; requesters x outstanding slots issue the stream in
//    order as fast as the memory accepts, like the synthetic patterns.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "models/common/memory_device.hpp"

namespace indexsim::sim {

enum class BenchPattern { Stream, Random, Mix, PointerChase };
BenchPattern parse_bench_pattern(const std::string& s);  // std::invalid_argument naming the choices
const char* to_string(BenchPattern p);

struct BenchSpec {
  BenchPattern pattern = BenchPattern::Stream;
  uint64_t requests = 0;
  uint32_t requesters = 1;
  uint32_t outstanding = 1;
  uint32_t bytes = 64;
  uint64_t seed = 1;
  uint64_t base = 0;             // first address of the footprint (a region base)
  uint64_t footprint_bytes = 0;  // addresses lie in [base, base + footprint)
  double write_fraction = 0;     // share of writes, drawn per request (every pattern but the chase)
  model::Tick start_ps = 0;      // a second run on the same device starts where the first ended
};

struct BenchResult {
  uint64_t requests = 0, bytes = 0;
  model::Tick sim_ps = 0;        // first issue to last completion
  model::Tick end_ps = 0;        // time of the last completion
  double wall_s = 0;
  double bandwidth_GBps = 0;
  // Synthetic patterns: bytes completed over the model::SteadyWindow (completions 10 % to 90 %);
  // the fill and the drain weigh on bandwidth_GBps in a short run, not on this.
  double steady_bandwidth_GBps = 0;
  double latency_mean_ns = 0, latency_p50_ns = 0, latency_p99_ns = 0;
  model::StatSink stats;         // the device's report after the run
  uint64_t reads = 0, writes = 0;  // the latency figures are over the reads (a posted write has none)
  double requests_per_wall_s() const { return wall_s > 0 ? requests / wall_s : 0; }
};

BenchResult run_memory_bench(model::MemoryDevice& dev, const BenchSpec& spec);

struct TimedRequest {
  uint64_t addr = 0;
  uint32_t bytes = 0;
  bool write = false;
  model::Tick at_ps = 0;  // offered at start_ps + at_ps in timed mode
};

// Yields a trace's requests one at a time, so a replay holds none of the file.
class RequestSource {
 public:
  virtual ~RequestSource() = default;
  virtual bool next(TimedRequest& out) = 0;  // false at the end
};

// Requests from a vector: a trace built in memory (tests, scripts).
class VectorSource : public RequestSource {
 public:
  explicit VectorSource(std::vector<TimedRequest> v) : v_(std::move(v)) {}
  bool next(TimedRequest& out) override {
    if (i_ >= v_.size()) return false;
    out = v_[i_++];
    return true;
  }

 private:
  std::vector<TimedRequest> v_;
  size_t i_ = 0;
};

struct TraceReplaySpec {
  bool back_to_back = false;
  uint32_t requesters = 1;       // back-to-back: slots = requesters x outstanding
  uint32_t outstanding = 1;
  uint64_t base = 0;             // added to every trace address (a region base)
  model::Tick start_ps = 0;      // time 0 of the trace
};

// sim_ps runs from start_ps (the trace's time 0) to the last completion; latency is from the
// memory accepting a read to its last byte, and the percentiles are over reads only (writes are
// posted: they complete when accepted). Memory is bounded by the requests in flight and the
// distinct latencies seen, whatever the trace's length.
BenchResult run_trace_bench(model::MemoryDevice& dev, RequestSource& src, const TraceReplaySpec& spec);

}  // namespace indexsim::sim
