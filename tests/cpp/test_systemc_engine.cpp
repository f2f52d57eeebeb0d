// SPDX-License-Identifier: Apache-2.0
// The SystemC engine (`run --engine systemc`, sim/engine/systemc.hpp): the same replay with every
// processor reaching memory through a TLM-2.0 link gives the native engine's results bit for bit;
// a region bound to a caller's own TLM-2.0 target (impl: tlm_target) is served by it.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/peq_with_cb_and_phase.h>
#include <tlm_utils/simple_target_socket.h>

#include "models/common/tlm_target.hpp"
#include "sim/engine/simulation.hpp"
#include "sim/engine/systemc.hpp"

using namespace indexsim;

namespace {

// Everything a run computed: the step, every kernel's times and traffic, every component counter.
void expect_identical(const sim::RunResult& a, const sim::RunResult& b) {
  EXPECT_EQ(a.step_ns, b.step_ns);
  ASSERT_EQ(a.kernels.size(), b.kernels.size());
  for (size_t i = 0; i < a.kernels.size(); ++i) {
    EXPECT_EQ(a.kernels[i].start_ns, b.kernels[i].start_ns) << a.kernels[i].name;
    EXPECT_EQ(a.kernels[i].end_ns, b.kernels[i].end_ns) << a.kernels[i].name;
    EXPECT_EQ(a.kernels[i].bytes_read, b.kernels[i].bytes_read) << a.kernels[i].name;
  }
  ASSERT_EQ(a.components.rows().size(), b.components.rows().size());
  for (size_t i = 0; i < a.components.rows().size(); ++i)
    EXPECT_EQ(a.components.rows()[i].value, b.components.rows()[i].value)
        << a.components.rows()[i].unit << "." << a.components.rows()[i].statistic;
}

// GLM-5 cut to two DSA layers with small projections, as the golden runs (scripts/golden.py): a run
// takes well under a second and keeps every kernel kind of a sparse layer.
sim::RunSpec tiny_glm5(const std::string& hardware, const std::string& techniques, const std::vector<std::string>& more = {}) {
  sim::RunSpec s;
  s.hardware = hardware;
  s.workload = "glm-5";
  s.techniques = techniques;
  s.step.context = 16384;
  s.fast = true;
  s.sets = {"workload.model.num_layers=2",
            "workload.layers=[{first: 0, last: 1, attention: dsa, indexer: full, mlp: dense}]",
            "workload.model.vocab_size=2048", "workload.model.hidden_size=1024",
            "workload.mlp.dense_intermediate_size=1024", "workload.attention.num_heads=8",
            "workload.attention.q_lora_rank=512"};
  s.sets.insert(s.sets.end(), more.begin(), more.end());
  return s;
}

sim::RunSpec on(sim::RunSpec s, const std::string& engine) {
  s.engine = engine;
  return s;
}

// A region served after a fixed latency, in each coding style: the user's model of the examples.
//  - loosely timed: b_transport annotates the latency;
//  - approximately timed: END_REQ at once, BEGIN_RESP `latency` later from its own process, and
//    (with `hold_end_req`) END_REQ only after the response, one request at a time, so the region
//    must refuse the next one meanwhile.
class Pad : public sc_core::sc_module {
 public:
  tlm_utils::simple_target_socket<Pad> socket;
  Pad(sc_core::sc_module_name n, double latency_ns, bool hold_end_req = false)
      : sc_core::sc_module(n), socket("socket"), latency_(latency_ns, sc_core::SC_NS), hold_(hold_end_req),
        peq_(this, &Pad::respond) {
    socket.register_b_transport(this, &Pad::b_transport);
    socket.register_nb_transport_fw(this, &Pad::nb_transport_fw);
  }
  uint64_t requests = 0;

