// SPDX-License-Identifier: Apache-2.0
// A closed-loop traffic driver for a MemoryDevice, used by the DRAM tests and benchmark: it keeps
// `outstanding` requests in flight, issues the next one as soon as one completes (or the queue has
// room again), and jumps from one device event to the next. No SystemC, no idle steps.
#pragma once

#include <cstdint>

#include "models/common/memory_device.hpp"

namespace indexsim::model::dram {

enum class Pattern { kStream, kRandom, kMix };

struct ClosedLoopSpec {
  Pattern pattern = Pattern::kStream;
  uint32_t bytes = 64;            // per request
  uint32_t outstanding = 4096;
  uint64_t requests = 100000;
  uint64_t seed = 1;
  // kStream: this many sequential streams, each over its own equal share of the device, taken in
  // turn (a GPU streams one region per SM or CTA); 1 is a single global stream.
  uint32_t streams = 1;
  // kMix: out of every `mix_period` requests the last `mix_writes` are writes (2 reads : 1 write
  // by default); reads stream from the bottom half of the device, writes from the top half.
  uint32_t mix_period = 3, mix_writes = 1;
};

struct ClosedLoopResult {
  uint64_t requests = 0;
  uint64_t bytes = 0;
  Tick elapsed_ps = 0;
  // Sustained rate: bytes completed over the model::SteadyWindow (completions 10 % to 90 %).
  uint64_t steady_bytes = 0;
  Tick steady_ps = 0;
  double bandwidth_GBps() const { return elapsed_ps ? double(bytes) / double(elapsed_ps) * 1000.0 : 0.0; }
  double steady_bandwidth_GBps() const {
    return steady_ps ? double(steady_bytes) / double(steady_ps) * 1000.0 : 0.0;
  }
};

ClosedLoopResult run_closed_loop(MemoryDevice& dev, const ClosedLoopSpec& spec);

}  // namespace indexsim::model::dram
