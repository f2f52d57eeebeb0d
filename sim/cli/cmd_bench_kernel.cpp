// SPDX-License-Identifier: Apache-2.0
// `indexsim bench kernel copy|read|gemm`: calibration kernels, generated like any other kernel's trace
// and replayed by the same engine, compared with their roofline and the measured H200 figures of
// ../shared/reference/h200-measured.md (which the user passes in; nothing here is hard-coded).
#include <cstdio>
#include <iostream>

#include "sim/cli/cmd_bench.hpp"
#include "sim/cli/report.hpp"
#include "sim/engine/simulation.hpp"
#include "traces/generators/emulate.hpp"

namespace indexsim::cli {

namespace {

const char* kUsage =
    "usage: indexsim bench kernel --hardware NAME|FILE copy|read --bytes N [--ctas N]\n"
    "       indexsim bench kernel --hardware NAME|FILE gemm --m M --n N --k K [--dtype bf16|fp16|fp8]\n"
    "       common: [--set hardware.K=V]... [--fast] [--json] [--timeline FILE]\n";

int bench_kernel(const Args& args) {
  ArgParser ap(args);
  if (ap.flag("--help") || ap.flag("-h")) {
    std::cout << kUsage;
    return 0;
  }
  sim::RunSpec spec;
  spec.hardware = ap.value("--hardware");
  if (spec.hardware.empty()) throw std::invalid_argument(std::string("--hardware is required\n") + kUsage);
  spec.sets = ap.values("--set");
  sim::require_prefix(spec.sets, {"hardware"}, "bench kernel");
  spec.fast = ap.flag("--fast");
  spec.timeline = ap.value("--timeline");
  const bool json = ap.flag("--json");
  const uint64_t copy_bytes = ap.u64("--bytes", 0), copy_ctas = ap.u64("--ctas", 0);
  const uint64_t m = ap.u64("--m", 0), n = ap.u64("--n", 0), k = ap.u64("--k", 0);
  const std::string d = ap.value("--dtype", "bf16");
  const auto pos = ap.positional();
  if (pos.size() != 1) throw std::invalid_argument(std::string("name one kernel: copy, read or gemm\n") + kUsage);
  trace::TraceData td;
  double useful_bytes = 0, flops = 0;
  if (pos[0] == "copy" || pos[0] == "read") {
    const uint64_t bytes = copy_bytes;
    if (bytes == 0) throw std::invalid_argument(pos[0] + " needs --bytes N (> 0)");
    trace::CopyShape shape;
    shape.ctas = uint32_t(copy_ctas);
    shape.write = pos[0] == "copy";
    td = trace::emulate_copy(bytes, shape);
    useful_bytes = (shape.write ? 2.0 : 1.0) * double(bytes);
  } else if (pos[0] == "gemm") {
    if (!m || !n || !k) throw std::invalid_argument("gemm needs --m, --n and --k (> 0)");
    trace::Precision p;
    if (d == "bf16") p = trace::Precision::bf16;
    else if (d == "fp16") p = trace::Precision::fp16;
    else if (d == "fp8") p = trace::Precision::fp8;
    else throw std::invalid_argument("--dtype must be bf16, fp16 or fp8, not '" + d + "'");
    td = trace::emulate_gemm(m, n, k, p);
    flops = 2.0 * double(m) * double(n) * double(k);
  } else {
    throw std::invalid_argument("unknown kernel '" + pos[0] + "'\n" + kUsage);
  }
  ap.finish();
  spec.trace_data = &td;
  sim::RunResult r = sim::simulate(spec);
  const double s = r.step_ns * 1e-9;
  const double kernel_ns = r.kernels.empty() ? 0 : r.kernels.back().end_ns - r.kernels.front().start_ns;
  r.metric("kernel_time", kernel_ns / 1e3, "us");
  if (useful_bytes > 0) r.metric("achieved_bandwidth", useful_bytes / (kernel_ns * 1e-9) / 1e9, "GB/s");
  if (flops > 0) r.metric("achieved_tflops", flops / (kernel_ns * 1e-9) / 1e12, "TFLOP/s");
  if (json) {
    std::cout << r.to_json(true).dump(2) << "\n";
    return 0;
  }
  std::printf("bench kernel %s on %s (%s mode)\n", pos[0].c_str(), r.hardware.c_str(), spec.fast ? "fast" : "detailed");
  for (const auto& k : r.kernels)
    std::printf("  %-24s ctas %-7llu time %10.2f us  roofline %10.2f us  ratio %.3f  (%s-bound)\n", k.name.c_str(),
                (unsigned long long)k.ctas, k.duration_ns() / 1e3, k.roofline_ns / 1e3,
                k.roofline_ns > 0 ? k.duration_ns() / k.roofline_ns : 0.0, k.bound.c_str());
  std::printf("  kernel time        %12.3f us (launch overhead excluded; step %.3f us)\n", kernel_ns / 1e3, s * 1e6);
  if (useful_bytes > 0)
    std::printf("  achieved bandwidth %12.1f GB/s (bytes read + written / kernel time)\n", r.get_metric("achieved_bandwidth"));
  if (flops > 0) std::printf("  achieved           %12.1f TFLOP/s\n", r.get_metric("achieved_tflops"));
  std::printf("  L2 hit rate        %12.3f\n  requests simulated %12.0f\n  wall               %12.2f s\n",
              r.get_metric("l2_hit_rate"), r.get_metric("requests"), r.wall_s);
  return 0;
}

}  // namespace

INDEXSIM_BENCH_SUBCOMMAND("kernel", "replay a calibration kernel (copy, read, gemm) on a hardware config", bench_kernel);

}  // namespace indexsim::cli
