// SPDX-License-Identifier: Apache-2.0
#include "sim/engine/simulation.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <stdexcept>

#include "models/common/processor.hpp"
#include "models/common/params.hpp"
#include "models/common/tlm_link.hpp"
#include "models/external/tlm_region.hpp"
#include "sim/core/config_load.hpp"
#include "sim/core/version.hpp"
#include "sim/engine/capture_state.hpp"
#include "sim/engine/replay.hpp"
#include "sim/engine/roofline.hpp"
#include "sim/engine/systemc.hpp"
#include "sim/memsys/machine.hpp"
#include "sim/memsys/memory_system.hpp"
#include "sim/placement/placement.hpp"
#include "sim/techniques/techniques.hpp"
#include "sim/workload/workload.hpp"
#include "traces/generators/collective_kernels.hpp"
#include "traces/trace_data.hpp"
#include "traces/trace_io.hpp"

namespace indexsim::sim {

using config::Document;
using trace::TensorClass;

namespace {

struct Loaded {
  std::shared_ptr<Document> hw, wl, tech;
  std::vector<RegionInfo> regions;
  std::unique_ptr<BuiltTarget> memory;
  uint64_t flush_bytes = 0;             // a captured trace's dirty L2 start (RunSpec::l2_start)
  Machine machine;                      // the hardware's processors over `memory`
  trace::LaunchLimits limits;  // the processor's, with the fabric's
  trace::TraceData built;  // RunSpec::build_trace's trace
  trace::StepParams step;
  PlacementPolicy placement;
  TechniquePipeline techniques;
  trace::ModelShape shape;
  bool have_shape = false;
  nlohmann::json monitoring;
  nlohmann::json config;
};

// A kernel library builds fewer pipeline stages on a processor with less shared memory per unit:
// each kernel class of the model takes the shared memory the processor would give it
// (Processor::fitted_smem_bytes). Returns what changed, for the run's record.
nlohmann::json fit_shared_memory(trace::KernelTiling& t, const model::Processor& proc) {
  nlohmann::json changed = nlohmann::json::object();
  const std::pair<const char*, trace::KernelShape*> shapes[] = {
      {"indexer_score", &t.indexer_score}, {"linear_state", &t.linear_state}, {"elementwise", &t.elementwise}};
  for (const auto& [name, k] : shapes) {
    const uint64_t fitted = proc.fitted_smem_bytes(k->smem_bytes);
    if (fitted == k->smem_bytes) continue;
    changed[name] = {{"smem_KiB_from", k->smem_bytes / 1024.0}, {"smem_KiB_to", double(fitted) / 1024.0}};
    k->smem_bytes = static_cast<uint32_t>(fitted);
  }
  return changed;
}

// `npu_cache_policy` (the seeds' NPU_CACHE_POLICY) other than `hardware` replaces the `policy` of
// every memory section of the region table that has one (the SRAM's: scratchpad, lru, fifo); the
// hardware's resolved configuration then records it. A policy with no such section is an error.
void apply_cache_policy(config::Document& hw, const std::string& tech_file, const std::string& policy) {
  if (policy == "hardware") return;
  // The Node must outlive the reference into it (AddressSanitizer: stack-use-after-scope when the
  // reference was taken from a temporary).
  const config::Node hw_root = hw.root();
  const YAML::Node& root = hw_root.raw();
  const std::string interconnect = read_layout(hw_root).interconnect;
  const YAML::Node regions = root[interconnect].IsMap() ? root[interconnect]["regions"] : YAML::Node();
  int applied = 0;
  if (regions.IsSequence())
    for (const auto& r : regions) {
      if (!r.IsMap() || !r["section"].IsScalar()) continue;
      const std::string section = r["section"].Scalar();
      // Read-only walk: a const node's [] never inserts, and reset() rebinds (= would assign).
      YAML::Node n;
      n.reset(hw.root().raw());
      for (size_t a = 0, b; a <= section.size() && n.IsMap(); a = b + 1) {
        b = section.find('.', a);
        if (b == std::string::npos) b = section.size();
        const YAML::Node& m = n;
        n.reset(m[section.substr(a, b - a)]);
      }
      const YAML::Node& sec = n;
      if (sec.IsMap() && sec["policy"].IsDefined()) {
        hw.set(section + ".policy=" + policy);
        ++applied;
      }
    }
  if (applied == 0)
    throw config::ConfigError(tech_file, "placement.npu_cache_policy", policy,
                              "hardware " + hw.file() + " has no memory with a cache policy (an SRAM region) to apply it to");
}

// Reads every config (and builds the memory system and processor) without running anything. With
// `sc` (the SystemC engine), each processor reaches its memory port, and each unit of the memory
// system is reached by the unit above it, through a TLM-2.0 link (models/common/tlm_link.hpp).
Loaded load(const RunSpec& spec, ScRun* sc = nullptr) {
  Loaded L;
  L.step = spec.step;
  // The techniques first: their placement's npu_cache_policy may set the hardware's SRAM policy.
  L.tech = load_document("techniques", spec.techniques, spec.sets);
  auto tr = L.tech->root();
  tr.opt<std::string>("name", spec.techniques);
  tr.note("description");
  L.placement = PlacementPolicy::load(tr.child("placement"));
  L.techniques = TechniquePipeline::load(tr);
  auto mon = tr.child("monitoring");
  for (const char* k : {"first_layer_io_max_us", "hit_rate_min", "utilisation_min", "fragmentation_max"})
    L.monitoring[k] = mon.req<double>(k, config::Rule::non_negative());
  L.tech->check_unused();

  L.hw = load_document("hardware", spec.hardware, spec.sets);
  apply_cache_policy(*L.hw, L.tech->file(), L.placement.npu_cache_policy);
  auto hw = L.hw->root();
  // The preset's name goes into the resolved configuration: results are grouped by it.
  hw.opt<std::string>("name", spec.hardware);
  hw.note("description");
  // The whole system is built even when only resolving: building reads (and validates) every key.
  DeviceLink unit_link;
  if (sc) unit_link = [](std::unique_ptr<model::MemoryDevice> child, const std::string& name) {
    return model::linked(std::move(child), name);
  };
  auto system = make_target(hw, "system", unit_link);
  PortLink link;
  if (sc) link = [sc](uint32_t slot, model::MemoryDevice& port) -> model::MemoryDevice& { return sc->link(slot, port); };
  L.machine = build_machine(hw, *system, link);
  const auto table = read_regions(hw);
  for (size_t i = 0; i < table.size(); ++i) {
    const model::MemoryDevice* dev = system->part(table[i].name);
    if (!dev) throw std::logic_error("memory system has no part for region '" + table[i].name + "'");
    L.regions.push_back({table[i].name, parse_tier(table[i].tier), uint64_t{i} << kRegionWindowBits,
                         dev->capacity_bytes(), dev->peak_bandwidth_GBps()});
  }
  L.memory = std::move(system);
  // What kernel libraries read from the device and its topology shapes the emulated kernels.
  L.limits = L.machine.main().launch_limits();
  L.limits.fabric = trace::read_fabric_limits(hw);
  L.hw->check_unused();

  // The step: the spec's, with its `step.K=V` assignments.
  apply_step_sets(L.step, spec.sets);
  nlohmann::json step = L.step.to_json();
  if (spec.build_trace) {
    L.built = spec.build_trace(L.limits);
    step = {{"trace", L.built.metadata}};
  } else if (spec.trace_data) {
    step = {{"trace", spec.trace_data->metadata}};
  } else if (spec.trace.empty()) {
    L.wl = load_document("workloads", spec.workload, spec.sets);
    L.shape = trace::load_model_shape(L.wl->root());
    L.wl->check_unused();
    const auto fitted = fit_shared_memory(L.shape.kernels, L.machine.main());
    if (!fitted.empty()) step["smem_fitted_to_gpu"] = fitted;
    L.techniques.reshape(L.shape);
    L.have_shape = true;
    trace::validate(L.step);
    trace::check_positions(L.step, L.shape.max_position_embeddings, L.shape.name);
  } else {
    // The key follows the trace's contents, not its path (run_key): an overwritten trace is a new run.
    step = {{"trace", spec.trace}, {"trace_content_hash", trace::content_hash(spec.trace)}};
  }
  L.config = {{"hardware", L.hw->resolved()},
              {"techniques", L.tech->resolved()},
              {"step", step},
              {"mode", std::string(spec.fast ? "fast" : "detailed") +
                           (!spec.reuse ? "-no-reuse" : spec.warm_reuse ? "-warm-reuse" : "")},
              {"placement_env", L.placement.env_overrides}};
  if (L.wl) L.config["workload"] = L.wl->resolved();
  if (spec.steps == 0 || spec.steps > 1000)
    throw std::invalid_argument("steps must be between 1 and 1000 (got " + std::to_string(spec.steps) + ")");
  if (spec.steps > 1) L.config["steps"] = spec.steps;  // only then: one-step runs keep their keys
  if (!spec.segments_of.empty()) record_segments_from(L.config, spec.segments_of);  // only then, likewise
  // A captured trace's measurements started from the L2 its flush left (only then: other runs keep
  // their keys).
  check_l2_start(spec.l2_start);
  if (!L.have_shape) {
    const nlohmann::json meta = spec.build_trace ? L.built.metadata
                                : spec.trace_data ? spec.trace_data->metadata
                                                  : trace::Reader(spec.trace).metadata();
    L.flush_bytes = capture_dirty_flush_bytes(meta, spec.l2_start);
  }
  if (L.flush_bytes)
    L.config["l2_start"] = {{"dirty_flush_MiB", L.flush_bytes >> 20}, {"from", "the capture's memset L2 flush"}};
  if (!L.placement.env_overrides.empty()) {
    // The values used, whatever their origin, are part of what made the run.
    L.config["techniques"]["placement"]["hbm_alloc_strategy"] = L.placement.hbm_alloc_strategy;
    L.config["techniques"]["placement"]["cxl_enabled"] = L.placement.cxl_enabled;
    L.config["techniques"]["placement"]["npu_cache_policy"] = L.placement.npu_cache_policy;
  }
  return L;
}

// A unit's hits and accesses from the statistics it reports (an SRAM's hits and misses, the L2's
// read and write hits and misses; a merged miss is a miss), and whether it reports any.
struct Accesses {
  double hits = 0, all = 0;
  bool reported = false;
};
Accesses accesses_of(const model::StatSink& sink, const std::string& unit) {
  static const std::pair<const char*, bool> kStats[] = {{"hits", true},          {"read_hits", true},
                                                        {"write_hits", true},    {"misses", false},
                                                        {"read_misses", false},  {"write_misses", false},
                                                        {"merged_misses", false}};
  Accesses a;
  for (const auto& [name, hit] : kStats) {
    const double v = sink.get(unit, name, -1);
    if (v < 0) continue;
    a.reported = true;
    a.all += v;
    if (hit) a.hits += v;
  }
  return a;
}

// Requests carry 1 + their tensor's class as their tag (MemRequest::tag); the caches report their
// reads by it under these names.
std::vector<std::string> tensor_tag_names() {
  std::vector<std::string> names = {""};
  for (int c = 0; c < trace::kTensorClassCount; ++c) names.push_back(trace::to_string(trace::TensorClass(c)));
  return names;
}

// KV and indexer bytes read, and of those served on chip (an L2 or SRAM hit), over every unit that
// breaks its reads down by tag: each read is counted once, by the first cache it meets.
struct OnChip {
  double read = 0, hit = 0;
};
OnChip kv_index_on_chip(const model::StatSink& sink) {
  OnChip o;
  for (const auto& row : sink.rows())
    for (const char* cls : {"kv_cache", "indexer_cache"}) {
      if (row.statistic == std::string("read_bytes.") + cls) o.read += row.value;
      if (row.statistic == std::string("read_hit_bytes.") + cls) o.hit += row.value;
    }
  return o;
}

// Kernels of the kinds `placement.npu_kernels` names run on the NPU (processor 1, the second slot of
// system.processors), beside those a technique put there. Without one that is a config error naming
// the key.
void place_on_npu(Workload& w, const Loaded& L) {
  const auto& kinds = L.placement.npu_kernels;
  if (kinds.empty()) return;
  if (L.machine.processors.size() < 2) {
    std::string names;
    for (auto k : kinds) names += (names.empty() ? "" : ", ") + std::string(trace::to_string(k));
    throw config::ConfigError(L.tech->root().file(), "placement.npu_kernels", names,
                              "needs an NPU, and hardware '" + L.hw->resolved().value("name", std::string("?")) +
                                  "' has one processor (system.processors; e.g. configs/hardware/h200-npu.yaml has an NPU)");
  }
  for (auto& k : w.kernels())
    if (!k.removed && std::find(kinds.begin(), kinds.end(), k.rec.kind) != kinds.end()) k.processor = 1;
}

// Regions served by an external TLM-2.0 target (impl: tlm_target) are bound by the caller under the
// SystemC engine; the native engine has no SystemC kernel to run them in.
void bind_external_regions(Loaded& L, ScRun* sc, const std::function<void(ScBindings&)>& bind) {
  const config::Node hw = L.hw->root();
  for (const RegionSpec& r : read_regions(hw)) {
    auto* ext = dynamic_cast<model::TlmRegion*>(L.memory->part(r.name));
    if (!ext) continue;
    if (!sc)
      throw config::ConfigError(L.hw->file(), r.section + ".impl", "tlm_target",
                                "an external TLM-2.0 target runs under the SystemC engine only, bound by a program "
                                "that links the library (RunSpec::engine = systemc, RunSpec::bind; examples/systemc)");
    sc->add_region(r.name, *ext);
  }
  if (sc && bind) bind(sc->bindings());
}

// The line requests a run's kernels ask for, against RunSpec::max_line_requests.
void check_work_budget(const Workload& w, const model::Processor& proc, double max_lines) {
  if (max_lines <= 0) return;
  long double lines = 0;
  for (const auto& k : w.kernels())
    if (!k.removed)
      for (const auto& a : k.accesses) lines += static_cast<long double>(a.bytes_per_cta()) * a.cta_count / proc.line_bytes();
  if (lines > max_lines) {
    char text[200];
    std::snprintf(text, sizeof text, "work budget: the run's kernels ask for %.3Lg line requests of %u B, more than "
                  "--max-line-requests %.3g (default %.3g, about a day of detailed simulation; 0: no budget)",
                  lines, proc.line_bytes(), max_lines, RunSpec().max_line_requests);
    throw std::invalid_argument(text);
  }
}

}  // namespace

nlohmann::json resolve(const RunSpec& spec) { return load(spec).config; }

void record_segments_from(nlohmann::json& config, const std::string& run_key) { config["segments_from"] = run_key; }

RunResult simulate(const RunSpec& spec) {
  const auto t0 = std::chrono::steady_clock::now();
  if (spec.engine != "native" && spec.engine != "systemc")
    throw std::invalid_argument("engine must be native or systemc, not '" + spec.engine + "'");
  std::unique_ptr<ScRun> sc;
  if (spec.engine == "systemc") sc = std::make_unique<ScRun>();  // the context the units elaborate in
  Loaded L = load(spec, sc.get());
  bind_external_regions(L, sc.get(), spec.bind);
  RunResult R;
  R.config = L.config;
  if (sc) R.config["engine"] = "systemc";
  R.key = run_key(R.config);
  R.hardware = L.hw->resolved().value("name", spec.hardware);
  R.techniques = L.techniques.enabled;
  R.code_version = code_version();

  trace::TraceData td;
  if (L.have_shape) {
    td = trace::emulate_step(L.shape, L.step, L.limits);
    R.workload = L.shape.name;
    R.seed = L.step.seed;
  } else if (spec.build_trace || spec.trace_data) {
    td = spec.build_trace ? std::move(L.built) : *spec.trace_data;
    R.workload = td.metadata.value("kernel", std::string("benchmark"));
  } else {
    td = trace::read_trace(spec.trace);
    R.workload = td.metadata.value("workload", std::string("trace"));
    R.seed = td.metadata.value("seed", uint64_t(0));
  }
  // The capture's flush buffer is one more tensor, its dirty lines warmed into the L2 before the
  // first step (below).
  const uint32_t flush_tensor = L.flush_bytes ? add_flush_tensor(td, L.flush_bytes) : 0;
  Workload w(td.metadata, td.tensors, td.kernels, td.accesses);
  nlohmann::json report = nlohmann::json::object();
  TechniqueContext ctx{L.have_shape ? &L.shape : nullptr, &L.placement, &report, uint32_t(L.machine.processors.size()),
                       &L.regions};
  L.techniques.transform(w, ctx);
  place_on_npu(w, L);

  Placement pl = place(w.tensors(), L.regions, L.placement);
  // The seeds' automatic fallback: fragmentation above its threshold re-places every tensor with the
  // fallback allocation granule (tensors packed in shared segments instead of whole pages), and the
  // run reports both placements' fragmentation and what it did.
  const double fragmentation_max = L.monitoring["fragmentation_max"].get<double>();
  const double fragmentation_first = pl.fragmentation;
  if (pl.fragmentation > fragmentation_max) {
    PlacementPolicy fallback = L.placement;
    fallback.page_bytes = L.placement.fallback_page_bytes;
    pl = place(w.tensors(), L.regions, fallback);
    R.techniques["fragmentation_fallback"] = {{"fragmentation", fragmentation_first},
                                              {"threshold", fragmentation_max},
                                              {"page_bytes", L.placement.page_bytes},
                                              {"fallback_page_bytes", fallback.page_bytes},
                                              {"fragmentation_after", pl.fragmentation}};
  }
  check_work_budget(w, L.machine.main(), spec.max_line_requests);
  if (spec.plan_only) return R;

  ReplayInput in;
  in.workload = &w;
  in.tensor_base = pl.address;
  in.tensor_region = pl.region_of;
  for (const auto& r : pl.regions) in.region_peak_GBps.push_back(r.peak_GBps);
  for (const auto& t : w.tensors()) {
    in.tensor_bytes.push_back(t.bytes);
    in.tensor_tag.push_back(uint8_t(1 + int(t.cls)));
  }
  ReplayOptions opt;
  opt.fast = spec.fast;
  opt.reuse = spec.reuse;
  opt.warm_memos = spec.warm_reuse;
  opt.timeline_path = spec.timeline;
  // The memory system's cumulative statistics: read whenever the machine is idle (the counters of
  // what is not simulated) and, with a timeline, for its counter tracks (which take named counters).
  opt.counters = [&L](model::StatSink& s) {
    s.tag_names = tensor_tag_names();
    L.memory->report(s, "");
  };
  if (!spec.timeline.empty()) opt.sample_counters = opt.counters;
  opt.progress = spec.progress;
  opt.inherited_segments = spec.inherited_segments.get();
  opt.keep_segments = spec.kept_segments != nullptr;
  std::vector<model::Processor*> procs;
  for (const auto& p : L.machine.processors) procs.push_back(p.get());
  if (L.flush_bytes) warm_dirty(*L.memory, pl.address[flush_tensor], L.flush_bytes, L.machine.main().line_bytes());
  // Consecutive steps: each replay starts where the last ended, on the state it left. Only the last
  // keeps its timeline and memos; the memory statistics before it give its own hit rates.
  ReplayOutput out;
  std::vector<double> step_ns;
  model::StatSink before_last;
  before_last.tag_names = tensor_tag_names();
  // The counters of every step's reused segments and sampled-away CTAs, summed by key.
  std::vector<model::StatSink::Extra> unsimulated, unsimulated_before_last;
  const auto accumulate = [&unsimulated](const std::vector<model::StatSink::Extra>& more) {
    for (const auto& e : more) {
      auto it = std::find_if(unsimulated.begin(), unsimulated.end(), [&e](const auto& u) { return u.key == e.key && u.simulated == e.simulated; });
      if (it == unsimulated.end()) unsimulated.push_back(e);
      else it->value += e.value;
    }
  };
  const auto run_steps = [&](const ScRun::WaitUntil& wait_until) {
    for (uint32_t s = 0; s < spec.steps; ++s) {
      const bool last = s + 1 == spec.steps;
      ReplayOptions o = opt;
      o.wait_until = wait_until;
      o.start_ps = out.end_ps;
      if (!last) {
        o.timeline_path.clear();
        o.sample_counters = nullptr;
        o.keep_segments = false;
      } else if (spec.steps > 1) {
        L.memory->report(before_last, "");
        unsimulated_before_last = unsimulated;
        before_last.add_counters(unsimulated_before_last);
      }
      if (spec.progress && spec.steps > 1)
        o.progress = [&spec, s](double f) { spec.progress((double(s) + f) / double(spec.steps)); };
      out = replay(procs, in, o);
      accumulate(out.unsimulated);
      step_ns.push_back(out.step_ns);
    }
  };
  if (sc) {
    sc->run(run_steps);
  } else {
    run_steps({});
  }
  if (spec.kept_segments) *spec.kept_segments = std::move(out.segments);

  R.step_ns = out.step_ns;
  R.kernels = std::move(out.kernels);
  R.roofline_ns = critical_path_roofline(w, R.kernels);
  R.components.tag_names = tensor_tag_names();
  L.memory->report(R.components, "");
  // The components table describes the whole step: the simulated counters plus those of the reused
  // segments and the sampled-away CTAs; hit rates follow them.
  R.components.add_counters(unsimulated);

  // A decode step with MTP drafting emits its accepted tokens: 1 + p + ... + p^layers a sequence.
  const bool drafting = L.have_shape && L.shape.mtp.enabled && L.step.phase == trace::Phase::decode;
  const double new_tokens = drafting       ? double(L.step.batch) * L.shape.mtp.tokens_per_step()
                            : L.have_shape ? double(L.step.batch) * L.step.new_tokens()
                                           : td.metadata.value("tokens", 1.0);
  R.metric("step_time", R.step_ns / 1e3, "us");
  if (spec.steps > 1) {
    double sum = 0;
    for (double t : step_ns) sum += t;
    R.metric("steps", double(spec.steps), "count");
    R.metric("step_time_first", step_ns.front() / 1e3, "us");
    R.metric("step_time_mean", sum / double(step_ns.size()) / 1e3, "us");
  }
  R.metric("roofline_time", R.roofline_ns / 1e3, "us");
  R.metric("tokens_per_second", new_tokens / (R.step_ns * 1e-9), "tokens/s");
  if (drafting) R.metric("tokens_per_step", new_tokens, "tokens");
  R.metric("bytes_read", double(out.bytes_read), "bytes");
  R.metric("bytes_written", double(out.bytes_written), "bytes");
  R.metric("requests", double(out.requests), "count");
  R.metric("sm_utilisation", out.sm_busy_fraction, "fraction");
  R.metric("tensor_utilisation", out.tensor_busy_fraction, "fraction");
  // Communication: the collectives' and dispatch/combine kernels' time, summed (on the step's
  // stream they do not overlap one another), and its share of the step.
  double comm_ns = 0;
  for (const auto& k : R.kernels)
    if (trace::is_communication(trace::kernel_kind(k.kind))) comm_ns += k.duration_ns();
  R.metric("communication_time", comm_ns / 1e3, "us");
  R.metric("communication_share", R.step_ns > 0 ? comm_ns / R.step_ns : 0, "fraction");
  R.metric("communication_exposed_time", exposed_communication_ns(R.kernels) / 1e3, "us");
  for (TensorClass c : {TensorClass::weights, TensorClass::kv_cache, TensorClass::indexer_cache,
                        TensorClass::linear_state, TensorClass::activations})
    R.metric(std::string("footprint_") + trace::to_string(c), double(w.bytes_of(c)), "bytes");
  for (size_t r = 0; r < pl.regions.size(); ++r)
    R.metric("placed_" + pl.regions[r].name, double(pl.used_bytes[r]), "bytes");
  R.metric("fragmentation", pl.fragmentation, "fraction");
  if (fragmentation_first > fragmentation_max) R.metric("fragmentation_before_fallback", fragmentation_first, "fraction");
  R.metric("spilled_tensors", double(pl.spilled.size()), "count");
  nlohmann::json pins = nlohmann::json::array();
  for (const auto& p : pl.pins) {
    pins.push_back({{"tensor", p.tensor}, {"region", p.region}, {"bytes", p.bytes}, {"free_bytes", p.free_bytes},
                    {"placed", p.placed}});
    if (p.placed) continue;
    char buf[320];
    std::snprintf(buf, sizeof buf, "pin %s (%.1f MiB) does not fit region %s (%.1f MiB free): placed by the normal order instead",
                  p.tensor.c_str(), double(p.bytes) / (1 << 20), p.region.c_str(), double(p.free_bytes) / (1 << 20));
    R.warnings.push_back(buf);
  }
  R.metric("pins_not_placed", double(std::count_if(pl.pins.begin(), pl.pins.end(), [](const auto& p) { return !p.placed; })),
           "count");

  // The seeds' monitoring figures and which thresholds trip.
  // First-layer IO: from the first start to the last end of the first scored layer's indexer
  // scoring (its share on the NPU included).
  double first_io_ns = -1;
  const std::string score = trace::to_string(trace::KernelKind::indexer_score);
  int first_layer = INT32_MAX;
  for (const auto& k : R.kernels)
    if (k.kind == score) first_layer = std::min(first_layer, k.layer);
  double io_start = 1e300, io_end = -1;
  for (const auto& k : R.kernels)
    if (k.kind == score && k.layer == first_layer) {
      io_start = std::min(io_start, k.start_ns);
      io_end = std::max(io_end, k.end_ns);
    }
  if (io_end >= 0) first_io_ns = io_end - io_start;
  // The bytes that scoring asks of each region (before the L2): what the seeds' first-layer
  // specialisation counts as "direct HBM accesses", and what it moves to the NPU's SRAM.
  if (first_layer != INT32_MAX) {
    std::vector<double> by_region(pl.regions.size(), 0.0);
    for (const auto& k : w.kernels())
      if (!k.removed && k.rec.kind == trace::KernelKind::indexer_score && k.rec.layer == first_layer)
        for (const auto& a : k.accesses) by_region[pl.region_of[a.tensor]] += double(a.total_bytes());
    for (size_t r = 0; r < pl.regions.size(); ++r)
      if (by_region[r] > 0) R.metric("first_layer_index_bytes_" + pl.regions[r].name, by_region[r], "bytes");
  }
  if (first_io_ns >= 0) R.metric("first_layer_io", first_io_ns / 1e3, "us");
  // Every unit that reports a hit rate (the cache level, an SRAM in cache mode) gets its metric; the
  // seeds' threshold on the KV/index hit rate applies to kv_index_on_chip below, not to these.
  nlohmann::json tripped = nlohmann::json::array();
  if (first_io_ns / 1e3 > L.monitoring["first_layer_io_max_us"].get<double>()) tripped.push_back("first_layer_io");
  // A unit nothing reached has no hit rate (an SRAM no tensor was pinned to reports 0 of 0): it
  // gets no metric and trips nothing. After several steps a rate is the last step's own: its hits
  // over its accesses (the components table keeps the figures of every step together).
  const auto last_step_rate = [&](const std::string& unit, double whole) {
    if (spec.steps == 1) return whole;
    const Accesses now = accesses_of(R.components, unit), before = accesses_of(before_last, unit);
    const double all = now.all - before.all;
    return all > 0 ? (now.hits - before.hits) / all : whole;
  };
  for (const auto& row : R.components.rows()) {
    if (row.statistic != "hit_rate") continue;
    const Accesses a = accesses_of(R.components, row.unit_name);
    if (a.reported && a.all == 0) continue;
    const double rate = last_step_rate(row.unit_name, row.value);
    R.metric(row.unit_name + "_hit_rate", rate, "fraction");
  }
  // The seeds' KV cache hit rate: the share of the KV and indexer bytes read that the L2 or an SRAM
  // served, not a region's own hit rate (an SRAM nothing was pinned to has none). The whole step's
  // (reused segments and sampled-away CTAs counted as the segments they repeat), the last step's
  // after --steps.
  OnChip on_chip = kv_index_on_chip(R.components);
  if (spec.steps > 1) {
    const OnChip before = kv_index_on_chip(before_last);
    on_chip = {on_chip.read - before.read, on_chip.hit - before.hit};
  }
  if (on_chip.read > 0) {
    const double share = on_chip.hit / on_chip.read;
    R.metric("kv_index_on_chip", share, "fraction");
    if (share < L.monitoring["hit_rate_min"].get<double>()) tripped.push_back("kv_index_on_chip");
  }
  if (out.sm_busy_fraction < L.monitoring["utilisation_min"].get<double>()) tripped.push_back("sm_utilisation");
  // The NPU's figures, where the hardware has one; the seeds' utilisation threshold is theirs
  // ("NPU compute utilization > 80 %") when it ran anything.
  for (size_t i = 1; i < out.processors.size(); ++i) {
    const ProcessorBusy& b = out.processors[i];
    R.metric("npu_utilisation", b.compute_fraction, "fraction");
    R.metric("npu_busy", b.busy_fraction, "fraction");
    R.metric("npu_kernels", double(b.kernels), "count");
    if (b.kernels > 0 && b.compute_fraction < L.monitoring["utilisation_min"].get<double>()) tripped.push_back("npu_utilisation");
  }
  if (fragmentation_first > fragmentation_max) tripped.push_back("fragmentation_fallback");
  R.metric("thresholds_tripped", double(tripped.size()), "count");
  R.techniques["report"] = report;
  R.techniques["thresholds_tripped"] = tripped;
  R.techniques["spilled"] = pl.spilled;
  R.techniques["pins"] = pins;
  if (!R.warnings.empty()) R.techniques["warnings"] = R.warnings;

  R.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return R;
}

}  // namespace indexsim::sim
