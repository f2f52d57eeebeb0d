// SPDX-License-Identifier: Apache-2.0
// A memory device for engine tests: one shared bus of `bytes_per_ns` plus a fixed latency.
// A request completes at max(now, bus_free) + bytes / bytes_per_ns + latency, so the replay's
// figures can be checked against closed-form arithmetic.
#pragma once

#include <queue>
#include <vector>

#include "models/common/memory_device.hpp"

namespace indexsim::test {

class FakeMemory : public model::MemoryDevice {
 public:
  FakeMemory(double bytes_per_ns, double latency_ns, size_t queue_limit = 1u << 30)
      : bw_(bytes_per_ns), lat_(model::ns_to_ps(latency_ns)), limit_(queue_limit) {}
  bool try_enqueue(const model::MemRequest& r, model::Tick now) override {
    if (pending_.size() >= limit_) return false;
    const model::Tick start = std::max(now, bus_free_);
    bus_free_ = start + model::Tick(double(r.bytes) / bw_ * 1000.0);
    pending_.push({bus_free_ + lat_, r.id});
    bytes_ += r.bytes;
    ++requests_;
    return true;
  }
  model::Tick next_event() const override { return pending_.empty() ? model::kNever : pending_.top().done; }
  void advance(model::Tick now, std::vector<model::MemCompletion>& done) override {
    while (!pending_.empty() && pending_.top().done <= now) {
      done.push_back({pending_.top().id, pending_.top().done});
      pending_.pop();
    }
  }
  double peak_bandwidth_GBps() const override { return bw_; }
  model::Tick idle_read_latency_ps() const override { return lat_; }
  uint64_t capacity_bytes() const override { return 1ull << 40; }
  void report(model::StatSink& s, const std::string& c) const override {
    s.add(c, "bytes", double(bytes_), "bytes");
    s.add(c, "requests", double(requests_), "count");
  }
  void warm(const model::MemRequest& r) override {
    if (warmed_ == 0) first_warmed_ = r.addr;
    warmed_ += r.bytes;
  }
  // Says that warming reaches `bytes` back (MemoryDevice::warm_reach_bytes); by default all the way.
  void set_warm_reach(uint64_t bytes) { reach_ = bytes; }
  uint64_t warm_reach_bytes() const override { return reach_; }
  uint64_t first_warmed() const { return first_warmed_; }
  uint64_t bytes() const { return bytes_; }
  uint64_t warmed() const { return warmed_; }
  uint64_t requests() const { return requests_; }

 private:
  struct P {
    model::Tick done;
    uint64_t id;
    bool operator>(const P& o) const { return done > o.done; }
  };
  double bw_;
  model::Tick lat_;
  size_t limit_;
  model::Tick bus_free_ = 0;
  uint64_t bytes_ = 0, requests_ = 0, warmed_ = 0, first_warmed_ = 0, reach_ = UINT64_MAX;
  std::priority_queue<P, std::vector<P>, std::greater<P>> pending_;
};

}  // namespace indexsim::test
