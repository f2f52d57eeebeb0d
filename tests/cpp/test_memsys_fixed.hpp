// SPDX-License-Identifier: Apache-2.0
// A fixed-latency memory for unit tests of the units that sit in front of a memory: every request
// takes `latency_ps` after it is accepted, plus serialisation at `bytes_per_ns` when that is > 0
// (one shared channel); at most `max_in_flight` at a time. It counts what it was sent.
#pragma once

#include <algorithm>
#include <cmath>
#include <queue>
#include <vector>

#include "models/common/memory_device.hpp"

namespace indexsim::test {

class FixedLatencyMemory : public model::MemoryDevice {
 public:
  FixedLatencyMemory(model::Tick latency_ps, double bytes_per_ns = 0, uint32_t max_in_flight = 1u << 30,
                     uint64_t capacity = uint64_t{1} << 40)
      : latency_(latency_ps), bpns_(bytes_per_ns), max_(max_in_flight), cap_(capacity) {}

  bool try_enqueue(const model::MemRequest& r, model::Tick now) override {
    if (q_.size() >= max_) return false;
    model::Tick start = now;
    if (bpns_ > 0) {
      start = std::max(now, free_);
      free_ = start + static_cast<model::Tick>(std::ceil(r.bytes / bpns_ * 1000.0));
      start = free_;
    }
    q_.push({start + latency_, seq_++, r.id});
    (r.write ? writes : reads)++;
    (r.write ? bytes_written : bytes_read) += r.bytes;
    return true;
  }
  model::Tick next_event() const override { return q_.empty() ? model::kNever : q_.top().t; }
  void advance(model::Tick now, std::vector<model::MemCompletion>& done) override {
    while (!q_.empty() && q_.top().t <= now) {
      done.push_back({q_.top().id, q_.top().t});
      q_.pop();
    }
  }
  double peak_bandwidth_GBps() const override { return bpns_; }
  model::Tick idle_read_latency_ps() const override { return latency_; }
  uint64_t capacity_bytes() const override { return cap_; }
  void report(model::StatSink& sink, const std::string& c) const override {
    sink.add(c, "reads", static_cast<double>(reads), "count");
    sink.add(c, "writes", static_cast<double>(writes), "count");
  }

  uint64_t reads = 0, writes = 0, bytes_read = 0, bytes_written = 0;

 private:
  struct E {
    model::Tick t;
    uint64_t seq, id;
    bool operator>(const E& o) const { return t != o.t ? t > o.t : seq > o.seq; }
  };
  model::Tick latency_, free_ = 0;
  double bpns_;
  uint32_t max_;
  uint64_t cap_, seq_ = 0;
  std::priority_queue<E, std::vector<E>, std::greater<E>> q_;
};

// Runs a device until idle; returns the completions in order.
inline std::vector<model::MemCompletion> drain(model::MemoryDevice& d) {
  std::vector<model::MemCompletion> out;
  for (model::Tick t = d.next_event(); t != model::kNever; t = d.next_event()) d.advance(t, out);
  return out;
}

inline model::Tick done_of(const std::vector<model::MemCompletion>& v, uint64_t id) {
  for (const auto& c : v)
    if (c.id == id) return c.done;
  return model::kNever;
}

}  // namespace indexsim::test
