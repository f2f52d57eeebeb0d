// SPDX-License-Identifier: Apache-2.0
// A user's own TLM-2.0 model beside IndexSim's units: a scratchpad memory that answers every access a
// fixed latency after it arrives, bound to the H200's `sram` region (where IndexShare pins the first
// layer's indexer cache), and a GLM-5 decode step run through it under the SystemC engine.
//
// It prints the step with the project's own SRAM model (native engine) and the step with the
// scratchpad, and what the scratchpad served. The scratchpad is what the project calls an ideal
// memory of that latency (impl: fixed_latency), so its step is exactly that run's:
//   indexsim run --hardware h200 --workload glm-5 --techniques indexshare --fast \
//     --set 'hardware.memory.sram={impl: fixed_latency, latency_ns: L, capacity_GiB: ..., peak_bandwidth_GBps: ...}'
//
// Build against the installed package (README "SystemC"):
//   cmake --install build --prefix /opt/indexsim
//   cmake -S examples/systemc -B build-example -DCMAKE_PREFIX_PATH=/opt/indexsim && cmake --build build-example
//   build-example/scratchpad --latency-ns 40 --context 16384
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_target_socket.h>

#include "models/common/tlm_target.hpp"  // RequesterExtension: which SM, which tensor class
#include "sim/engine/simulation.hpp"
#include "sim/engine/systemc.hpp"            // ScBindings: the regions to bind
#include "traces/records.hpp"                // TensorClass

// The user's model. Loosely timed: b_transport adds the latency to the initiator's delay and
// returns; it never waits, so the replay's thread runs on (temporal decoupling).
class Scratchpad : public sc_core::sc_module {
 public:
  tlm_utils::simple_target_socket<Scratchpad> socket;
  Scratchpad(sc_core::sc_module_name name, double latency_ns)
      : sc_core::sc_module(name), socket("socket"), latency_(latency_ns, sc_core::SC_NS) {
    socket.register_b_transport(this, &Scratchpad::b_transport);
  }
  uint64_t reads = 0, writes = 0, bytes = 0;
  uint64_t from_indexer_cache = 0;  // requests whose tensor class is the indexer cache

 private:
  void b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
    (gp.is_write() ? writes : reads) += 1;
    bytes += gp.get_data_length();
    // The extension's tag is 1 + the tensor's class.
    constexpr auto indexer_cache = 1 + static_cast<uint8_t>(indexsim::trace::TensorClass::indexer_cache);
    if (const auto* who = gp.get_extension<indexsim::model::RequesterExtension>(); who && who->tag == indexer_cache)
      ++from_indexer_cache;
    delay += latency_;
    gp.set_response_status(tlm::TLM_OK_RESPONSE);
  }
  sc_core::sc_time latency_;
};

namespace {

void usage() {
  std::fprintf(stderr, "usage: scratchpad [--latency-ns L] [--context N] [--set section.key=value ...]\n");
}

double number(const char* option, const char* text) {
  char* end = nullptr;
  const double v = std::strtod(text, &end);
  if (end == text || *end != '\0' || !(v >= 0)) throw std::invalid_argument(std::string(option) + " " + text + ": not a number >= 0");
  return v;
}

}  // namespace

int sc_main(int argc, char* argv[]) {
  double latency_ns = 40;
  uint64_t context = 16384;
  std::vector<std::string> sets;
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      if (i + 1 >= argc) throw std::invalid_argument(a + " needs a value");
      if (a == "--latency-ns") latency_ns = number("--latency-ns", argv[++i]);
      else if (a == "--context") context = static_cast<uint64_t>(number("--context", argv[++i]));
      else if (a == "--set") sets.push_back(argv[++i]);
      else throw std::invalid_argument("unknown argument '" + a + "'");
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "scratchpad: %s\n", e.what());
    usage();
    return 2;
  }

  indexsim::sim::RunSpec spec;
  spec.hardware = "h200";
  spec.workload = "glm-5";
  spec.techniques = "indexshare";  // pins the first layer's indexer cache to the `sram` region
  spec.step.context = context;
  spec.fast = true;
  spec.sets = sets;

  // The scratchpad takes the SRAM's place: the same capacity and peak (what placement and the
  // rooflines read), its own timing.
  char region[256];
  std::snprintf(region, sizeof region,
                "hardware.memory.sram={impl: tlm_target, capacity_GiB: 0.01171875, peak_bandwidth_GBps: 22732.8, "
                "idle_read_latency_ns: %.17g, coding_style: loosely_timed}", latency_ns);
  indexsim::sim::RunSpec through_pad = spec;
  through_pad.sets.push_back(region);
  through_pad.engine = "systemc";
  std::unique_ptr<Scratchpad> pad;
  through_pad.bind = [&pad, latency_ns](indexsim::sim::ScBindings& b) {
    // Made here, during the run's elaboration: it belongs to the run's SystemC context.
    pad = std::make_unique<Scratchpad>("scratchpad", latency_ns);
    b.region("sram").bind(pad->socket);
  };

  try {
    const auto native = indexsim::sim::simulate(spec);
    const auto ext = indexsim::sim::simulate(through_pad);
    std::printf("GLM-5 decode at %llu tokens, IndexShare on the H200\n", static_cast<unsigned long long>(context));
    std::printf("step_us_native_sram %.17g\n", native.step_ns / 1e3);
    std::printf("step_us_scratchpad %.17g\n", ext.step_ns / 1e3);
    std::printf("difference_us %.17g\n", (ext.step_ns - native.step_ns) / 1e3);
    std::printf("scratchpad_latency_ns %.17g\n", latency_ns);
    std::printf("scratchpad_reads %llu\nscratchpad_writes %llu\nscratchpad_bytes %llu\nscratchpad_indexer_cache_requests %llu\n",
                static_cast<unsigned long long>(pad->reads), static_cast<unsigned long long>(pad->writes),
                static_cast<unsigned long long>(pad->bytes), static_cast<unsigned long long>(pad->from_indexer_cache));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "scratchpad: %s\n", e.what());
    return 1;
  }
  return 0;
}
