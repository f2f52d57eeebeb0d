// SPDX-License-Identifier: Apache-2.0
// The SystemC adapter elaborates in a fresh context, passes the core's timing through unchanged,
// and wakes only when the core has something to do.
#include <gtest/gtest.h>

#include <cstdio>
#include <map>

#include <systemc>
#include <tlm>
#include <tlm_utils/multi_passthrough_target_socket.h>
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

namespace {

// An approximately-timed initiator: sends its reads back to back under the base protocol (the next
// BEGIN_REQ only after the last one's END_REQ), many in flight, and records each phase's time.
struct AtReader : sc_core::sc_module {
  tlm_utils::simple_initiator_socket<AtReader> socket;
  std::vector<tlm::tlm_generic_payload> gps;
  std::vector<Tick> begin_ps, end_req_ps, resp_ps;
  unsigned char buf[64] = {};
  sc_core::sc_event end_req;
  size_t responses = 0;
  SC_HAS_PROCESS(AtReader);
  AtReader(sc_core::sc_module_name n, const std::vector<uint64_t>& addrs)
      : sc_module(n), socket("socket"), gps(addrs.size()), begin_ps(addrs.size()), end_req_ps(addrs.size()),
        resp_ps(addrs.size()) {
    for (size_t i = 0; i < addrs.size(); ++i) {
      gps[i].set_command(tlm::TLM_READ_COMMAND);
      gps[i].set_address(addrs[i]);
      gps[i].set_data_ptr(buf);
      gps[i].set_data_length(32);
      gps[i].set_streaming_width(32);
    }
    socket.register_nb_transport_bw(this, &AtReader::nb_transport_bw);
    SC_THREAD(run);
  }
  static Tick now() { return static_cast<Tick>(sc_core::sc_time_stamp().to_seconds() * 1e12 + 0.5); }
  size_t index_of(const tlm::tlm_generic_payload& gp) const { return size_t(&gp - gps.data()); }
  void run() {
    for (auto& gp : gps) {
      tlm::tlm_phase phase = tlm::BEGIN_REQ;
      sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
      begin_ps[index_of(gp)] = now();
      const tlm::tlm_sync_enum s = socket->nb_transport_fw(gp, phase, delay);
      ASSERT_EQ(s, tlm::TLM_ACCEPTED);
      sc_core::wait(end_req);
    }
  }
  tlm::tlm_sync_enum nb_transport_bw(tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase, sc_core::sc_time&) {
    if (phase == tlm::END_REQ) {
      end_req_ps[index_of(gp)] = now();
      end_req.notify(sc_core::SC_ZERO_TIME);
      return tlm::TLM_ACCEPTED;
    }
    EXPECT_EQ(phase, tlm::BEGIN_RESP);
    EXPECT_EQ(gp.get_response_status(), tlm::TLM_OK_RESPONSE);
    resp_ps[index_of(gp)] = now();
    ++responses;
    return tlm::TLM_COMPLETED;
  }
};

// Several initiators onto one target socket, both coding styles: requests forward, the backward
// path back to the initiator that sent each payload.
struct FanIn : sc_core::sc_module {
  tlm_utils::multi_passthrough_target_socket<FanIn> in;
  tlm_utils::simple_initiator_socket<FanIn> out;
  std::map<const tlm::tlm_generic_payload*, int> from;
  SC_HAS_PROCESS(FanIn);
  explicit FanIn(sc_core::sc_module_name n) : sc_module(n), in("in"), out("out") {
    in.register_b_transport(this, &FanIn::b_transport);
    in.register_nb_transport_fw(this, &FanIn::nb_fw);
    out.register_nb_transport_bw(this, &FanIn::nb_bw);
  }
  void b_transport(int, tlm::tlm_generic_payload& gp, sc_core::sc_time& d) { out->b_transport(gp, d); }
  tlm::tlm_sync_enum nb_fw(int i, tlm::tlm_generic_payload& gp, tlm::tlm_phase& p, sc_core::sc_time& d) {
    from[&gp] = i;
    return out->nb_transport_fw(gp, p, d);
  }
  tlm::tlm_sync_enum nb_bw(tlm::tlm_generic_payload& gp, tlm::tlm_phase& p, sc_core::sc_time& d) {
    return in[from.at(&gp)]->nb_transport_bw(gp, p, d);
  }
};

std::vector<uint64_t> words(uint64_t first, size_t n) {
  std::vector<uint64_t> a;
  for (size_t i = 0; i < n; ++i) a.push_back(first + 32 * i);
  return a;
}

constexpr size_t kInitiators = 4, kReads = 256;
const std::vector<std::string> kSmallQueues = {"refresh=none", "read_queue_entries=4"};

}  // namespace

