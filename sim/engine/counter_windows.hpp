// SPDX-License-Identifier: Apache-2.0
// The component counters of the work a replay does not simulate, so that the components table
// describes the whole step. The memory system's counters (unit "count" or "bytes") are read at every
// moment the machine is idle; between two such moments lies one segment. A simulated segment's
// growth is scaled up by the CTAs its sampled kernels left out (all CTAs / simulated CTAs: the rule
// that extrapolates their time, linear in CTAs), and the scaled growth is kept with its memo; a
// segment taken from a memo adds the memo's. Ratios of counters (hit rates) follow
// (model::StatSink::add_counters).
//
// A pending level (model::StatRow::adds_to: a write-back cache's dirty bytes for a region) counts
// towards its target counter as it grows, in every window, simulated ones included: a write counts
// when it is made, not when its line is evicted. Each window's writes are then its own, whatever
// comes after it, so a reused segment carries its writes (its memo holds the growth) where it would
// otherwise leave nothing dirty for the simulated segments after it to write back, and a run's
// writes include those still dirty at its end: bytes written = writebacks + growth of what is held
// dirty = bytes made dirty, per region.
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
  // What the simulated counters lack: the sampled-away CTAs' share and the reused segments', and
  // the simulated windows' pending growth (flagged `simulated`).
  std::vector<model::StatSink::Extra> unsimulated() const;

 private:
  std::vector<double> read();
  size_t slot(const std::string& key, const std::string& unit);
  Report report_;
  std::unordered_map<std::string, size_t> index_;
  std::vector<std::string> keys_, units_;
  static constexpr size_t kNone = ~size_t{0};
  std::vector<size_t> to_;  // a pending level's target counter slot; kNone for counters
  std::vector<double> start_, extra_, counted_;
};

}  // namespace indexsim::sim
