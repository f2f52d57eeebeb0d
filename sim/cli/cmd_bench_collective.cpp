// SPDX-License-Identifier: Apache-2.0
// `indexsim bench collective`: one collective (NCCL's all-reduce, all-gather, reduce-scatter,
// all-to-all, or DeepEP's dispatch/combine) over a range of message sizes, each emulated and
// replayed on one GPU of a symmetric group, printed in the layout of nccl-tests (size, time,
// algorithm and bus bandwidth) so that a published table can be compared line by line.
#include <cmath>
#include <cstdio>
#include <iostream>

#include "sim/cli/cli.hpp"
#include "sim/cli/cmd_bench.hpp"
#include "sim/core/config_load.hpp"
#include "sim/validation/kernel_bench.hpp"
#include "sim/validation/published.hpp"

namespace indexsim::cli {

namespace {

const char* kFooter =
    "OP: all_reduce, all_gather, reduce_scatter, alltoall (NCCL), dispatch, combine (DeepEP intranode;\n"
    "--low-latency: its low-latency kernels over NVLink).\n"
    "Sizes are nccl-tests' (the whole buffer; K, M, G suffixes); busbw = algbw x 2(n-1)/n (all_reduce)\n"
    "or (n-1)/n. Pin NCCL's choice with --set collectives.algorithm=ring|tree|nvls,\n"
    "collectives.protocol=ll|ll128|simple. --host-us-per-gpu X compares with nccl-tests run as one thread\n"
    "driving every GPU (-g G): an iteration takes at least G x X us (validate --published's harnesses).\n"
    "e.g. indexsim bench collective --hardware h100 --op all_reduce --gpus 8 --min-bytes 1K --max-bytes 1G";

uint64_t parse_size(const std::string& flag, const std::string& text) {
  // nccl-tests' suffixes: K, M, G (powers of 1024).
  if (text.empty()) throw std::invalid_argument(flag + ": empty size");
  size_t pos = 0;
  double v = 0;
  try {
    v = std::stod(text, &pos);
  } catch (const std::exception&) {
    throw std::invalid_argument(flag + " '" + text + "': not a size (a number, optionally K, M or G)");
  }
  const std::string suffix = text.substr(pos);
  const double mult = suffix.empty() ? 1 : suffix == "K" ? 1024.0 : suffix == "M" ? 1048576.0 : suffix == "G" ? 1073741824.0 : -1;
  if (mult < 0 || !(v > 0) || !std::isfinite(v))
    throw std::invalid_argument(flag + " '" + text + "': not a positive size (a number, optionally K, M or G)");
  // Range and whole bytes before the cast: converting nan, inf or 1e30 to an integer is undefined.
  const double bytes = v * mult;
  if (bytes >= 1e18) throw std::invalid_argument(flag + " '" + text + "': too large (at most 1e18 bytes)");
  if (bytes != std::floor(bytes)) throw std::invalid_argument(flag + " '" + text + "': not a whole number of bytes");
  return uint64_t(bytes);
}

int bench_collective(const Args& args) {
  Cli ap("bench collective", "A collective (NCCL, DeepEP) over message sizes, in nccl-tests' layout; one GPU simulated, its\n"
                             "peers symmetric.", kFooter);
  ap.option("--hardware NAME|FILE", "hardware preset or YAML file", true)
      .option("--op OP", "the collective (below)", true)
      .option("--gpus G", "GPUs taking part", true)
      .option("--bytes N", "one size")
      .option("--min-bytes A", "smallest size of a sweep (default 1K)")
      .option("--max-bytes B", "largest size of a sweep (default 1G)")
      .option("--factor F", "a sweep's step, above 1 (default 2)")
      .option("--tokens T", "dispatch, combine: tokens a rank sends")
      .option("--hidden H", "dispatch, combine: hidden size")
      .option("--topk K", "dispatch, combine: experts a token goes to")
      .option("--experts E", "dispatch, combine: routed experts")
      .option("--skew S", "dispatch, combine: routing skew (0: uniform)")
      .flag("--low-latency", "dispatch, combine: DeepEP's low-latency kernels (one message a token and expert)")
      .option("--host-us-per-gpu X", "NCCL collectives: the host's cost a GPU of a one-thread -g G loop (default 0: none)")
      .repeated("--set K=V", "hardware.K=V: override one hardware key")
      .flag("--detailed", "the detailed mode (default: fast)")
      .flag("--json", "print JSON");
  if (!ap.parse(args)) return 0;
  const std::string hardware = ap.value("--hardware");
  std::string op = ap.value("--op");
  if (hardware.empty() || op.empty()) throw std::invalid_argument("--hardware and --op are required (indexsim bench collective --help)");
  if (op == "alltoall") op = "all_to_all";
  if (op == "dispatch" || op == "combine") op = "ep_" + op;
  const std::string gpus = ap.value("--gpus");
  if (gpus.empty()) throw std::invalid_argument("--gpus is required (indexsim bench collective --help)");
  auto sets = ap.values("--set");
  sim::require_prefix(sets, {"hardware"}, "bench collective");
  const bool fast = !ap.has("--detailed");
  const bool json = ap.has("--json");
  const bool ep = op == "ep_dispatch" || op == "ep_combine";
  if (ep) ap.only_for({"--bytes", "--min-bytes", "--max-bytes", "--factor"}, "NCCL collectives, not to " + op);
  else ap.only_for({"--tokens", "--hidden", "--topk", "--experts", "--skew", "--low-latency"}, "dispatch and combine, not to " + op);
  if (ep) ap.only_for({"--host-us-per-gpu"}, "NCCL collectives, not to " + op);
  sim::Harness loop;
  loop.name = "--host-us-per-gpu";
  loop.host_us_per_gpu = ap.f64("--host-us-per-gpu", 0);
  if (!(loop.host_us_per_gpu >= 0) || loop.host_us_per_gpu > 1e6)
    throw std::invalid_argument("--host-us-per-gpu " + ap.value("--host-us-per-gpu") + ": must lie between 0 and 1e6 us");
  std::vector<uint64_t> sizes;
  std::string ep_keys;
  if (ep) {
    for (const char* k : {"tokens", "hidden", "topk", "experts", "skew"})
      if (ap.has(std::string("--") + k)) ep_keys += std::string(k) + ": " + ap.value(std::string("--") + k) + "\n";
    if (ap.has("--low-latency")) ep_keys += "low_latency: true\n";
    sizes.push_back(0);
  } else if (ap.has("--bytes")) {
    sizes.push_back(parse_size("--bytes", ap.value("--bytes")));
  } else {
    const uint64_t lo = parse_size("--min-bytes", ap.value("--min-bytes", "1K"));
    const uint64_t hi = parse_size("--max-bytes", ap.value("--max-bytes", "1G"));
    const double f = ap.f64("--factor", 2);
    if (f <= 1) throw std::invalid_argument("--factor " + std::to_string(f) + ": must be above 1");
    if (hi < lo) throw std::invalid_argument("--max-bytes is below --min-bytes");
    for (double s = double(lo); s <= double(hi) * (1 + 1e-9); s *= f) sizes.push_back(uint64_t(s));
  }

  // Every case is read (and checked) before anything is printed.
  std::vector<sim::KernelCase> kcs;
  for (const uint64_t size : sizes) {
    const std::string yaml = ep ? ep_keys + "gpus: " + gpus + "\n" : "bytes: " + std::to_string(size) + "\ngpus: " + gpus + "\n";
    auto doc = config::Document::load_string(yaml, "bench collective flags");
    kcs.push_back(sim::read_kernel_case(op, doc->root()));
    doc->check_unused();
  }
  nlohmann::json rows = nlohmann::json::array();
  if (!json) {
    std::printf("# indexsim bench collective: %s over %s GPUs on %s (%s mode); one GPU simulated, its peers symmetric\n",
                op.c_str(), gpus.c_str(), hardware.c_str(), fast ? "fast" : "detailed");
    if (ep)
      std::printf("#%12s %10s %12s %12s %8s  %s\n", "tokens", "recv (B)", "time (us)", "bw (GB/s)", "ctas", "(DeepEP: bytes a rank receives, its own included)");
    else
      std::printf("#%12s %12s %6s %10s %10s %10s  %-5s %-6s %4s\n", "size (B)", "count", "type", "time (us)", "algbw",
                  "busbw", "algo", "proto", "chan");
  }
  for (const sim::KernelCase& kc : kcs) {
    const uint64_t size = kc.bytes;
    sim::KernelRun k = sim::run_kernel_case(kc, hardware, sets, fast);
    const auto launch = k.run.config["step"]["trace"].value("launch", nlohmann::json::object());
    const double kernel_us = k.kernel_ns / 1e3;
    const bool host_bound = !ep && loop.bound(k, kc.gpus);
    const double us = k.kernel_ns / 1e3;
    const double bus = k.figure("GB/s");
    nlohmann::json row = {{"op", op}, {"gpus", kc.gpus}, {"time_us", us}, {"launch", launch}};
    if (ep) {
      row["received_bytes"] = k.bytes;
      row["bandwidth_GBps"] = bus;
      if (!json)
        std::printf(" %12llu %10.0f %12.2f %12.2f %8s\n", (unsigned long long)kc.ep.tokens, k.bytes, us, bus,
                    launch.value("ctas", nlohmann::json()).dump().c_str());
    } else {
      const double alg = bus / sim::bus_factor(kc);
      row.update({{"bytes", size}, {"algbw_GBps", alg}, {"busbw_GBps", bus}, {"kernel_us", kernel_us},
                  {"host_bound", host_bound}});
      if (!json)
        std::printf(" %12llu %12llu %6s %10.2f %10.2f %10.2f  %-5s %-6s %4d%s\n", (unsigned long long)size,
                    (unsigned long long)(size / 4), "float", us, alg, bus, launch.value("algorithm", "?").c_str(),
                    launch.value("protocol", "?").c_str(), launch.value("channels", 0),
                    host_bound ? "  host-bound" : "");
    }
    rows.push_back(row);
  }
  if (json) std::cout << rows.dump(2) << "\n";
  return 0;
}

}  // namespace

INDEXSIM_BENCH_SUBCOMMAND("collective", "a collective (NCCL, DeepEP) over message sizes, in nccl-tests' layout",
                          bench_collective);

}  // namespace indexsim::cli
