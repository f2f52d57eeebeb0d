// SPDX-License-Identifier: Apache-2.0
// The link to a downstream device (models/common/port.hpp): requests the device refused wait there,
// in one FIFO per input queue where the device names its queues (MemoryDevice::refused_queue).
#include <gtest/gtest.h>

#include <array>
#include <memory>
#include <queue>
#include <vector>

#include "models/common/port.hpp"

using namespace indexsim;
using model::kAnyQueue;
using model::MemCompletion;
using model::MemRequest;
using model::Tick;

namespace {

constexpr Tick D = 100000;  // each queue serves one request at a time, for D

// Two input queues of one entry each (the address's lowest bit picks one), each busy for D with the
// request it holds. `named`: it tells its queues (refused_queue, may_take); else it names none.
class TwoQueues : public model::MemoryDevice {
 public:
  explicit TwoQueues(bool named) : named_(named) {}
  bool try_enqueue(const MemRequest& r, Tick now) override {
    const uint32_t q = r.addr & 1;
    if (busy_until_[q] > now) {
      refused_ = named_ ? q : kAnyQueue;
      return false;
    }
    busy_until_[q] = now + D;
    done_.push({now + D, r.id});
    return true;
  }
  uint64_t refused_queue() const override { return refused_; }
  bool may_take(uint64_t key) const override { return busy_until_[key] <= now_; }
  Tick next_event() const override { return done_.empty() ? model::kNever : done_.top().done; }
  void advance(Tick now, std::vector<MemCompletion>& out) override {
    now_ = now;
    while (!done_.empty() && done_.top().done <= now) {
      out.push_back({done_.top().id, done_.top().done});
      done_.pop();
    }
  }
  double peak_bandwidth_GBps() const override { return 1; }
  Tick idle_read_latency_ps() const override { return D; }
  uint64_t capacity_bytes() const override { return 1u << 20; }
  void report(model::StatSink&, const std::string&) const override {}

 private:
  struct E {
    Tick done;
    uint64_t id;
    bool operator>(const E& o) const { return done > o.done; }
  };
  bool named_;
  uint64_t refused_ = kAnyQueue;
  Tick now_ = 0;
  std::array<Tick, 2> busy_until_{0, 0};
  std::priority_queue<E, std::vector<E>, std::greater<E>> done_;
};

// At t = 0: one request for queue 1 (taken), twelve for queue 0 (the first taken, eleven refused),
// then a second for queue 1 (refused: queue 1 is busy until D). Returns when the last one is done.
Tick second_of_queue_one(bool named) {
  model::Downstream down;
  down.reset(std::make_unique<TwoQueues>(named));
  down.send({100, 1, 64, false, 0}, 0);
  for (uint64_t i = 0; i < 12; ++i) down.send({i, 0, 64, false, 0}, 0);
  EXPECT_FALSE(down.send({101, 1, 64, false, 0}, 0));
  EXPECT_EQ(down.blocked(), 12u);
  std::vector<MemCompletion> out;
  for (Tick t = down.next_event(); t != model::kNever; t = down.next_event()) down.advance(t, out);
  EXPECT_EQ(out.size(), 14u);
  EXPECT_EQ(down.blocked(), 0u);
  EXPECT_EQ(down.blocked_max(), 12u);
  for (const auto& c : out)
    if (c.id == 101) return c.done;
  return 0;
}

}  // namespace

TEST(Downstream, AFullQueueHoldsBackOnlyItsOwnRequestsWhereTheDeviceNamesItsQueues) {
  // Named queues: at D both queues free and each one's oldest waiting request is taken, so queue 1's
  // second request is done at 2D. Unnamed: the retries at D take queue 0's next request and stop
  // after eight refusals of queue 0's, before reaching queue 1's; it is taken only later.
  EXPECT_EQ(second_of_queue_one(true), 2 * D);
  EXPECT_GT(second_of_queue_one(false), 2 * D);
}

TEST(Downstream, RequestsOfOneQueueAreTakenInTheOrderTheyWaited) {
  // One queue busy for D a request: three sent at t = 0 are done at D, 2D and 3D, in order.
  model::Downstream down;
  down.reset(std::make_unique<TwoQueues>(true));
  EXPECT_TRUE(down.send({1, 0, 64, false, 0}, 0));
  EXPECT_FALSE(down.send({2, 0, 64, false, 0}, 0));
  EXPECT_FALSE(down.send({3, 0, 64, false, 0}, 0));
  std::vector<MemCompletion> out;
  for (Tick t = down.next_event(); t != model::kNever; t = down.next_event()) down.advance(t, out);
  ASSERT_EQ(out.size(), 3u);
  for (uint64_t i = 0; i < 3; ++i) {
    EXPECT_EQ(out[i].id, i + 1);
    EXPECT_EQ(out[i].done, Tick(i + 1) * D);
  }
}
