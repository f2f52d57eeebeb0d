// SPDX-License-Identifier: Apache-2.0
#include "sim/memsys/bench.hpp"

#include <algorithm>
#include <chrono>
#include <deque>
#include <limits>
#include <stdexcept>
#include <unordered_map>

#include "models/common/port.hpp"
#include "sim/memsys/bench_internal.hpp"

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

namespace bench_detail {

void fill_latency(BenchResult& r, const LatencyHistogram& hist) {
  const std::vector<std::pair<Tick, uint64_t>> h = hist.sorted();
  uint64_t n = 0;
  double sum = 0;
  for (const auto& [l, c] : h) {
    n += c;
    sum += static_cast<double>(l) * static_cast<double>(c);
  }
  if (n == 0) {   // nothing to average (a write-only run): n/a, not 0 ns
    r.latency_mean_ns = r.latency_p50_ns = r.latency_p99_ns = std::numeric_limits<double>::quiet_NaN();
    return;
  }
  r.latency_mean_ns = sum / static_cast<double>(n) / 1000.0;
  auto pct = [&](double q) {  // nearest rank
    const uint64_t k = std::min<uint64_t>(n - 1, static_cast<uint64_t>(q * static_cast<double>(n - 1) + 0.5));
    uint64_t seen = 0;
    for (const auto& [l, c] : h) {
      seen += c;
      if (seen > k) return static_cast<double>(l) / 1000.0;
    }
    return static_cast<double>(h.back().first) / 1000.0;
  };
  r.latency_p50_ns = pct(0.50);
  r.latency_p99_ns = pct(0.99);
}

namespace {
// What both runs report once the last request has completed.
void finish(BenchResult& r, model::MemoryDevice& dev, Tick start_ps, Tick last, uint64_t completed,
            const LatencyHistogram& lat, std::chrono::steady_clock::time_point wall0) {
  // Posted writes may still be queued: run the device dry, so that the run lasts until the last
  // write has reached the memory, not until it was accepted.
  std::vector<model::MemCompletion> rest;
  for (Tick t; (t = dev.next_event()) != kNever;) dev.advance(t, rest);
  last = std::max(last, dev.last_write_issued_ps());
  r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  r.requests = completed;
  r.end_ps = last;
  r.sim_ps = last - start_ps;
  r.bandwidth_GBps = r.sim_ps ? static_cast<double>(r.bytes) / (static_cast<double>(r.sim_ps) / 1000.0) : 0;  // bytes/ns
  fill_latency(r, lat);
  dev.report(r.stats, "");
}
}  // namespace

PatternRequests::PatternRequests(const BenchSpec& s) : s_(s), rng_(s.seed) {
  if (s.bytes == 0 || s.requesters == 0 || s.outstanding == 0) throw std::invalid_argument("bytes, requesters and outstanding must be > 0");
  units_ = s.footprint_bytes / s.bytes;
  if (units_ == 0) throw std::invalid_argument("footprint is smaller than one request");
}

model::MemRequest PatternRequests::next(uint64_t id, uint32_t source) {
  auto next_rand = [this] { return model::mix64(rng_ += 0x9e3779b97f4a7c15ull); };
  model::MemRequest req;
  req.id = id;
  req.bytes = s_.bytes;
  req.source = source;
  switch (s_.pattern) {
    case BenchPattern::Stream:
    case BenchPattern::Mix: req.addr = unit_ * s_.bytes; break;
    case BenchPattern::Random:
    case BenchPattern::PointerChase: req.addr = (next_rand() % units_) * s_.bytes; break;
  }
  // Every pattern but the chase (whose next address comes from its load) writes its share; a
  // draw only when there is a share, so that a read-only pattern's addresses stay as they were.
  req.write = s_.write_fraction > 0 && s_.pattern != BenchPattern::PointerChase &&
              static_cast<double>(next_rand() >> 11) * 0x1.0p-53 < s_.write_fraction;
  req.addr += s_.base;
  if (++unit_ == units_) unit_ = 0;
  return req;
}

void finish_pattern(BenchResult& r, model::MemoryDevice& dev, const BenchSpec& s, const Tally& t,
                    std::chrono::steady_clock::time_point wall0) {
  const model::SteadyWindow& steady = t.steady;
  r.bytes = t.completed * s.bytes;
  r.reads = t.completed - r.writes;
  // Posted writes complete when accepted, faster than the memory serves them: a window over
  // completions would count bytes still queued. With writes the steady figure is n/a.
  if (r.writes > 0)
    r.steady_bandwidth_GBps = std::numeric_limits<double>::quiet_NaN();
  else if (steady.lo > 0 && steady.span_ps() > 0)
    r.steady_bandwidth_GBps =
        static_cast<double>(steady.requests() * s.bytes) / (static_cast<double>(steady.span_ps()) / 1000.0);
  finish(r, dev, s.start_ps, t.last, t.completed, t.lat, wall0);
}

BenchSpec pattern_spec(const BenchSpec& s0) {
  BenchSpec s = s0;
  if (s.pattern == BenchPattern::PointerChase) s.requesters = s.outstanding = 1;
  return s;
}

}  // namespace bench_detail

