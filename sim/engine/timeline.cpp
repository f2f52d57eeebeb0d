// SPDX-License-Identifier: Apache-2.0
#include "sim/engine/timeline.hpp"

#include <algorithm>
#include <fstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

namespace indexsim::sim {

void Timeline::cta(uint32_t kernel, uint32_t unit, model::Tick start, model::Tick end) {
  if (!on()) return;
  auto& span = spans_[{kernel, unit / kGroup}];
  if (span.second == 0) span.first = start;
  span.first = std::min(span.first, start);
  span.second = std::max(span.second, end);
}

void Timeline::write(const std::vector<KernelResult>& kernels) const {
  if (!on()) return;
  nlohmann::json ev = nlohmann::json::array();
  ev.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", 1}, {"args", {{"name", "streams"}}}});
  ev.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", 2}, {"args", {{"name", unit_name_ + " groups"}}}});
  for (const auto& k : kernels)
    ev.push_back({{"name", k.name}, {"cat", k.kind}, {"ph", "X"}, {"pid", 1}, {"tid", k.stream},
                  {"ts", k.start_ns / 1000.0}, {"dur", k.duration_ns() / 1000.0},
                  {"args", {{"bytes_read", k.bytes_read}, {"flops", k.flops}, {"roofline_ns", k.roofline_ns}}}});
  for (const auto& [key, span] : spans_)
    ev.push_back({{"name", kernels[key.first].name}, {"ph", "X"}, {"pid", 2}, {"tid", key.second},
                  {"ts", model::ps_to_ns(span.first) / 1000.0},
                  {"dur", model::ps_to_ns(span.second - span.first) / 1000.0}});
  for (uint32_t g = 0; g * kGroup < units_; ++g)
    ev.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", 2}, {"tid", g},
                  {"args", {{"name", unit_name_ + " " + std::to_string(g * kGroup) + "-" +
                                         std::to_string(std::min(units_, (g + 1) * kGroup) - 1)}}}});
  std::ofstream f(path_);
  if (!f) throw std::runtime_error("cannot write timeline " + path_);
  f << nlohmann::json{{"traceEvents", ev}, {"displayTimeUnit", "ns"}}.dump();
}

}  // namespace indexsim::sim
