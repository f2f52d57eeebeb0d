// SPDX-License-Identifier: Apache-2.0
// The SystemC adapter elaborates in a fresh context, passes the core's timing through unchanged,
// and wakes only when the core has something to do.
#include <gtest/gtest.h>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include "models/dram/dram_sc.hpp"
#include "systemc_fixture.hpp"
#include "test_dram_util.hpp"

using indexsim::model::Tick;
using indexsim::model::dram::DramSc;

namespace {

struct Reader : sc_core::sc_module {
  tlm_utils::simple_initiator_socket<Reader> socket;
  std::vector<uint64_t> addrs;
  std::vector<Tick> latency_ps;
  SC_HAS_PROCESS(Reader);
  Reader(sc_core::sc_module_name n, std::vector<uint64_t> a) : sc_module(n), socket("socket"), addrs(std::move(a)) {
    SC_THREAD(run);
  }
  void run() {
    unsigned char buf[64];
    for (uint64_t a : addrs) {
      tlm::tlm_generic_payload gp;
      gp.set_command(tlm::TLM_READ_COMMAND);
      gp.set_address(a);
      gp.set_data_ptr(buf);
      gp.set_data_length(32);
      gp.set_streaming_width(32);
      sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
      const sc_core::sc_time start = sc_core::sc_time_stamp();
      socket->b_transport(gp, delay);
      EXPECT_EQ(gp.get_response_status(), tlm::TLM_OK_RESPONSE);
      latency_ps.push_back(static_cast<Tick>((sc_core::sc_time_stamp() + delay - start).to_seconds() * 1e12 + 0.5));
    }
  }
};

}  // namespace

class DramSystemC : public indexsim::test::SystemCTest {};

TEST_F(DramSystemC, OneReadTakesTheCoresIdleLatencyAndIdleCostsNoWakeups) {
  auto core = indexsim::test::load_hbm("h200", {"refresh=none"});
  const Tick idle = core->idle_read_latency_ps();
  const auto& T = core->params().t;
  const Tick P = core->params().clock_period_ps;
  DramSc dram("dram", std::move(core));
  Reader reader("reader", {0, 32});
  reader.socket.bind(dram.socket);
  sc_core::sc_start(sc_core::sc_time(10, sc_core::SC_US));
  ASSERT_EQ(reader.latency_ps.size(), 2u);
  EXPECT_EQ(reader.latency_ps[0], idle);                      // ACT + tRCD + tCL + burst
  EXPECT_EQ(reader.latency_ps[1], (T.tCL + T.burst) * P);     // row hit: tCL + burst
  // Woken per command and completion only (ACT, RD, done; RD, done), not per clock:
  // 10 us at 0.64 ns would be 15625 clocks.
  EXPECT_LE(dram.wakeups(), 10u);
}

TEST_F(DramSystemC, ConcurrentThreadsOverlapInTheQueues) {
  // 64 threads share one initiator socket, each reading one random 32 B word: they are queued
  // together, so the last finishes long before 64 serial row misses would.
  auto core = indexsim::test::load_hbm("h100", {"refresh=none"});
  const Tick idle = core->idle_read_latency_ps();
  DramSc dram("dram", std::move(core));
  std::vector<std::unique_ptr<Reader>> readers;
  for (uint64_t i = 0; i < 64; ++i) {
    readers.push_back(std::make_unique<Reader>(("reader" + std::to_string(i)).c_str(),
                                               std::vector<uint64_t>{i * 1048576 + 4096 * (i % 7)}));
  }
  // simple_target_socket takes one initiator, so the readers go through a passthrough chain.
  struct Fan : sc_core::sc_module {
    std::vector<std::unique_ptr<tlm_utils::simple_target_socket_tagged<Fan>>> in;
    tlm_utils::simple_initiator_socket<Fan> out;
    SC_HAS_PROCESS(Fan);
    Fan(sc_core::sc_module_name n, size_t k) : sc_module(n), out("out") {
      for (size_t i = 0; i < k; ++i) {
        in.push_back(std::make_unique<tlm_utils::simple_target_socket_tagged<Fan>>(("in" + std::to_string(i)).c_str()));
        in.back()->register_b_transport(this, &Fan::b_transport, int(i));
      }
    }
    void b_transport(int, tlm::tlm_generic_payload& gp, sc_core::sc_time& d) { out->b_transport(gp, d); }
  } fan("fan", readers.size());
  for (size_t i = 0; i < readers.size(); ++i) readers[i]->socket.bind(*fan.in[i]);
  fan.out.bind(dram.socket);
  sc_core::sc_start();
  Tick worst = 0;
  for (const auto& r : readers) {
    ASSERT_EQ(r->latency_ps.size(), 1u);
    worst = std::max(worst, r->latency_ps[0]);
  }
  EXPECT_LT(worst, 64 * idle / 4);
  indexsim::model::StatSink sink;
  dram.core().report(sink, "hbm");
  EXPECT_EQ(sink.get("hbm", "reads"), 64.0);
}
