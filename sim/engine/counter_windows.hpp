// SPDX-License-Identifier: Apache-2.0
// The component counters of the work a replay does not simulate, so that the components table
// describes the whole step. The memory system's counters (unit "count" or "bytes") are read at every
// moment the machine is idle; between two such moments lies one segment. A simulated segment's
// growth is scaled up by the CTAs its sampled kernels left out (all CTAs / simulated CTAs: the rule
// that extrapolates their time, linear in CTAs), and the scaled growth is kept with its memo; a
// segment taken from a memo adds the memo's. Ratios of counters (hit rates) follow
// (model::StatSink::add_counters).
#pragma once

#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "models/common/stats.hpp"

namespace indexsim::sim {

class CounterWindows {
 public:
  using Report = std::function<void(model::StatSink&)>;
  explicit CounterWindows(Report report) : report_(std::move(report)) {}
  bool on() const { return bool(report_); }
  // Starts the first window (the replay's start).
  void start();
  // The machine is idle: the window since the last closes. `all_ctas` and `simulated_ctas` count the
  // CTAs of the kernels simulated in it. Returns its growth, scaled (what a memo of it keeps).
  std::vector<model::StatSink::Extra> close(double all_ctas, double simulated_ctas);
  // A segment taken from a memo: its counters were not made here.
  void add(const std::vector<model::StatSink::Extra>& memo);
  // What the simulated counters lack: the sampled-away CTAs' share and the reused segments'.
  std::vector<model::StatSink::Extra> unsimulated() const;

 private:
  std::vector<double> read();
  size_t slot(const std::string& key, const std::string& unit);
  Report report_;
  std::unordered_map<std::string, size_t> index_;
  std::vector<std::string> keys_, units_;
  std::vector<double> start_, extra_;
};

}  // namespace indexsim::sim
