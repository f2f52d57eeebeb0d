// SPDX-License-Identifier: Apache-2.0
// Statistics are plain counters owned by their component. A component reports them, once, at the
// end of a run, as flat rows with a unit and a description: no string lookups on the hot path.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace indexsim::model {

struct StatRow {
  std::string unit_name;   // e.g. "hbm", "l2", "sm"
  std::string statistic;   // e.g. "row_hit_rate"
  double value;
  std::string unit;        // e.g. "fraction", "bytes", "ns", "count"
  std::string description;
  // A counter adds up over a run (its unit is "count" or "bytes"): the statistics of kernels that
  // were not simulated (reused, sampled away) can be added to it.
  bool counter = false;
  // A level that will reach another component's counter later: a write-back cache's dirty bytes,
  // which its backing region counts as written when they are evicted. Its growth over a run is added
  // to that counter (key(component, statistic) here), so that a write counts when it is made
  // (sim/engine/counter_windows.hpp). Empty for every other row.
  std::string adds_to;
};

class StatSink {
 public:
  void add(const std::string& component, const std::string& statistic, double value,
           const std::string& unit, const std::string& description = "") {
    rows_.push_back({component, statistic, value, unit, description, unit == "count" || unit == "bytes", {}});
  }
  // A level (see StatRow::adds_to) whose growth counts towards `to_component`'s `to_statistic`.
  void pending(const std::string& component, const std::string& statistic, double value, const std::string& unit,
               const std::string& to_component, const std::string& to_statistic, const std::string& description) {
    rows_.push_back({component, statistic, value, unit, description, false, key(to_component, to_statistic)});
  }
  // A fraction that is a ratio of sums of this component's counters, already added: the figure
  // follows its counters when they are adjusted (add_counters). 0 when the denominator is.
  void ratio(const std::string& component, const std::string& statistic, const std::vector<std::string>& numerator,
             const std::vector<std::string>& denominator, const std::string& description = "") {
    Ratio r{rows_.size(), index(component, numerator), index(component, denominator)};
    rows_.push_back({component, statistic, 0.0, "fraction", description, false, {}});
    ratios_.push_back(std::move(r));
    recompute(ratios_.back());
  }
  // Counters of work that was not simulated, by key(component, statistic), with their units.
  struct Extra {
    std::string key, unit;
    double value;
    // Counted from the simulated work itself (a pending level's growth), not standing for work
    // that was not simulated: it marks no window figure as partial.
    bool simulated = false;
  };
  static std::string key(const std::string& component, const std::string& statistic) {
    return component + '\x1f' + statistic;
  }
  // Adds each extra to its counter row (a new row if the simulated part never had one) and
  // recomputes every ratio. The rows that are neither (bandwidths, utilisations, latencies over a
  // device's own window) stay the simulated part's, and their descriptions say so.
  void add_counters(const std::vector<Extra>& extra);
  const std::vector<StatRow>& rows() const { return rows_; }
  // Names of MemRequest tags (index = tag), given by whoever tags the requests; a tag without one
  // reports as "tag<N>".
  std::vector<std::string> tag_names;
  std::string tag_name(size_t tag) const {
    return tag < tag_names.size() && !tag_names[tag].empty() ? tag_names[tag] : "tag" + std::to_string(tag);
  }
  // The value of one row, or `fallback` when absent (for tests and summaries, not the hot path).
  double get(const std::string& component, const std::string& statistic, double fallback = -1) const {
    for (const auto& r : rows_)
      if (r.unit_name == component && r.statistic == statistic) return r.value;
    return fallback;
  }

 private:
  struct Ratio {
    size_t row;
    std::vector<size_t> num, den;
  };
  std::vector<size_t> index(const std::string& component, const std::vector<std::string>& names) const;
  void recompute(const Ratio& r);
  std::vector<StatRow> rows_;
  std::vector<Ratio> ratios_;
};

// A cache's reads broken down by their requests' tags (MemRequest::tag): bytes asked for and bytes
// it served from what it held. Reported as read_bytes.<tag name> and read_hit_bytes.<tag name>.
struct TagCounters {
  static constexpr size_t kTags = 16;
  std::array<uint64_t, kTags> read_bytes{}, hit_bytes{};
  void read(uint8_t tag, uint64_t bytes, uint64_t hit) {
    if (tag == 0 || tag >= kTags) return;
    read_bytes[tag] += bytes;
    hit_bytes[tag] += hit;
  }
  void report(StatSink& sink, const std::string& component) const {
    for (size_t t = 1; t < kTags; ++t) {
      if (read_bytes[t] == 0) continue;
      sink.add(component, "read_bytes." + sink.tag_name(t), double(read_bytes[t]), "bytes",
               "bytes of reads of this kind that reached it");
      sink.add(component, "read_hit_bytes." + sink.tag_name(t), double(hit_bytes[t]), "bytes",
               "of those, the bytes it served from what it held");
    }
  }
};

}  // namespace indexsim::model
