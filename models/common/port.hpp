// SPDX-License-Identifier: Apache-2.0
// Pieces shared by the units that sit in front of another memory (NoC, L2, SRAM cache, CXL):
// a device that takes a downstream, a downstream port that keeps refused requests in order, a
// timed event heap, and a handle that lets two parents share one device.
#pragma once

#include <algorithm>
#include <deque>
#include <memory>
#include <unordered_map>
#include <vector>

#include "models/common/memory_device.hpp"

namespace indexsim::model {

// A unit whose misses or forwarded requests go to another MemoryDevice, attached after it is built
// (its YAML section describes only itself; sim/memsys decides what lies behind it).
class FrontDevice : public MemoryDevice {
 public:
  virtual void attach(std::unique_ptr<MemoryDevice> downstream) = 0;
  // False when this configuration never sends anything downstream (an SRAM scratchpad).
  virtual bool needs_downstream() const { return true; }
};

// The link to a downstream device. A refused request waits here and is retried each time the
// downstream makes progress (only then can it have freed a slot).
// A device that names the input queue a request waits for (MemoryDevice::refused_queue: a DRAM's
// pseudo-channel read or write queue) has its refused requests kept in one FIFO per queue, and every
// queue's oldest is tried at each retry: a full queue holds back only its own requests, as separate
// queues do in hardware. Tried in one FIFO of thousands with a bounded number of tries, requests
// for idle pseudo-channels waited behind those for full ones and the memory stayed under-used: a
// top-k pass over 2 GB of scores streamed at 3.4 TB/s where it reached 4.7 before the queue grew.
// Requests without a named queue rotate through one FIFO, and the retries stop after a few
// consecutive refusals. A new request is tried at once, and may pass the waiting ones.
class Downstream {
 public:
  static constexpr size_t kRetryWindow = 8;
  void reset(std::unique_ptr<MemoryDevice> d) { dev_ = std::move(d); }
  bool connected() const { return dev_ != nullptr; }
  MemoryDevice* get() const { return dev_.get(); }
  // True when the downstream took `r` at once; false when it waits here.
  bool send(const MemRequest& r, Tick now) {
    ++touches_;
    if (dev_->try_enqueue(r, now)) return true;
    const uint64_t key = dev_->refused_queue();
    if (key == kAnyQueue) {
      blocked_.push_back(r);
    } else {
      auto [it, fresh] = slot_of_.try_emplace(key, uint32_t(queues_.size()));
      if (fresh) {
        queues_.emplace_back();
        key_of_.push_back(key);
      }
      std::deque<MemRequest>& q = queues_[it->second];
      if (q.empty()) waiting_.push_back(it->second);
      q.push_back(r);
    }
    ++waiting_requests_;
    blocked_max_ = std::max(blocked_max_, waiting_requests_);
    ++refusals_;
    return false;
  }
  // While a request waits here, the downstream's next chance to take it counts as an event.
  Tick next_event() const {
    if (!dev_) return kNever;
    return waiting_requests_ == 0 ? dev_->next_event() : dev_->next_retry();
  }
  void advance(Tick now, std::vector<MemCompletion>& out) {
    ++touches_;
    dev_->advance(now, out);
    // Each waiting queue's oldest, in the order the queues began to wait, until one is refused; not
    // again while no queue below has freed room since.
    const uint64_t freed = waiting_.empty() ? freed_seen_ : dev_->slots_freed();
    if (freed == kAnyQueue || freed != freed_seen_) {
      size_t kept = 0;
      for (const uint32_t w : waiting_) {
        std::deque<MemRequest>& q = queues_[w];
        if (dev_->may_take(key_of_[w])) {
          while (!q.empty() && dev_->try_enqueue(q.front(), now)) {
            q.pop_front();
            --waiting_requests_;
          }
        }
        if (!q.empty()) waiting_[kept++] = w;
      }
      waiting_.resize(kept);
    }
    freed_seen_ = freed;
    size_t refusals = 0;
    for (size_t n = blocked_.size(); n > 0 && refusals < kRetryWindow; --n) {
      const MemRequest r = blocked_.front();
      blocked_.pop_front();
      if (dev_->try_enqueue(r, now)) {
        refusals = 0;
        --waiting_requests_;
      } else {
        blocked_.push_back(r);
        ++refusals;
      }
    }
  }
  size_t blocked() const { return waiting_requests_; }
  size_t blocked_max() const { return blocked_max_; }  // the most requests that waited here at once
  uint64_t refusals() const { return refusals_; }  // sends that had to wait
  uint64_t touches() const { return touches_; }    // sends and advances so far

