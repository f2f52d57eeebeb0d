// SPDX-License-Identifier: Apache-2.0
#include "models/common/memory_ports.hpp"

#include <algorithm>

namespace indexsim::model {

class MemoryPorts::Port : public MemoryDevice {
 public:
  Port(MemoryPorts& owner, uint32_t index, uint32_t source_base) : o_(owner), index_(index), source_base_(source_base) {}

  bool try_enqueue(const MemRequest& req, Tick now) override {
    uint64_t slot;
    if (!o_.free_.empty()) {
      slot = o_.free_.back();
      o_.free_.pop_back();
    } else {
      slot = o_.flights_.size();
      o_.flights_.push_back({});
    }
    MemRequest r = req;
    r.id = slot;
    r.source += source_base_;
    if (!o_.mem_.try_enqueue(r, now)) {
      o_.free_.push_back(slot);
      return false;
    }
    o_.flights_[slot] = {index_, req.id};
    return true;
  }
  bool refused_per_source() const override { return o_.mem_.refused_per_source(); }
  uint64_t refused_queue() const override { return o_.mem_.refused_queue(); }
  bool may_take(uint64_t key) const override { return o_.mem_.may_take(key); }
  uint64_t slots_freed() const override { return o_.mem_.slots_freed(); }
  Tick next_event() const override { return std::min(o_.mem_.next_event(), buffered_min_); }
  Tick next_retry() const override { return std::min(o_.mem_.next_retry(), buffered_min_); }
  void advance(Tick now, std::vector<MemCompletion>& done) override {
    // Asked at the shared device's next event or retry time, as the requester would ask it alone.
    o_.advance_shared(now);
    done.insert(done.end(), buffered_.begin(), buffered_.end());
    buffered_.clear();
    buffered_min_ = kNever;
  }
  double peak_bandwidth_GBps() const override { return o_.mem_.peak_bandwidth_GBps(); }
  Tick idle_read_latency_ps() const override { return o_.mem_.idle_read_latency_ps(); }
  uint64_t capacity_bytes() const override { return o_.mem_.capacity_bytes(); }
  Tick last_write_issued_ps() const override { return o_.mem_.last_write_issued_ps(); }
  void report(StatSink& sink, const std::string& component) const override { o_.mem_.report(sink, component); }
  void warm(const MemRequest& req) override {
    MemRequest r = req;
    r.source += source_base_;
    o_.mem_.warm(r);
  }
  uint64_t warm_reach_bytes() const override { return o_.mem_.warm_reach_bytes(); }

  void deliver(const MemCompletion& c) {
    buffered_.push_back(c);
    buffered_min_ = std::min(buffered_min_, c.done);
  }

 private:
  MemoryPorts& o_;
  uint32_t index_, source_base_;
  std::vector<MemCompletion> buffered_;
  Tick buffered_min_ = kNever;
};

MemoryPorts::MemoryPorts(MemoryDevice& shared) : mem_(shared) {}
MemoryPorts::~MemoryPorts() = default;

MemoryDevice& MemoryPorts::port(uint32_t i, uint32_t source_base) {
  if (i >= ports_.size()) ports_.resize(size_t(i) + 1);
  if (!ports_[i]) ports_[i] = std::make_unique<Port>(*this, i, source_base);
  return *ports_[i];
}

void MemoryPorts::advance_shared(Tick now) {
  done_.clear();
  mem_.advance(now, done_);
  for (const MemCompletion& c : done_) {
    const Flight f = flights_[c.id];
    free_.push_back(c.id);
    ports_[f.port]->deliver({f.id, c.done});
  }
}

}  // namespace indexsim::model
