// SPDX-License-Identifier: Apache-2.0
#include "sim/engine/timeline.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <set>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "models/common/output_file.hpp"

namespace indexsim::sim {

namespace {
constexpr int kStreams = 1, kGroups = 2, kCounters = 3;  // trace-event process ids

double us(model::Tick ps) { return model::ps_to_ns(ps) / 1000.0; }

// The cumulative statistics the counter tracks are made of, by the statistic's name alone (the
// timeline never learns which device reports them).
bool counted(const std::string& statistic) {
  static const std::set<std::string> names = {"bytes_read", "bytes_written", "read_hits", "read_misses", "hits", "misses"};
  return names.count(statistic) != 0;
}
}  // namespace

Timeline::Timeline(std::string path, const std::vector<std::pair<std::string, uint32_t>>& processors)
    : path_(std::move(path)) {
  uint32_t group = 0;
  for (const auto& [name, units] : processors) {
    procs_.push_back({name, units, group});
    group += (units + kGroup - 1) / kGroup;
  }
}

void Timeline::cta(uint32_t kernel, uint32_t proc, uint32_t unit, model::Tick start, model::Tick end) {
  if (!on()) return;
  auto& span = spans_[{kernel, procs_[proc].first_group + unit / kGroup}];
  if (span.second == 0) span.first = start;
  span.first = std::min(span.first, start);
  span.second = std::max(span.second, end);
}

void Timeline::sample(model::Tick now, const model::StatSink& stats, model::Tick resident_ps) {
  if (!on()) return;
  Sample s{now, resident_ps, {}};
  for (const auto& r : stats.rows())
    if (counted(r.statistic)) s.values[r.unit_name + "/" + r.statistic] = r.value;
  samples_.push_back(std::move(s));
  if (samples_.size() > kMaxSamples) {
    // Every other sample goes, the interval doubles: the values are cumulative, so the deltas
    // between the samples kept are still exact.
    std::vector<Sample> kept;
    for (size_t i = 0; i < samples_.size(); i += 2) kept.push_back(std::move(samples_[i]));
    if (kept.back().t != samples_.back().t) kept.push_back(std::move(samples_.back()));
    samples_ = std::move(kept);
    interval_ *= 2;
  }
}

void Timeline::write(const std::vector<KernelResult>& kernels,
                     const std::vector<std::pair<uint32_t, uint32_t>>& edges) const {
  if (!on()) return;
  nlohmann::json ev = nlohmann::json::array();
  auto process = [&](int pid, const std::string& name) {
    ev.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", pid}, {"args", {{"name", name}}}});
    ev.push_back({{"name", "process_sort_index"}, {"ph", "M"}, {"pid", pid}, {"args", {{"sort_index", pid}}}});
  };
  process(kStreams, "streams");
  std::string group_names;
  for (const Proc& p : procs_) group_names += (group_names.empty() ? "" : " and ") + p.unit_name;
  process(kGroups, group_names + " groups");
  process(kCounters, "counters");

  // Streams, named by the kernel kinds they carry.
  std::map<uint32_t, std::vector<std::string>> kinds;
  for (const auto& k : kernels) {
    auto& v = kinds[k.stream];
    if (std::find(v.begin(), v.end(), k.kind) == v.end()) v.push_back(k.kind);
  }
  for (const auto& [stream, v] : kinds) {
    std::string name = "stream " + std::to_string(stream) + ":";
    for (size_t i = 0; i < v.size() && i < 4; ++i) name += (i ? ", " : " ") + v[i];
    if (v.size() > 4) name += ", ...";
    ev.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", kStreams}, {"tid", stream}, {"args", {{"name", name}}}});
  }
  for (const auto& k : kernels)
    ev.push_back({{"name", k.name}, {"cat", k.kind}, {"ph", "X"}, {"pid", kStreams}, {"tid", k.stream},
                  {"ts", k.start_ns / 1000.0}, {"dur", k.duration_ns() / 1000.0},
                  {"args", {{"bytes_read", k.bytes_read}, {"bytes_written", k.bytes_written}, {"flops", k.flops},
                            {"roofline_ns", k.roofline_ns}, {"simulated", k.simulated}, {"layer", k.layer}}}});

  // Unit groups: the CTAs' spans; reused kernels over every group of their processor; sampled
  // kernels' extrapolated tails.
  uint32_t groups = 0;
  for (const Proc& p : procs_)
    for (uint32_t g = 0; g * kGroup < p.units; ++g, ++groups)
      ev.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", kGroups}, {"tid", p.first_group + g},
                    {"args", {{"name", p.unit_name + " " + std::to_string(g * kGroup) + "-" +
                                           std::to_string(std::min(p.units, (g + 1) * kGroup) - 1)}}}});
  std::map<uint32_t, model::Tick> last_end;  // kernel -> its last simulated CTA's end
  for (const auto& [key, span] : spans_) {
    ev.push_back({{"name", kernels[key.first].name}, {"cat", kernels[key.first].kind}, {"ph", "X"}, {"pid", kGroups},
                  {"tid", key.second}, {"ts", us(span.first)}, {"dur", us(span.second - span.first)}});
    last_end[key.first] = std::max(last_end[key.first], span.second);
  }
  // A kernel's own processor's groups (all of them for a processor of another name).
  const auto groups_of = [&](const KernelResult& k) {
    for (const Proc& p : procs_)
      if (p.unit_name == k.processor) return std::make_pair(p.first_group, p.first_group + (p.units + kGroup - 1) / kGroup);
    return std::make_pair(0u, groups);
  };
  for (uint32_t i = 0; i < kernels.size(); ++i) {
    const auto& k = kernels[i];
    const auto [g0, g1] = groups_of(k);
    if (k.simulated == "reused") {
      for (uint32_t g = g0; g < g1; ++g)
        ev.push_back({{"name", k.name + " (reused)"}, {"cat", "reused"}, {"ph", "X"}, {"pid", kGroups}, {"tid", g},
                      {"ts", k.start_ns / 1000.0}, {"dur", k.duration_ns() / 1000.0},
                      {"args", {{"simulated", "reused: the duration of an identical earlier kernel"}}}});
    } else if (k.simulated == "sampled" && last_end.count(i)) {
      const double from = us(last_end[i]);
      if (k.end_ns / 1000.0 > from)
        for (uint32_t g = g0; g < g1; ++g)
          ev.push_back({{"name", k.name + " (extrapolated)"}, {"cat", "sampled"}, {"ph", "X"}, {"pid", kGroups},
                        {"tid", g}, {"ts", from}, {"dur", k.end_ns / 1000.0 - from},
                        {"args", {{"simulated", "sampled: the CTAs the sample left out, at its rate (a GEMM's: its first waves)"}}}});
    }
  }

  // Counters: rates over each interval between samples, shown from its start.
  for (size_t i = 1; i < samples_.size(); ++i) {
    const Sample& a = samples_[i - 1];
    const Sample& b = samples_[i];
    const double dt_ps = double(b.t - a.t);
    if (dt_ps <= 0) continue;
    auto delta = [&](const std::string& key) {
      const auto ia = a.values.find(key), ib = b.values.find(key);
      return ib == b.values.end() ? 0.0 : ib->second - (ia == a.values.end() ? 0.0 : ia->second);
    };
    nlohmann::json bw = nlohmann::json::object(), hit = nlohmann::json::object();
    for (const auto& [key, value] : b.values) {
      const auto slash = key.find('/');
      const std::string unit = key.substr(0, slash), stat = key.substr(slash + 1);
      if (stat == "bytes_read") bw[unit] = (delta(key) + delta(unit + "/bytes_written")) / dt_ps * 1000.0;  // B/ps*1000 = GB/s
      const bool reads = stat == "read_hits";
      if (reads || (stat == "hits" && !b.values.count(unit + "/read_hits"))) {
        const double h = delta(key), m = delta(unit + (reads ? "/read_misses" : "/misses"));
        if (h + m > 0) hit[unit] = h / (h + m);
      }
    }
    if (!bw.empty()) ev.push_back({{"name", "accepted bandwidth (GB/s)"}, {"ph", "C"}, {"pid", kCounters}, {"ts", us(a.t)}, {"args", bw}});
    if (!hit.empty()) ev.push_back({{"name", "hit rate"}, {"ph", "C"}, {"pid", kCounters}, {"ts", us(a.t)}, {"args", hit}});
    const uint32_t units = procs_.empty() ? 0 : procs_[0].units;
    const double occ = units ? double(b.resident_ps - a.resident_ps) / dt_ps / double(units) : 0;
    ev.push_back({{"name", procs_[0].unit_name + " occupancy"}, {"ph", "C"}, {"pid", kCounters}, {"ts", us(a.t)},
                  {"args", {{"resident share", occ}}}});
  }

  // Flows: a dependence between kernels on different streams, from the producer's end to the
  // consumer's start (slightly inside each slice, which is what a flow event binds to).
  uint64_t id = 0;
  for (const auto& [from, to] : edges) {
    const auto& p = kernels[from];
    const auto& c = kernels[to];
    if (p.stream == c.stream) continue;
    const double eps = 1e-4;  // µs
    ev.push_back({{"name", "dependence"}, {"cat", "dependence"}, {"ph", "s"}, {"id", id}, {"pid", kStreams},
                  {"tid", p.stream}, {"ts", std::max(p.start_ns / 1000.0, p.end_ns / 1000.0 - eps)}});
    ev.push_back({{"name", "dependence"}, {"cat", "dependence"}, {"ph", "f"}, {"bp", "e"}, {"id", id}, {"pid", kStreams},
                  {"tid", c.stream}, {"ts", std::min(c.end_ns / 1000.0, c.start_ns / 1000.0 + eps)}});
    ++id;
  }
  // A full disk used to leave an empty file and exit 0 (models/common/output_file.hpp).
  const std::string tmp = temporary_for(path_, "timeline");
  {
    std::ofstream f(tmp);
    if (!f) throw std::runtime_error("cannot write timeline " + path_ + " (cannot create " + tmp + ")");
    f << nlohmann::json{{"traceEvents", ev}, {"displayTimeUnit", "ns"}}.dump();
    f.close();
    if (!f) {
      std::remove(tmp.c_str());
      throw std::runtime_error("cannot write timeline " + path_ + " (disk full?)");
    }
  }
  commit_temporary(tmp, path_, "timeline");
}

}  // namespace indexsim::sim
