// SPDX-License-Identifier: Apache-2.0
#include "sim/engine/counter_windows.hpp"

namespace indexsim::sim {

size_t CounterWindows::slot(const std::string& key, const std::string& unit) {
  const auto [it, added] = index_.emplace(key, keys_.size());
  if (added) {
    keys_.push_back(key);
    units_.push_back(unit);
    extra_.push_back(0.0);
    counted_.push_back(0.0);
    start_.push_back(0.0);
    to_.push_back(kNone);
  }
  return it->second;
}

std::vector<double> CounterWindows::read() {
  model::StatSink sink;
  report_(sink);
  std::vector<double> v(keys_.size(), 0.0);
  for (const auto& r : sink.rows()) {
    if (!r.counter && r.adds_to.empty()) continue;
    const size_t i = slot(model::StatSink::key(r.unit_name, r.statistic), r.unit);
    if (!r.adds_to.empty()) to_[i] = slot(r.adds_to, r.unit);
    if (i >= v.size()) v.resize(i + 1, 0.0);
    v[i] = r.value;
  }
  return v;
}

void CounterWindows::start() {
  if (on()) start_ = read();
}

std::vector<model::StatSink::Extra> CounterWindows::close(double all_ctas, double simulated_ctas) {
  std::vector<model::StatSink::Extra> grown;
  if (!on()) return grown;
  const std::vector<double> now = read();
  const double scale = simulated_ctas > 0 ? all_ctas / simulated_ctas : 1.0;
  for (size_t i = 0; i < now.size(); ++i) {
    const double d = now[i] - (i < start_.size() ? start_[i] : 0.0);
    if (d == 0) continue;
    if (to_[i] != kNone) {  // a pending level: its whole growth is written, simulated share included
      counted_[to_[i]] += d;
      extra_[to_[i]] += d * (scale - 1.0);
      grown.push_back({keys_[to_[i]], units_[to_[i]], d * scale});
      continue;
    }
    extra_[i] += d * (scale - 1.0);
    grown.push_back({keys_[i], units_[i], d * scale});
  }
  start_ = now;
  return grown;
}

void CounterWindows::add(const std::vector<model::StatSink::Extra>& memo) {
  if (!on()) return;
  for (const auto& e : memo) extra_[slot(e.key, e.unit)] += e.value;
}

std::vector<model::StatSink::Extra> CounterWindows::unsimulated() const {
  std::vector<model::StatSink::Extra> v;
  for (size_t i = 0; i < keys_.size(); ++i) {
    if (extra_[i] != 0) v.push_back({keys_[i], units_[i], extra_[i]});
    if (counted_[i] != 0) v.push_back({keys_[i], units_[i], counted_[i], true});
  }
  return v;
}

}  // namespace indexsim::sim
