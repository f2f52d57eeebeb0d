// SPDX-License-Identifier: Apache-2.0
// Speed of the DRAM timing core alone: H200 preset, closed-loop streaming 64 B reads (40 per
// pseudo-channel in flight), no SystemC. items_per_second is requests simulated per wall second
// (target: >= 10 M on one core); the counters give the simulated bandwidth as a share of peak.
#include <benchmark/benchmark.h>

#include <string>

#include <systemc>

#include "models/dram/closed_loop.hpp"
#include "models/dram/dram.hpp"
#include "models/common/params.hpp"

namespace {

std::unique_ptr<indexsim::model::MemoryDevice> h200_hbm() {
  auto doc = indexsim::config::Document::load_file(std::string(INDEXSIM_SOURCE_DIR) + "/configs/hardware/h200.yaml");
  return indexsim::model::make_memory_device(doc->root().child("memory").child("hbm"));
}

void run(benchmark::State& state, indexsim::model::dram::Pattern pattern) {
  const uint64_t requests = static_cast<uint64_t>(state.range(0));
  double fraction = 0;
  for (auto _ : state) {
    state.PauseTiming();
    auto dev = h200_hbm();
    indexsim::model::dram::ClosedLoopSpec spec;
    spec.pattern = pattern;
    spec.bytes = 64;
    spec.requests = requests;
    spec.outstanding = 40 * 192;
    state.ResumeTiming();
    const auto r = run_closed_loop(*dev, spec);
    fraction = r.steady_bandwidth_GBps() / dev->peak_bandwidth_GBps();
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * requests));
  state.counters["sustained_fraction_of_peak"] = fraction;
}

void BM_H200StreamingReads(benchmark::State& state) { run(state, indexsim::model::dram::Pattern::kStream); }
void BM_H200RandomReads(benchmark::State& state) { run(state, indexsim::model::dram::Pattern::kRandom); }

}  // namespace

BENCHMARK(BM_H200StreamingReads)->Arg(1000000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_H200RandomReads)->Arg(100000)->Unit(benchmark::kMillisecond);
// The models library links SystemC, whose main() calls sc_main: Google Benchmark runs from there.
int sc_main(int argc, char* argv[]) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
