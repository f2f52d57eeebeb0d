// SPDX-License-Identifier: Apache-2.0
#include "sim/memsys/bench.hpp"

#include <algorithm>
#include <chrono>
#include <deque>
#include <stdexcept>

#include "models/noc/port.hpp"

namespace indexsim::sim {

using model::kNever;
using model::Tick;

BenchPattern parse_bench_pattern(const std::string& s) {
  if (s == "stream") return BenchPattern::Stream;
  if (s == "random") return BenchPattern::Random;
  if (s == "mix") return BenchPattern::Mix;
  if (s == "pointer-chase") return BenchPattern::PointerChase;
  throw std::invalid_argument("--pattern '" + s + "': must be one of {stream, random, mix, pointer-chase}");
}

const char* to_string(BenchPattern p) {
  switch (p) {
    case BenchPattern::Stream: return "stream";
    case BenchPattern::Random: return "random";
    case BenchPattern::Mix: return "mix";
    case BenchPattern::PointerChase: return "pointer-chase";
  }
  return "?";
}

BenchResult run_memory_bench(model::MemoryDevice& dev, const BenchSpec& s0) {
  BenchSpec s = s0;
  if (s.pattern == BenchPattern::PointerChase) s.requesters = s.outstanding = 1;
  if (s.bytes == 0 || s.requesters == 0 || s.outstanding == 0) throw std::invalid_argument("bytes, requesters and outstanding must be > 0");
  const uint64_t units = s.footprint_bytes / s.bytes;
  if (units == 0) throw std::invalid_argument("footprint is smaller than one request");

  const uint32_t slots = s.requesters * s.outstanding;
  std::deque<uint32_t> ready;
  for (uint32_t i = 0; i < slots; ++i) ready.push_back(i);  // slot i belongs to requester i % requesters
  std::vector<Tick> issued_at(slots, 0);
  std::vector<Tick> lat;
  lat.reserve(s.requests);
  std::vector<model::MemCompletion> done;
  uint64_t rng = s.seed;
  auto next_rand = [&rng] { return model::mix64(rng += 0x9e3779b97f4a7c15ull); };

  BenchResult r;
  const auto wall0 = std::chrono::steady_clock::now();
  Tick now = s.start_ps, last = s.start_ps;
  uint64_t issued = 0, completed = 0;
  bool have_pending = false;
  model::MemRequest req;
  while (completed < s.requests) {
    while (issued < s.requests && !ready.empty()) {
      if (!have_pending) {  // a refused request is retried unchanged, so the address stream is fixed
        const uint32_t slot = ready.front();
        req.id = issued * slots + slot;
        req.bytes = s.bytes;
        req.source = slot % s.requesters;
        req.write = false;
        switch (s.pattern) {
          case BenchPattern::Stream: req.addr = (issued % units) * s.bytes; break;
          case BenchPattern::Mix:
            req.addr = (issued % units) * s.bytes;
            req.write = static_cast<double>(next_rand() >> 11) * 0x1.0p-53 < s.write_fraction;
            break;
          case BenchPattern::Random:
          case BenchPattern::PointerChase: req.addr = (next_rand() % units) * s.bytes; break;
        }
        req.addr += s.base;
        have_pending = true;
      }
      if (!dev.try_enqueue(req, now)) break;
      have_pending = false;
      issued_at[ready.front()] = now;
      ready.pop_front();
      ++issued;
    }
    const Tick t = dev.next_event();
    if (t == kNever) throw std::logic_error("device idle while " + std::to_string(issued - completed) + " requests are outstanding");
    now = std::max(now, t);
    dev.advance(now, done);
    for (const auto& c : done) {
      const uint32_t slot = static_cast<uint32_t>(c.id % slots);
      lat.push_back(c.done - issued_at[slot]);
      ready.push_back(slot);
      last = std::max(last, c.done);
      ++completed;
    }
    done.clear();
  }
  r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  r.requests = completed;
  r.bytes = completed * s.bytes;
  r.end_ps = last;
  r.sim_ps = last - s.start_ps;
  r.bandwidth_GBps = r.sim_ps ? static_cast<double>(r.bytes) / (static_cast<double>(r.sim_ps) / 1000.0) : 0;  // bytes/ns
  if (!lat.empty()) {
    double sum = 0;
    for (Tick l : lat) sum += static_cast<double>(l);
    r.latency_mean_ns = sum / lat.size() / 1000.0;
    auto pct = [&lat](double q) {
      const size_t k = std::min(lat.size() - 1, static_cast<size_t>(q * (lat.size() - 1) + 0.5));
      std::nth_element(lat.begin(), lat.begin() + k, lat.end());
      return static_cast<double>(lat[k]) / 1000.0;
    };
    r.latency_p50_ns = pct(0.50);
    r.latency_p99_ns = pct(0.99);
  }
  dev.report(r.stats, "");
  return r;
}

}  // namespace indexsim::sim
