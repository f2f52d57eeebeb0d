// SPDX-License-Identifier: Apache-2.0
// A closed-loop memory benchmark driven straight on a timing core, no SystemC event per request:
// requesters x outstanding slots; a slot issues its next request when its previous one completes;
// time jumps to the device's next event. That is what lets a core replay millions of requests
// per wall second. Pointer-chase is one slot: each address is known only when the last returns.
#pragma once

#include <string>
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
  double write_fraction = 0;     // mix: share of writes
  model::Tick start_ps = 0;      // a second run on the same device starts where the first ended
};

struct BenchResult {
  uint64_t requests = 0, bytes = 0;
  model::Tick sim_ps = 0;        // first issue to last completion
  model::Tick end_ps = 0;        // time of the last completion
  double wall_s = 0;
  double bandwidth_GBps = 0;
  double latency_mean_ns = 0, latency_p50_ns = 0, latency_p99_ns = 0;
  model::StatSink stats;         // the device's report after the run
  double requests_per_wall_s() const { return wall_s > 0 ? requests / wall_s : 0; }
};

BenchResult run_memory_bench(model::MemoryDevice& dev, const BenchSpec& spec);

}  // namespace indexsim::sim
