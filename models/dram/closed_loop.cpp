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
  uint64_t issued = 0, completed = 0, in_flight = 0;
  ClosedLoopResult r;
  Tick now = 0;
  std::vector<MemCompletion> done;
  MemRequest pending;
  bool have_pending = false;

  auto make = [&](uint64_t n) {
    MemRequest q;
    q.id = n;
    q.bytes = spec.bytes;
    switch (spec.pattern) {
      case Pattern::kStream:
        q.addr = read_cursor;
        read_cursor = (read_cursor + spec.bytes) % cap;
        break;
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

  while (completed < spec.requests) {
    while (in_flight < spec.outstanding && (have_pending || issued < spec.requests)) {
      if (!have_pending) {
        pending = make(issued++);
        have_pending = true;
      }
      if (!dev.try_enqueue(pending, now)) break;   // back-pressure: retry after the next event
      have_pending = false;
      ++in_flight;
    }
    const Tick t = dev.next_event();
    if (t == kNever) throw std::logic_error("closed loop: device idle with requests in flight");
    now = t;
    dev.advance(now, done);
    for (const MemCompletion& c : done) {
      (void)c;
      --in_flight;
      ++completed;
    }
    done.clear();
  }
  r.requests = completed;
  r.bytes = completed * spec.bytes;
  r.elapsed_ps = now;
  return r;
}

}  // namespace indexsim::model::dram