 private:
  uint64_t refusals_ = 0, touches_ = 0;
  size_t waiting_requests_ = 0, blocked_max_ = 0;  // requests waiting here, keyed or not
  std::unique_ptr<MemoryDevice> dev_;
  std::deque<MemRequest> blocked_;               // requests without a queue key
  std::vector<std::deque<MemRequest>> queues_;   // by the slot of their key
  std::unordered_map<uint64_t, uint32_t> slot_of_;
  std::vector<uint64_t> key_of_;                 // by slot
  uint64_t freed_seen_ = kAnyQueue;              // the device's slots_freed() at the latest look
  std::vector<uint32_t> waiting_;                // slots with requests, in the order they began to wait
};

// A downstream's next event as its owner's advance() loop sees it: re-read only after the owner
// sent or advanced, the only things that change it while that loop runs. Asking every time walked the
// whole tree below (routers, L2, DRAM, CXL) once per event: a fifth of the instructions of
// `bench memory --target system`.
// Lives for one advance() call: outside it, another user of a shared device can move the answer.
class DownstreamClock {
 public:
  explicit DownstreamClock(const Downstream& d) : d_(d) {}
  Tick next_event() {
    if (d_.touches() != seen_) {
      seen_ = d_.touches();
      t_ = d_.next_event();
    }
    return t_;
  }

 private:
  const Downstream& d_;
  uint64_t seen_ = ~uint64_t(0);
  Tick t_ = kNever;
};

// A min-heap of timed events; ties break by insertion order so that runs are deterministic. Keep
// payloads small (an index into the unit's own table): every sift moves whole entries. Four
// children a node: half the depth of a binary heap, and a node's children share a host cache line
// or two (the crossbar's heap, a few events for each request in flight, was a fifth of a run).
// (time, insertion) is a total order, so any correct heap pops the same sequence.
template <class Payload>
class EventHeap {
 public:
  void push(Tick t, const Payload& p) {
    size_t i = heap_.size();
    const Ev e{t, seq_++, p};
    heap_.push_back(e);
    while (i > 0) {
      const size_t up = (i - 1) / kArity;
      if (!before(e, heap_[up])) break;
      heap_[i] = heap_[up];
      i = up;
    }
    heap_[i] = e;
  }
  bool empty() const { return heap_.empty(); }
  Tick top_time() const { return heap_.empty() ? kNever : heap_.front().t; }
  // The next event's payload (not empty()): a unit may ask for its state ahead of handling it.
  const Payload& top() const { return heap_.front().p; }
  Payload pop() {
    const Payload p = heap_.front().p;
    const Ev last = heap_.back();
    heap_.pop_back();
    const size_t n = heap_.size();
    if (n > 0) {
      size_t i = 0;
      for (;;) {
        const size_t c0 = i * kArity + 1;
        if (c0 >= n) break;
        size_t best = c0;
        for (size_t c = c0 + 1; c < std::min(c0 + kArity, n); ++c)
          if (before(heap_[c], heap_[best])) best = c;
        if (!before(heap_[best], last)) break;
        heap_[i] = heap_[best];
        i = best;
      }
      heap_[i] = last;
    }
    return p;
  }
  size_t size() const { return heap_.size(); }

