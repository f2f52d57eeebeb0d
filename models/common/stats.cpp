// SPDX-License-Identifier: Apache-2.0
#include "models/common/stats.hpp"

#include <stdexcept>
#include <unordered_map>

namespace indexsim::model {

std::vector<size_t> StatSink::index(const std::string& component, const std::vector<std::string>& names) const {
  std::vector<size_t> out;
  for (const auto& n : names) {
    size_t i = 0;
    while (i < rows_.size() && !(rows_[i].unit_name == component && rows_[i].statistic == n)) ++i;
    if (i == rows_.size() || !rows_[i].counter)
      throw std::logic_error("StatSink::ratio: " + component + "." + n + " is not a counter added before the ratio");
    out.push_back(i);
  }
  return out;
}

void StatSink::recompute(const Ratio& r) {
  double num = 0, den = 0;
  for (size_t i : r.num) num += rows_[i].value;
  for (size_t i : r.den) den += rows_[i].value;
  rows_[r.row].value = den > 0 ? num / den : 0.0;
}

void StatSink::add_counters(const std::vector<Extra>& extra) {
  std::unordered_map<std::string, size_t> at;
  for (size_t i = 0; i < rows_.size(); ++i) at.emplace(key(rows_[i].unit_name, rows_[i].statistic), i);
  bool added = false;
  for (const Extra& e : extra) {
    if (e.value == 0) continue;
    added |= !e.simulated;
    const auto it = at.find(e.key);
    if (it != at.end()) {
      rows_[it->second].value += e.value;
      continue;
    }
    const size_t sep = e.key.find('\x1f');
    rows_.push_back({e.key.substr(0, sep), e.key.substr(sep + 1), e.value, e.unit, "", true, {}});
    at.emplace(e.key, rows_.size() - 1);
  }
  // A counter that pending levels add to says so (its own unit's figure is what reached it).
  for (size_t i = 0; i < rows_.size(); ++i) {
    const auto it = rows_[i].adds_to.empty() ? at.end() : at.find(rows_[i].adds_to);
    if (it == at.end()) continue;
    std::string& d = rows_[it->second].description;
    d += std::string(d.empty() ? "" : " ") + "[with the growth of " + rows_[i].unit_name + "." + rows_[i].statistic +
         ": counted when written]";
  }
  for (const Ratio& r : ratios_) recompute(r);
  if (!added) return;
  std::vector<bool> is_ratio(rows_.size(), false);
  for (const Ratio& r : ratios_) is_ratio[r.row] = true;
  for (size_t i = 0; i < rows_.size(); ++i) {
    StatRow& row = rows_[i];
    // Figures over a device's own busy window: bandwidths, utilisations, latencies, waits.
    bool window = false;
    for (const char* w : {"bandwidth", "utilisation", "latency", "wait", "stall"})
      window |= row.statistic.find(w) != std::string::npos;
    if (row.counter || is_ratio[i] || !window || row.statistic.rfind("peak", 0) == 0) continue;
    row.description += row.description.empty() ? "[the simulated kernels only]" : " [the simulated kernels only]";
  }
}

}  // namespace indexsim::model