 private:
  void b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
    ++requests;
    delay += latency_;
    gp.set_response_status(tlm::TLM_OK_RESPONSE);
  }
  tlm::tlm_sync_enum nb_transport_fw(tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase, sc_core::sc_time& delay) {
    if (phase != tlm::BEGIN_REQ) return tlm::TLM_COMPLETED;
    ++requests;
    peq_.notify(gp, phase, delay + latency_);
    if (hold_) return tlm::TLM_ACCEPTED;
    phase = tlm::END_REQ;
    return tlm::TLM_UPDATED;
  }
  void respond(tlm::tlm_generic_payload& gp, const tlm::tlm_phase&) {
    gp.set_response_status(tlm::TLM_OK_RESPONSE);
    tlm::tlm_phase phase = tlm::BEGIN_RESP;
    sc_core::sc_time zero = sc_core::SC_ZERO_TIME;
    socket->nb_transport_bw(gp, phase, zero);  // BEGIN_RESP also ends the request (END_REQ implied)
  }
  sc_core::sc_time latency_;
  bool hold_;
  tlm_utils::peq_with_cb_and_phase<Pad> peq_;
};

// IndexShare pins the first layer's indexer cache to the region `sram`, here served by `section`
// (flow YAML).
sim::RunSpec with_sram(const std::string& section) {
  return tiny_glm5("h200", "indexshare", {"hardware.memory.sram=" + section});
}
const std::string kIdeal = "{impl: fixed_latency, capacity_GiB: 0.046875, latency_ns: 40, peak_bandwidth_GBps: 4000}";
std::string external(const std::string& style) {
  return "{impl: tlm_target, capacity_GiB: 0.046875, peak_bandwidth_GBps: 4000, idle_read_latency_ns: 40, coding_style: " +
         style + "}";
}

}  // namespace

TEST(SystemCEngine, GivesTheNativeResultsBitForBitWithOneProcessorAndWithTwo) {
  // The same calls reach the timing cores in the same order, only through TLM-2.0 sockets. (The
  // golden runs, detailed mode included, are checked the same way: tests/python/test_golden.py.)
  const auto fast = tiny_glm5("h200", "indexshare");
  expect_identical(sim::simulate(on(fast, "native")), sim::simulate(on(fast, "systemc")));
  // Two processors over one memory (the NPU runs the indexer): each has its own link.
  const auto npu = tiny_glm5("h200-npu", "indexshare-npu");
  expect_identical(sim::simulate(on(npu, "native")), sim::simulate(on(npu, "systemc")));
}

TEST(SystemCEngine, RecordsTheEngineInTheConfigurationSoTheRunsKeepDistinctKeys) {
  const auto spec = tiny_glm5("h200", "baseline");
  const auto n = sim::simulate(on(spec, "native")), s = sim::simulate(on(spec, "systemc"));
  EXPECT_FALSE(n.config.contains("engine"));
  EXPECT_EQ(s.config.at("engine"), "systemc");
  EXPECT_NE(n.key, s.key);
  EXPECT_THROW(sim::simulate(on(spec, "gem5")), std::invalid_argument);
}

TEST(SystemCEngine, ALooselyTimedTargetOfLatencyLIsTheIdealMemoryOfLatencyL) {
  // A b_transport target that annotates L completes each request at t + L: the native ideal memory
  // (impl fixed_latency, latency L) does the same, so the step, every kernel and every counter but
  // the region's own are equal.
  auto ideal = sim::simulate(with_sram(kIdeal));
  std::unique_ptr<Pad> pad;
  auto spec = on(with_sram(external("loosely_timed")), "systemc");
  spec.bind = [&pad](sim::ScBindings& b) {
    pad = std::make_unique<Pad>("pad", 40);  // made now: it belongs to the run's context
    b.region("sram").bind(pad->socket);
  };
  const auto ext = sim::simulate(spec);
  ASSERT_NE(pad, nullptr);
  EXPECT_GT(pad->requests, 0u);
  EXPECT_EQ(ext.step_ns, ideal.step_ns);
  ASSERT_EQ(ext.kernels.size(), ideal.kernels.size());
  for (size_t i = 0; i < ext.kernels.size(); ++i) EXPECT_EQ(ext.kernels[i].end_ns, ideal.kernels[i].end_ns);
  EXPECT_EQ(ext.components.get("sram", "reads"), ideal.components.get("sram", "reads"));
  EXPECT_EQ(double(pad->requests), ext.components.get("sram", "reads") + ext.components.get("sram", "writes"));
}