 private:
  static constexpr size_t kArity = 4;
  struct Ev {
    Tick t;
    uint64_t seq;
    Payload p;
  };
  static bool before(const Ev& a, const Ev& b) { return a.t != b.t ? a.t < b.t : a.seq < b.seq; }
  std::vector<Ev> heap_;
  uint64_t seq_ = 0;
};

// One device with several parents (e.g. the HBM behind both the L2 and an SRAM cache). Each parent
// holds a SharedDevice::Port; advancing any port advances the device once and hands every
// completion to the port that sent it. Ids are tagged with the port number in their top bits.
class SharedDevice : public std::enable_shared_from_this<SharedDevice> {
 public:
  explicit SharedDevice(std::unique_ptr<MemoryDevice> dev) : dev_(std::move(dev)) {}
  static constexpr int kPortBits = 8;
  static constexpr int kIdBits = 64 - kPortBits;

  std::unique_ptr<MemoryDevice> port() {
    const uint32_t n = static_cast<uint32_t>(pending_.size());
    pending_.emplace_back();
    return std::make_unique<Port>(shared_from_this(), n);
  }
  MemoryDevice& device() { return *dev_; }

 private:
  class Port : public MemoryDevice {
   public:
    Port(std::shared_ptr<SharedDevice> s, uint32_t n) : s_(std::move(s)), n_(n) {}
    bool try_enqueue(const MemRequest& r, Tick now) override {
      MemRequest t = r;
      t.id = (static_cast<uint64_t>(n_) << kIdBits) | r.id;
      return s_->dev_->try_enqueue(t, now);
    }
    Tick next_event() const override {
      const auto& mine = s_->pending_[n_];
      Tick t = s_->dev_->next_event();
      for (const auto& c : mine) t = std::min(t, c.done);
      return t;
    }
    Tick next_retry() const override { return std::min(next_event(), s_->dev_->next_retry()); }
    uint64_t refused_queue() const override { return s_->dev_->refused_queue(); }
    bool may_take(uint64_t key) const override { return s_->dev_->may_take(key); }
    uint64_t slots_freed() const override { return s_->dev_->slots_freed(); }
    void advance(Tick now, std::vector<MemCompletion>& done) override {
      s_->advance_to(now);
      auto& mine = s_->pending_[n_];
      done.insert(done.end(), mine.begin(), mine.end());
      mine.clear();
    }
    double peak_bandwidth_GBps() const override { return s_->dev_->peak_bandwidth_GBps(); }
    Tick idle_read_latency_ps() const override { return s_->dev_->idle_read_latency_ps(); }
    uint64_t capacity_bytes() const override { return s_->dev_->capacity_bytes(); }
    // The owner of the SharedDevice reports the device once; a port adds nothing.
    void report(StatSink&, const std::string&) const override {}

   private:
    std::shared_ptr<SharedDevice> s_;
    uint32_t n_;
  };

  void advance_to(Tick now) {
    buf_.clear();
    dev_->advance(now, buf_);
    constexpr uint64_t mask = (uint64_t{1} << kIdBits) - 1;
    for (const auto& c : buf_) pending_[c.id >> kIdBits].push_back({c.id & mask, c.done});
  }

  std::unique_ptr<MemoryDevice> dev_;
  std::vector<std::vector<MemCompletion>> pending_;
  std::vector<MemCompletion> buf_;
};

// 64-bit mixer (splitmix64 finaliser): spreads line addresses over slices, sets and channels.
inline uint64_t mix64(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  x ^= x >> 31;
  return x;
}


// The event loop of every unit with its own events over a device below (crossbar, L2, SRAM, CXL):
// up to `now`, in time order, either the downstream's next batch of completions (first on a tie)
// or the unit's own next event. `on_completions(batch)` answers a batch the downstream reported;
// `on_event(t)` pops and handles the unit's next event, due at t.
template <class Payload, class OnCompletions, class OnEvent>
void run_until(Tick now, Downstream& down, const EventHeap<Payload>& events, std::vector<MemCompletion>& buf,
               OnCompletions&& on_completions, OnEvent&& on_event) {
  DownstreamClock below(down);
  for (;;) {
    const Tick td = below.next_event(), te = events.top_time();
    if (std::min(td, te) > now) break;  // kNever is the largest Tick
    if (td <= te) {
      buf.clear();
      down.advance(td, buf);
      on_completions(buf);
    } else {
      on_event(te);
    }
  }
}

}  // namespace indexsim::model
