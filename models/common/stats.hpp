// SPDX-License-Identifier: Apache-2.0
// Statistics are plain counters owned by their component. A component reports them, once, at the
// end of a run, as flat rows with a unit and a description: no string lookups on the hot path.
#pragma once

#include <string>
#include <vector>

namespace indexsim::model {

struct StatRow {
  std::string unit_name;   // e.g. "hbm", "l2", "sm"
  std::string statistic;   // e.g. "row_hit_rate"
  double value;
  std::string unit;        // e.g. "fraction", "bytes", "ns", "count"
  std::string description;
};

class StatSink {
 public:
  void add(const std::string& component, const std::string& statistic, double value,
           const std::string& unit, const std::string& description = "") {
    rows_.push_back({component, statistic, value, unit, description});
  }
  const std::vector<StatRow>& rows() const { return rows_; }
  // The value of one row, or `fallback` when absent (for tests and summaries, not the hot path).
  double get(const std::string& component, const std::string& statistic, double fallback = -1) const {
    for (const auto& r : rows_)
      if (r.unit_name == component && r.statistic == statistic) return r.value;
    return fallback;
  }

 private:
  std::vector<StatRow> rows_;
};

}  // namespace indexsim::model