using namespace bench_detail;

BenchResult run_memory_bench(model::MemoryDevice& dev, const BenchSpec& s0) {
  const BenchSpec s = pattern_spec(s0);
  PatternRequests gen(s);
  const uint32_t slots = s.requesters * s.outstanding;
  std::deque<uint32_t> ready;
  for (uint32_t i = 0; i < slots; ++i) ready.push_back(i);  // slot i belongs to requester i % requesters
  std::vector<Tick> issued_at(slots, 0);
  std::vector<uint8_t> is_write(slots, 0);
  Tally tally(s.requests, s.start_ps);
  std::vector<model::MemCompletion> done;

  BenchResult r;
  const auto wall0 = std::chrono::steady_clock::now();
  Tick now = s.start_ps;
  uint64_t issued = 0;
  bool have_pending = false;
  model::MemRequest req;
  while (tally.completed < s.requests) {
    while (issued < s.requests && !ready.empty()) {
      if (!have_pending) {  // a refused request is retried unchanged, so the address stream is fixed
        const uint32_t slot = ready.front();
        req = gen.next(issued * slots + slot, slot % s.requesters);
        have_pending = true;
      }
      if (!dev.try_enqueue(req, now)) break;
      have_pending = false;
      issued_at[ready.front()] = now;
      is_write[ready.front()] = req.write;
      r.writes += req.write;
      ready.pop_front();
      ++issued;
    }
    const Tick t = have_pending ? dev.next_retry() : dev.next_event();
    if (t == kNever)
      throw std::logic_error("device idle while " + std::to_string(issued - tally.completed) + " requests are outstanding");
    now = std::max(now, t);
    dev.advance(now, done);
    for (const auto& c : done) {
      const uint32_t slot = static_cast<uint32_t>(c.id % slots);
      tally.completed_one(issued_at[slot], c.done, is_write[slot]);
      ready.push_back(slot);
    }
    done.clear();
  }
  finish_pattern(r, dev, s, tally, wall0);
  return r;
}

BenchResult run_trace_bench(model::MemoryDevice& dev, RequestSource& src, const TraceReplaySpec& s) {
  if (s.back_to_back && (s.requesters == 0 || s.outstanding == 0))
    throw std::invalid_argument("requesters and outstanding must be > 0");
  const uint64_t cap = s.back_to_back ? uint64_t(s.requesters) * s.outstanding : UINT64_MAX;
  const uint32_t sources = std::max<uint32_t>(1, s.requesters);
  // A slot per request in flight, reused once it completes: the request id is its slot.
  std::vector<Tick> issued_at;
  std::vector<uint8_t> is_write;
  std::vector<uint32_t> free_slots;
  LatencyHistogram lat;
  std::vector<model::MemCompletion> done;

  BenchResult r;
  const auto wall0 = std::chrono::steady_clock::now();
  Tick now = s.start_ps, last = s.start_ps;
  uint64_t issued = 0, completed = 0;
  bool have = false, exhausted = false;
  TimedRequest cur;
  model::MemRequest req;
  while (true) {
    bool refused = false;
    while (true) {
      if (!have) {
        if (exhausted || !src.next(cur)) {
          exhausted = true;
          break;
        }
        if (cur.bytes == 0) throw std::invalid_argument("trace request " + std::to_string(issued) + " has 0 bytes");
        have = true;
      }
      if (!s.back_to_back && s.start_ps + cur.at_ps > now) break;
      if (issued - completed >= cap) break;
      uint32_t slot;
      if (free_slots.empty()) {
        slot = static_cast<uint32_t>(issued_at.size());
        issued_at.push_back(0);
        is_write.push_back(0);
      } else {
        slot = free_slots.back();
        free_slots.pop_back();
      }
      req.id = slot;
      req.addr = s.base + cur.addr;
      req.bytes = cur.bytes;
      req.write = cur.write;
      req.source = static_cast<uint32_t>(issued % sources);
      if (!dev.try_enqueue(req, now)) {  // in order: the rest of the trace waits behind it
        free_slots.push_back(slot);
        refused = true;
        break;
      }
      issued_at[slot] = now;
      is_write[slot] = cur.write;
      ++issued;
      r.bytes += cur.bytes;
      ++(cur.write ? r.writes : r.reads);
      have = false;
    }
    if (!have && exhausted && completed == issued) break;
    Tick t = refused ? dev.next_retry() : dev.next_event();
    if (have && !s.back_to_back && s.start_ps + cur.at_ps > now) t = std::min(t, s.start_ps + cur.at_ps);
    if (t == kNever)
      throw std::logic_error("device idle while a trace request waits to be accepted (" +
                             std::to_string(issued - completed) + " in flight)");
    now = std::max(now, t);
    dev.advance(now, done);
    for (const auto& c : done) {
      const auto slot = static_cast<uint32_t>(c.id);
      if (!is_write[slot]) ++lat[c.done - issued_at[slot]];
      free_slots.push_back(slot);
      last = std::max(last, c.done);
      ++completed;
    }
    done.clear();
  }
  finish(r, dev, s.start_ps, last, completed, lat, wall0);
  return r;
}

}  // namespace indexsim::sim
