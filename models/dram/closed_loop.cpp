// SPDX-License-Identifier: Apache-2.0
#include "models/dram/closed_loop.hpp"

#include <random>
#include <stdexcept>
#include <vector>

namespace indexsim::model::dram {

ClosedLoopResult run_closed_loop(MemoryDevice& dev, const ClosedLoopSpec& spec) {
  const uint64_t cap = dev.capacity_bytes() / spec.bytes * spec.bytes;
  const uint64_t half = cap / 2 / spec.bytes * spec.bytes;
  std::mt19937_64 rng(spec.seed);
  uint64_t read_cursor = 0, write_cursor = half;
  const uint64_t share = cap / spec.streams / spec.bytes * spec.bytes;
  std::vector<uint64_t> cursors(spec.streams);
  for (uint32_t s = 0; s < spec.streams; ++s) cursors[s] = s * share;
  uint64_t issued = 0, completed = 0, in_flight = 0;
  ClosedLoopResult r;
  Tick now = 0;
  std::vector<MemCompletion> done;

  auto make = [&](uint64_t n) {
    MemRequest q;
    q.id = n;
    q.bytes = spec.bytes;
    switch (spec.pattern) {
      case Pattern::kStream: {
        const auto s = static_cast<uint32_t>(n % spec.streams);
        q.addr = cursors[s];
        cursors[s] = cursors[s] + spec.bytes >= (s + 1) * share ? s * share : cursors[s] + spec.bytes;
        break;
      }
      case Pattern::kRandom:
        q.addr = rng() % (cap / spec.bytes) * spec.bytes;
        break;
      case Pattern::kMix:
        q.write = n % spec.mix_period >= spec.mix_period - spec.mix_writes;
        if (q.write) {
          q.addr = write_cursor;
          write_cursor = write_cursor + spec.bytes >= cap ? half : write_cursor + spec.bytes;
        } else {
          q.addr = read_cursor;
          read_cursor = (read_cursor + spec.bytes) % half;
        }
        break;
    }
    return q;
  };

  // A refused request waits aside while later ones proceed, as a GPU's L2 keeps sending to other
  // channels while one channel's queue is full: no head-of-line blocking across channels.
  std::vector<MemRequest> parked, still;
  SteadyWindow steady(spec.requests);
  while (completed < spec.requests) {
    if (!parked.empty()) {
      still.clear();
      for (const MemRequest& q : parked)
        if (!dev.try_enqueue(q, now)) still.push_back(q);
      parked.swap(still);
    }
    while (in_flight < spec.outstanding && issued < spec.requests) {
      const MemRequest q = make(issued++);
      ++in_flight;
      if (!dev.try_enqueue(q, now)) parked.push_back(q);
    }
    const Tick t = parked.empty() ? dev.next_event() : dev.next_retry();
    if (t == kNever) throw std::logic_error("closed loop: device idle with requests in flight");
    now = t;
    dev.advance(now, done);
    for (const MemCompletion& c : done) {
      --in_flight;
      ++completed;
      steady.on_completion(completed, c.done);
    }
    done.clear();
  }
  r.requests = completed;
  r.bytes = completed * spec.bytes;
  r.elapsed_ps = now;
  r.steady_bytes = steady.requests() * spec.bytes;
  r.steady_ps = steady.span_ps();
  return r;
}

}  // namespace indexsim::model::dram
