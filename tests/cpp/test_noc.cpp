// SPDX-License-Identifier: Apache-2.0
// Crossbar timing core: fixed latencies plus per-port bandwidth, against a fixed memory.
#include <gtest/gtest.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "models/noc/crossbar.hpp"
#include "models/common/port.hpp"
#include "tests/cpp/fake_memory.hpp"
#include "tests/cpp/test_memsys_fixed.hpp"

using indexsim::model::Crossbar;
using indexsim::model::CrossbarParams;
using indexsim::model::Tick;
using indexsim::model::kNever;
using indexsim::test::FixedLatencyMemory;
using indexsim::test::done_of;
using indexsim::test::drain;

namespace {
constexpr Tick T = 1000;
constexpr Tick D = 100 * T;
CrossbarParams params(uint32_t memory_ports = 8) {
  CrossbarParams p;
  p.clock_MHz = 1000;
  p.sm_ports = 4;
  p.memory_ports = memory_ports;
  p.port_bandwidth_Bpc = 16;
  p.request_latency_cycles = 20;
  p.response_latency_cycles = 30;
  p.header_B = 16;
  p.line_B = 128;
  p.max_in_flight_per_port = 64;
  return p;
}
}  // namespace

TEST(Crossbar, IdleReadIsHeaderAndDataThroughTwoPortsPlusBothLatencies) {
  Crossbar x(params());
  x.attach(std::make_unique<FixedLatencyMemory>(D));
  ASSERT_TRUE(x.try_enqueue({1, 0, 32, false, 0}, 0));
  // header 16 B at 16 B/clk: 1 cycle per port; 32 B back: 2 cycles per port.
  const Tick expect = (1 + 1 + 20) * T + D + (2 + 2 + 30) * T;
  EXPECT_EQ(done_of(drain(x), 1), expect);
  EXPECT_EQ(x.idle_read_latency_ps() + D, expect);
  EXPECT_EQ(x.next_event(), kNever);
}

TEST(Crossbar, OnePortDeliversBytesOverBytesPerClock) {
  Crossbar x(params(1));
  x.attach(std::make_unique<FixedLatencyMemory>(D));
  for (uint64_t i = 0; i < 8; ++i) ASSERT_TRUE(x.try_enqueue({i, i * 64, 64, false, 0}, 0));
  const auto done = drain(x);
  // 64 B at 16 B/clk = 4 cycles per response on the shared ports: completions 4 cycles apart.
  for (uint64_t i = 1; i < 8; ++i) EXPECT_EQ(done_of(done, i) - done_of(done, i - 1), 4 * T);
}

TEST(Crossbar, PortInFlightLimitRefusesOnlyThatPort) {
  CrossbarParams p = params();
  p.max_in_flight_per_port = 2;
  Crossbar x(p);
  x.attach(std::make_unique<FixedLatencyMemory>(D));
  EXPECT_TRUE(x.try_enqueue({1, 0, 64, false, 0}, 0));
  EXPECT_TRUE(x.try_enqueue({2, 64, 64, false, 0}, 0));
  EXPECT_FALSE(x.try_enqueue({3, 128, 64, false, 0}, 0));
  EXPECT_TRUE(x.try_enqueue({4, 128, 64, false, 1}, 0));  // another SM port
}

TEST(Crossbar, APortsRefusalIsItsSourcesOwnUntilASecondSourceSharesThePort) {
  // sm_ports 4: sources 0 and 4 share port 0. A refusal of source 0 is its own (only its
  // completions free the port) until source 4 has come through the same port.
  CrossbarParams p = params();
  p.max_in_flight_per_port = 1;
  Crossbar x(p);
  x.attach(std::make_unique<FixedLatencyMemory>(D));
  EXPECT_TRUE(x.try_enqueue({1, 0, 64, false, 0}, 0));
  EXPECT_FALSE(x.try_enqueue({2, 64, 64, false, 0}, 0));
  EXPECT_TRUE(x.refused_per_source());
  EXPECT_FALSE(x.try_enqueue({3, 128, 64, false, 4}, 0));
  EXPECT_FALSE(x.refused_per_source());
  EXPECT_FALSE(x.try_enqueue({4, 192, 64, false, 0}, 0));
  EXPECT_FALSE(x.refused_per_source());
}

TEST(EventHeap, PopsByTimeThenByInsertionWhateverTheOrderOfPushes) {
  // (time, insertion) is a total order: the heap pops what a stable sort by time gives.
  indexsim::model::EventHeap<uint32_t> h;
  std::vector<std::pair<Tick, uint32_t>> ref;
  uint64_t x = 12345;
  uint32_t n = 0;
  for (int round = 0; round < 200; ++round) {
    for (int k = 0; k < 7; ++k) {
      x = indexsim::model::mix64(x);
      const Tick t = x % 50;  // many ties
      h.push(t, n);
      ref.emplace_back(t, n++);
    }
    std::stable_sort(ref.begin(), ref.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (int k = 0; k < 5; ++k) {
      ASSERT_EQ(h.top_time(), ref.front().first);
      EXPECT_EQ(h.pop(), ref.front().second);
      ref.erase(ref.begin());
    }
  }
  while (!h.empty()) {
    EXPECT_EQ(h.pop(), ref.front().second);
    ref.erase(ref.begin());
  }
  EXPECT_TRUE(ref.empty());
  EXPECT_EQ(h.top_time(), kNever);
}

TEST(Crossbar, WritesCarryTheirDataUpAndAHeaderBack) {
  Crossbar x(params());
  x.attach(std::make_unique<FixedLatencyMemory>(D));
  ASSERT_TRUE(x.try_enqueue({1, 0, 64, true, 0}, 0));
  // 64 B up: 4 cycles per port; 16 B acknowledgement back: 1 cycle per port.
  EXPECT_EQ(done_of(drain(x), 1), (4 + 4 + 20) * T + D + (1 + 1 + 30) * T);
}

namespace model = indexsim::model;
namespace {
// A device that counts how often it is asked for its next event, so that the test sees the cache.
class CountingMemory : public indexsim::test::FakeMemory {
 public:
  CountingMemory() : FakeMemory(/*bytes_per_ns=*/1.0, /*latency_ns=*/10.0) {}
  model::Tick next_event() const override {
    ++asked;
    return FakeMemory::next_event();
  }
  mutable int asked = 0;
};
}  // namespace

TEST(Downstream, ClockKeepsItsAnswerUntilTheOwnerSendsOrAdvances) {
  auto dev = std::make_unique<CountingMemory>();
  CountingMemory* raw = dev.get();
  model::Downstream down;
  down.reset(std::move(dev));
  model::DownstreamClock below(down);
  EXPECT_EQ(below.next_event(), model::kNever);  // idle: nothing pending
  EXPECT_EQ(below.next_event(), model::kNever);
  EXPECT_EQ(raw->asked, 1);  // the second answer came from the cache

  // A 64 B read at t = 0 on a 1 B/ns bus with 10 ns latency completes at 64 + 10 ns.
  model::MemRequest r;
  r.id = 7;
  r.bytes = 64;
  down.send(r, 0);
  EXPECT_EQ(below.next_event(), model::ns_to_ps(74.0));
  EXPECT_EQ(raw->asked, 2);  // a send moves the answer: asked again

  std::vector<model::MemCompletion> out;
  down.advance(model::ns_to_ps(74.0), out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(below.next_event(), model::kNever);
  EXPECT_EQ(raw->asked, 3);  // and so does an advance
}