TEST(SystemCEngine, AnApproximatelyTimedTargetAnswersFromItsOwnProcessAndPushesBack) {
  // END_REQ at once and BEGIN_RESP L later from the target's process: each request still completes
  // at t + L, so the step is the ideal memory's again, and the replay woke for the answers.
  const auto ideal = sim::simulate(with_sram(kIdeal));
  auto spec = on(with_sram(external("approximately_timed")), "systemc");
  std::vector<std::unique_ptr<Pad>> pads;  // one a run
  spec.bind = [&pads](sim::ScBindings& b) {
    pads.push_back(std::make_unique<Pad>("pad", 40));
    b.region("memory.sram").bind(pads.back()->socket);
  };
  const auto at = sim::simulate(spec);
  EXPECT_EQ(at.step_ns, ideal.step_ns);
  EXPECT_EQ(at.components.get("sram", "refused"), 0.0);
  // Holding END_REQ until the response serialises the region: one request in flight, the rest
  // refused and held in the interconnect, so the step is longer.
  spec.bind = [&pads](sim::ScBindings& b) {
    pads.push_back(std::make_unique<Pad>("pad", 40, true));
    b.region("sram").bind(pads.back()->socket);
  };
  const auto held = sim::simulate(spec);
  EXPECT_GT(held.components.get("sram", "refused"), 0.0);
  EXPECT_GT(held.step_ns, at.step_ns);
}

TEST(SystemCEngine, AnExternalRegionNeedsTheSystemCEngineAndABoundTarget) {
  const auto spec = with_sram(external("loosely_timed"));
  try {
    sim::simulate(spec);
    FAIL() << "the native engine ran an external region";
  } catch (const config::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("memory.sram.impl"), std::string::npos) << e.what();
  }
  try {
    sim::simulate(on(spec, "systemc"));
    FAIL() << "an unbound external region ran";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("no target bound"), std::string::npos) << e.what();
  }
  auto wrong = on(spec, "systemc");
  wrong.bind = [](sim::ScBindings& b) { b.region("scratch"); };
  try {
    sim::simulate(wrong);
    FAIL() << "bound a region that does not exist";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("sram (memory.sram)"), std::string::npos) << e.what();
  }
}

namespace {

// A target that misbehaves: answers BEGIN_REQ with END_REQ and then never responds (`silent`), or
// answers every b_transport with an address error.
class Broken : public sc_core::sc_module {
 public:
  tlm_utils::simple_target_socket<Broken> socket;
  explicit Broken(sc_core::sc_module_name n) : sc_core::sc_module(n), socket("socket") {
    socket.register_b_transport(this, &Broken::b_transport);
    socket.register_nb_transport_fw(this, &Broken::nb_transport_fw);
  }

 private:
  void b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time&) {
    gp.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
  }
  tlm::tlm_sync_enum nb_transport_fw(tlm::tlm_generic_payload&, tlm::tlm_phase& phase, sc_core::sc_time&) {
    phase = tlm::END_REQ;
    return tlm::TLM_UPDATED;
  }
};

}  // namespace

TEST(SystemCEngine, ATargetThatNeverAnswersIsADeadlockErrorAndAnErrorResponseNamesTheRegion) {
  // No hang: the replay waits for the answer, SystemC runs out of events, and the run says why.
  std::unique_ptr<Broken> target;
  auto silent = on(with_sram(external("approximately_timed")), "systemc");
  silent.bind = [&target](sim::ScBindings& b) {
    target = std::make_unique<Broken>("broken");
    b.region("sram").bind(target->socket);
  };
  try {
    sim::simulate(silent);
    FAIL() << "a target that never answered let the run finish";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("deadlock"), std::string::npos) << e.what();
  }
  auto erring = on(with_sram(external("loosely_timed")), "systemc");
  erring.bind = silent.bind;
  try {
    sim::simulate(erring);
    FAIL() << "an error response was taken as served";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("memory.sram"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("ADDRESS_ERROR"), std::string::npos) << e.what();
  }
}