TEST_F(DramSystemC, ApproximatelyTimedInitiatorsFillTheQueuesAndFeelTheirBackPressure) {
  // 4 AT initiators, 256 reads each over 32 KiB, into pseudo-channels of 4 read entries: a
  // request is accepted (END_REQ) only when its queue has room, so some END_REQs come later than
  // their BEGIN_REQ, every read completes once (BEGIN_RESP after END_REQ), and the core sees them all.
  DramSc dram("dram", indexsim::test::load_hbm("h100", kSmallQueues));
  FanIn fan("fan");
  std::vector<std::unique_ptr<AtReader>> at;
  for (size_t i = 0; i < kInitiators; ++i) {
    at.push_back(std::make_unique<AtReader>(("at" + std::to_string(i)).c_str(), words(i * 8192, kReads)));
    at.back()->socket.bind(fan.in);
  }
  fan.out.bind(dram.socket);
  sc_core::sc_start();
  size_t late = 0;
  for (const auto& r : at) {
    ASSERT_EQ(r->responses, kReads);
    for (size_t i = 0; i < kReads; ++i) {
      EXPECT_LE(r->begin_ps[i], r->end_req_ps[i]);
      EXPECT_LE(r->end_req_ps[i], r->resp_ps[i]);
      late += r->end_req_ps[i] > r->begin_ps[i];
    }
  }
  EXPECT_GT(dram.delayed_end_req(), 0u);
  EXPECT_GT(late, 0u);
  indexsim::model::StatSink sink;
  dram.core().report(sink, "hbm");
  EXPECT_EQ(sink.get("hbm", "reads"), double(kInitiators * kReads));
}

TEST_F(DramSystemC, ApproximatelyTimedInitiatorsKeepMoreInFlightThanLooselyTimedOnes) {
  // The same 4 x 256 reads: an LT initiator has one read in flight (b_transport returns when it is
  // done), an AT one as many as the queues accept, so the AT run ends sooner:
  // t_AT < t_LT, and neither beats the reads' bytes at the core's peak bandwidth.
  auto run = [](bool approximately_timed) {
    // A fresh context per run (one elaboration each); the one it replaces (the fixture's, then the
    // first run's) is kept reachable, as the last one is through the global.
    // (Never destroyed: LeakSanitizer looks after static destructors have run.)
    static auto* replaced = new std::vector<sc_core::sc_simcontext*>();
    replaced->push_back(sc_core::sc_curr_simcontext);
    sc_core::sc_curr_simcontext = new sc_core::sc_simcontext();
    sc_core::sc_default_global_context = sc_core::sc_curr_simcontext;
    DramSc dram("dram", indexsim::test::load_hbm("h100", kSmallQueues));
    FanIn fan("fan");
    std::vector<std::unique_ptr<AtReader>> at;
    std::vector<std::unique_ptr<Reader>> lt;
    for (size_t i = 0; i < kInitiators; ++i) {
      const std::string name = "r" + std::to_string(i);
      if (approximately_timed) {
        at.push_back(std::make_unique<AtReader>(name.c_str(), words(i * 8192, kReads)));
        at.back()->socket.bind(fan.in);
      } else {
        lt.push_back(std::make_unique<Reader>(name.c_str(), words(i * 8192, kReads)));
        lt.back()->socket.bind(fan.in);
      }
    }
    fan.out.bind(dram.socket);
    sc_core::sc_start();
    const double peak = dram.core().peak_bandwidth_GBps();
    return std::make_pair(sc_core::sc_time_stamp().to_seconds() * 1e12, peak);
  };
  const auto [t_at, peak] = run(true);
  const auto [t_lt, peak_lt] = run(false);
  (void)peak_lt;
  EXPECT_LT(t_at, t_lt);
  const double bytes = double(kInitiators * kReads * 32);
  EXPECT_GE(t_at, bytes / (peak * 1e9) * 1e12);  // ps
  std::printf("AT %.0f ns, LT %.0f ns for %zu reads\n", t_at / 1e3, t_lt / 1e3, kInitiators * kReads);
}
