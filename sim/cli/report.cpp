// SPDX-License-Identifier: Apache-2.0
#include "sim/cli/report.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <vector>

#include "models/common/units.hpp"

namespace indexsim::cli {

std::string fmt(const char* f, double v) {
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}

namespace {
std::string fmts(const char* f, const std::string& v) {
  char b[256];
  std::snprintf(b, sizeof b, f, v.c_str());
  return b;
}
}  // namespace

void print_result(std::ostream& os, const sim::RunResult& r, bool per_kernel) {
  os << "run " << r.key << "  hardware " << r.hardware << "  workload " << r.workload << "  mode "
     << r.config.value("mode", "") << "  code " << r.code_version << "\n\n";
  // Per layer: time as the span from the first kernel's start to the last one's end.
  struct Layer {
    double start = 1e300, end = 0, bytes = 0, flops = 0, roof = 0;
    int kernels = 0;
  };
  std::map<int, Layer> layers;
  for (const auto& k : r.kernels) {
    auto& l = layers[k.layer];
    l.start = std::min(l.start, k.start_ns);
    l.end = std::max(l.end, k.end_ns);
    l.bytes += double(k.bytes_read + k.bytes_written);
    l.flops += k.flops;
    l.roof += k.roofline_ns;
    l.kernels++;
  }
  os << "layer  kernels   span_us      bytes          GFLOP   roofline_us\n";
  for (const auto& [id, l] : layers)
    os << fmt("%5.0f", id) << fmt("  %7.0f", l.kernels) << fmt("  %9.2f", (l.end - l.start) / 1e3) << "  "
       << fmts("%-14s", human_bytes(l.bytes)) << fmt(" %9.3f", l.flops / 1e9) << fmt("  %11.2f", l.roof / 1e3)
       << "\n";
  if (per_kernel) {
    os << "\nkernel                              stream  start_us   time_us  roof_us  ratio  bound    bytes          GFLOP  "
          "simulated  wall_s\n";
    for (const auto& k : r.kernels)
      os << fmts("%-36s", k.name.substr(0, 36)) << fmt(" %5.0f", k.stream) << fmt("  %8.2f", k.start_ns / 1e3)
         << fmt("  %8.2f", k.duration_ns() / 1e3) << fmt("  %7.2f", k.roofline_ns / 1e3)
         << fmt("  %5.2f", k.roofline_ns > 0 ? k.duration_ns() / k.roofline_ns : 0) << "  " << fmts("%-7s", k.bound)
         << "  " << fmts("%-14s", human_bytes(double(k.bytes_read + k.bytes_written)))
         << fmt(" %8.3f", k.flops / 1e9) << "  " << fmts("%-9s", k.simulated) << fmt(" %7.2f", k.wall_s) << "\n";
    // Where the run's host time went, by kernel kind (what a faster simulator has to make cheaper).
    std::map<std::string, double> by_kind;
    double simulated_wall = 0;
    for (const auto& k : r.kernels) by_kind[k.kind] += k.wall_s, simulated_wall += k.wall_s;
    std::vector<std::pair<double, std::string>> order;
    for (const auto& [kind, w] : by_kind)
      if (w > 0) order.push_back({-w, kind});
    std::sort(order.begin(), order.end());
    os << "\nhost wall by kernel kind (kernels that overlap share it):";
    for (const auto& [w, kind] : order)
      os << " " << kind << fmt(" %.2f s", -w) << fmt(" (%.0f %%)", simulated_wall > 0 ? -100 * w / simulated_wall : 0) << ";";
    os << "\n";
  }
  os << "\n";
  for (const auto& m : r.metrics) {
    if (m.unit == "bytes") os << fmts("%-28s", m.name) << " " << human_bytes(m.value) << "\n";
    else os << fmts("%-28s", m.name) << " " << fmt("%.6g", m.value) << " " << m.unit << "\n";
  }
  if (!r.techniques["thresholds_tripped"].empty())
    os << "thresholds tripped: " << r.techniques["thresholds_tripped"].dump() << "\n";
  os << "\ncomponent statistics\n";
  for (const auto& c : r.components.rows())
    os << "  " << fmts("%-10s", c.unit_name) << " " << fmts("%-22s", c.statistic) << " "
       << fmt("%14.6g", c.value) << " " << c.unit << "\n";
  os << fmt("\nwall %.2f s\n", r.wall_s);
}

}  // namespace indexsim::cli

#include "sim/store/store.hpp"

namespace indexsim::cli {
std::unique_ptr<sim::Store> open_store(const std::string& db) {
  return db.empty() ? nullptr : std::make_unique<sim::Store>(db);
}
}  // namespace indexsim::cli
