// SPDX-License-Identifier: Apache-2.0
#include "sim/engine/replay.hpp"

#include <algorithm>
#include <map>
#include <queue>
#include <stdexcept>

#include "sim/engine/kernel_state.hpp"
#include "sim/engine/roofline.hpp"
#include "sim/engine/sampling.hpp"
#include "sim/engine/counter_windows.hpp"
#include "sim/engine/segment_reuse.hpp"
#include "sim/engine/timeline.hpp"

namespace indexsim::sim {

using model::Tick;
using trace::AccessRecord;
using trace::KernelRecord;

namespace {

// The engine's own events; equal times in the order they were scheduled.
enum class Ev : uint8_t { kernel_ready, kernel_end };
struct Event {
  Tick t;
  uint64_t seq;
  Ev type;
  uint32_t kernel;
  bool operator>(const Event& o) const { return t != o.t ? t > o.t : seq > o.seq; }
};

class Engine {
 public:
  Engine(const std::vector<model::Processor*>& procs, const ReplayInput& in, const ReplayOptions& opt)
      : procs_(procs), in_(in), opt_(opt), counters_(opt.counters), timeline_(opt.timeline_path, unit_names(procs)) {}

  ReplayOutput run();

 private:
  void prepare();
  void push(Tick t, Ev type, uint32_t kernel) {
    if (type == Ev::kernel_ready) ++pending_ready_;
    q_.push({t, seq_++, type, kernel});
  }
  void kernels_ready(const std::vector<uint32_t>& ready, Tick now);
  void launch(uint32_t k, Tick now);
  void cta_ended(const model::CtaEnd& e, Tick now);
  void end_kernel(uint32_t k, Tick now);
  void take(uint32_t k, const SegmentMember& m, Tick now);
  model::KernelWork work(uint32_t kid, uint64_t first_cta, uint64_t ctas) const {
    const KernelState& k = k_[kid];
    // Fast mode: a kernel that wave sampling leaves whole may project its lines once steady
    // (WaveSampling::line_marks); a collective's time is its handshakes', not a rate.
    const bool project = opt_.fast && !k.sampled && !trace::is_communication(k.rec->kind);
    return {kid,    k.rec,   &k.accesses,        &in_.tensor_base, first_cta, ctas, k.coarse, k.mm_k, k.mm_n,
            &in_.tensor_tag, project, k.roofline_ns() * 1e3};
  }
  static std::vector<std::pair<std::string, uint32_t>> unit_names(const std::vector<model::Processor*>& procs) {
    std::vector<std::pair<std::string, uint32_t>> v;
    for (const model::Processor* p : procs) v.emplace_back(p->unit_name(), p->units());
    return v;
  }
  model::Processor& proc_of(uint32_t kid) const { return *procs_[k_[kid].proc]; }
  std::vector<model::ProcessorActivity> activities() const {
    std::vector<model::ProcessorActivity> v;
    for (const model::Processor* p : procs_) v.push_back(p->activity());
    return v;
  }
  // Processor `p` moved the shared memory system: the others' view of its next event is stale.
  void moved(uint32_t p) {
    if (procs_.size() == 1) return;
    for (uint32_t i = 0; i < procs_.size(); ++i)
      if (i != p) procs_[i]->memory_moved();
  }
  ReplayOutput results(Tick now);
  void sample_counters(Tick now) {
    if (!opt_.sample_counters) return;
    model::StatSink stats;
    opt_.sample_counters(stats);
    timeline_.sample(now - opt_.start_ps, stats, proc_.resident_ps_at(now));  // the timeline's times are the replay's
  }

  std::vector<model::Processor*> procs_;
  model::Processor& proc_ = *procs_.at(0);   // the GPU: occupancy, segment reuse
  const ReplayInput& in_;
  const ReplayOptions& opt_;
  std::vector<KernelState> k_;
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> q_;
  uint64_t seq_ = 0;
  std::vector<model::CtaEnd> ended_;
  uint64_t ctas_total_ = 0, ctas_done_ = 0, kernels_left_ = 0, requests_ = 0;
  uint32_t active_ = 0;           // kernels launched (or reused) and not yet ended
  uint32_t pending_ready_ = 0;    // kernel_ready events in the queue
  std::unique_ptr<SegmentReuse> reuse_;
  std::vector<model::ProcessorActivity> reused_;   // per processor: busy time of the segments taken from memos
  std::vector<model::ProcessorActivity> start_activity_;  // per processor: its busy time when this replay started
  CounterWindows counters_;
  double window_ctas_ = 0, window_simulated_ = 0;  // CTAs of the kernels simulated since the machine was last idle
  Timeline timeline_;
};

void Engine::prepare() {
  if (!in_.workload) throw std::invalid_argument("replay: no workload");
  const Workload& w = *in_.workload;
  if (in_.tensor_region.size() != in_.tensor_base.size())
    throw std::invalid_argument("replay: every tensor needs a region (tensor_region and tensor_base differ in size)");
  for (uint32_t r : in_.tensor_region)
    if (r >= in_.region_peak_GBps.size()) throw std::invalid_argument("replay: a tensor's region is out of range");
  // Live kernels in topological order (the trace's order where the edges allow); the engine's
  // index of a kernel is its place in that order, which is also the launch order among ready ones.
  std::vector<uint32_t> index_of(w.kernels().size(), UINT32_MAX);
  for (size_t v : w.topological_order()) {
    if (w.kernels()[v].removed) continue;
    index_of[v] = uint32_t(k_.size());
    k_.emplace_back();
    KernelState& k = k_.back();
    k.rec = &w.kernels()[v].rec;
    k.proc = w.kernels()[v].processor;
    k.mm_k = w.kernels()[v].mm_k;
    k.mm_n = w.kernels()[v].mm_n;
    if (k.proc >= procs_.size())
      throw std::runtime_error("kernel " + k.rec->name + " is placed on processor " + std::to_string(k.proc) +
                               ", which this hardware does not have (it has " + std::to_string(procs_.size()) + ")");
    for (const auto& a : w.kernels()[v].accesses) {
      if (a.tensor >= in_.tensor_base.size())
        throw std::runtime_error("access record names unknown tensor " + std::to_string(a.tensor));
      k.accesses.push_back(&a);
    }
  }
  for (size_t v = 0; v < w.kernels().size(); ++v) {
    if (index_of[v] == UINT32_MAX) continue;
    KernelState& k = k_[index_of[v]];
    for (size_t s : w.successors(v)) k.dependents.push_back(index_of[s]);
    std::sort(k.dependents.begin(), k.dependents.end());
    k.deps_left = uint32_t(w.predecessors(v).size());
  }
  for (KernelState& k : k_) {
    const KernelRecord& r = *k.rec;
    const model::Processor& proc = *procs_[k.proc];
    const auto peak_flops = [&proc](trace::Precision p) { return proc.peak_flops(p); };
    const KernelRoofline rl = kernel_roofline(r, k.accesses, in_.tensor_region, in_.region_peak_GBps, in_.tensor_bytes, peak_flops);
    k.mem_roofline_ns = rl.memory_ns;
    k.flop_roofline_ns = rl.compute_ns;
    k.per_unit = proc.ctas_per_unit(r);
    if (k.per_unit == 0)
      throw std::runtime_error("kernel " + r.name + " cannot fit one CTA on an " + proc.unit_name() + " (" +
                               proc.occupancy_limiter(r) + ")");
    if (r.cta_count() == 0) throw std::runtime_error("kernel " + r.name + " has an empty grid");
    k.wave = uint64_t(proc.units()) * uint64_t(k.per_unit);
    k.ctas_simulated = r.cta_count();
    // Coarse requests for kernels of a full wave or more, and for communication kernels: a few long
    // CTAs (channels) that stream every byte once, whose time does not depend on how their runs are
    // cut (a GEMM's few CTAs share tiles in the L2, where the line matters).
    k.coarse = opt_.fast && (r.cta_count() >= k.wave || trace::is_communication(r.kind));
    const model::WaveSampling rule = proc.wave_sampling();
    // A sampled kernel replays up to its last run_on_waves waves (its first CTA, cold, if it has no
    // more), so that a sample still ramping up after max_waves runs on until steady.
    k.sampled = opt_.fast && r.cta_count() > uint64_t(rule.max_waves) * k.wave;
    if (k.sampled) k.ctas_simulated = sampled_ctas(r.cta_count(), k.wave, std::max(rule.max_waves, rule.run_on_waves));
    // A pipelined GEMM the rule above replays whole may replay its last gemm_waves full waves and
    // its partial one instead, unwarmed: its first wave starts cold and its tail is its own.
    // Without a partial wave its last full wave is the tail, and one more is replayed, so that
    // gemm_waves - 1 marks fall while CTAs still start.
    const uint64_t full_waves = r.cta_count() / k.wave;
    const uint64_t gemm_waves = rule.gemm_waves + (r.cta_count() % k.wave == 0 ? 1 : 0);
    if (opt_.fast && rule.gemm_waves > 0 && r.double_buffered && r.load_steps > 1 &&
        k.ctas_simulated == r.cta_count() && full_waves > gemm_waves) {
      k.sampled = false;
      k.ctas_simulated = r.cta_count() - (full_waves - gemm_waves) * k.wave;
    }
    k.sample_first = r.cta_count() - k.ctas_simulated;
    // By its rate, only a sampled kernel may stop early: one of fewer waves than a sample runs whole
    // (a 7-wave DeepGEMM shape stopped at 4 of its waves came out 3 % fast: its 6.79 waves counted
    // as a fraction, where the math makes the last one whole, as the math rule below reads them).
    k.may_stop = k.sampled && r.cta_count() > uint64_t(rule.min_waves) * k.wave;
    // A math-bound kernel's waves repeat exactly (the tensor pipe sets them), so fewer marks tell its
    // rate: also one that wave sampling leaves whole, if it has waves beyond the marks.
    k.math_watched = opt_.fast && rule.math_bound_marks > 0 && r.double_buffered;
    k.may_stop_math = k.math_watched && !k.gemm_sample() && r.cta_count() > uint64_t(rule.math_bound_marks + 1) * k.wave;
    ctas_total_ += k.ctas_simulated;
  }
  std::vector<Tick> gaps;
  for (const model::Processor* p : procs_) gaps.push_back(p->kernel_launch_ps());
  reused_.assign(procs_.size(), {});
  reuse_ = std::make_unique<SegmentReuse>(k_, in_.tensor_region, in_.tensor_bytes, proc_.line_bytes(), std::move(gaps),
                                          opt_.inherited_segments, opt_.warm_memos);
}

void Engine::kernels_ready(const std::vector<uint32_t>& ready, Tick now) {
  std::vector<uint32_t> fresh;
  for (uint32_t kid : ready) {
    KernelState& k = k_[kid];
    k.ready_at = now;
    if (k.stand_in) {
      take(kid, *k.stand_in, now);  // a member of a segment being reused
    } else {
      fresh.push_back(kid);
    }
  }
  if (fresh.empty()) return;
  // Nothing running, queued or about to become ready: every unfinished kernel waits on these, and
  // a segment ends and another starts.
  const bool idle = active_ == 0 && pending_ready_ == 0;
  std::vector<model::StatSink::Extra> grown;
  if (idle) {
    grown = counters_.close(window_ctas_, window_simulated_);
    window_ctas_ = window_simulated_ = 0;
  }
  if (!idle || !opt_.reuse) {
    for (uint32_t kid : fresh) {
      reuse_->joined(kid);
      launch(kid, now);
    }
    return;
  }
  if (const SegmentMemo* m = reuse_->at_idle(fresh, now, activities(), std::move(grown))) {
    // A memo inherited from a replay with fewer processors holds none for the others.
    for (size_t p = 0; p < m->busy.size() && p < reused_.size(); ++p) {
      reused_[p].resident_ps += m->busy[p].resident_ps;
      reused_[p].compute_ps += m->busy[p].compute_ps;
    }
    counters_.add(m->counters);
    take(fresh[0], m->members[0], now);
    for (size_t i = 1; i < fresh.size(); ++i) take(fresh[i], *k_[fresh[i]].stand_in, now);
    return;
  }
  for (uint32_t kid : fresh) launch(kid, now);
}

void Engine::launch(uint32_t kid, Tick now) {
  KernelState& k = k_[kid];
  k.wall_start = std::chrono::steady_clock::now();
  // A sampled kernel simulates its last CTAs, after warming with the ones before (a GEMM's sample
  // starts cold, as its first wave would).
  model::Processor& proc = proc_of(kid);
  if (k.sample_first > 0 && !k.gemm_sample()) proc.warm(work(kid, 0, k.sample_first));
  proc.launch(work(kid, k.sample_first, k.ctas_simulated), now);
  moved(k.proc);
  ++active_;
}

void Engine::cta_ended(const model::CtaEnd& e, Tick now) {
  KernelState& k = k_[e.kernel];
  const auto& r = *k.rec;
  model::Processor& proc = proc_of(e.kernel);
  timeline_.cta(e.kernel, k.proc, e.unit, e.start - opt_.start_ps, e.end - opt_.start_ps);
  k.start = std::min(k.start, e.start);
  k.bytes_read += e.bytes_read;
  k.bytes_written += e.bytes_written;
  k.requests += e.requests;
  requests_ += e.requests;
  ++ctas_done_;
  ++k.ctas_done;
  // The first wave's CTAs start together on cold caches and may wait on memory; the rest show whether
  // the math sets the kernel's pace.
  if (!k.wave_done.empty() && !e.math_bound) k.math_bound = false;
  if ((k.sampled || k.may_stop_math || k.gemm_sample()) && k.ctas_done % k.wave == 0 && !e.all_started) {
    k.wave_done.push_back(now);
    const model::WaveSampling rule = proc.wave_sampling();
    bool steady = k.may_stop && steady_end(k.wave_done, k.start, k.waves(), k.roofline_ps_per_wave(), rule);
    if (!steady && k.may_stop_math && k.math_paced()) {
      // The math rule's marks are those after the first, read at whole waves (sampling.hpp).
      model::WaveSampling math_rule = rule;
      math_rule.min_waves = rule.math_bound_marks;
      const std::vector<Tick> paced(k.wave_done.begin() + 1, k.wave_done.end());
      steady = steady_end(paced, k.start, k.whole_waves() - 1, k.roofline_ps_per_wave(), math_rule);
    }
    if (steady) {
      // The rest of the sample would not move the end: its CTAs not yet started are left out.
      const uint64_t started = proc.stop_starting(e.kernel);
      k.unstarted = k.ctas_simulated - started;
      ctas_total_ -= k.unstarted;
      k.ctas_simulated = started;
    }
  }
  if (k.ctas_done == k.ctas_simulated) {
    k.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - k.wall_start).count();
    if (k.ctas_simulated == r.cta_count()) {
      end_kernel(e.kernel, now);
    } else {
      if (k.unstarted > 0) proc.warm(work(e.kernel, k.sample_first + k.ctas_simulated, k.unstarted));
      push(sampled_kernel_end(k, now), Ev::kernel_end, e.kernel);
    }
  }
  if (opt_.progress && (ctas_done_ & 0xFFF) == 0) opt_.progress(double(ctas_done_) / double(ctas_total_));
}

void Engine::end_kernel(uint32_t kid, Tick now) {
  KernelState& k = k_[kid];
  k.end = now;
  if (!k.reused) {
    // A kernel whose steady lines were projected simulated that share of its CTAs' traffic.
    k.line_share = proc_of(kid).simulated_line_share(kid);
    window_ctas_ += double(k.rec->cta_count());
    window_simulated_ += double(k.ctas_simulated) * k.line_share;
  }
  --kernels_left_;
  --active_;
  // Reused and sampled kernels end without many CTAs: each kernel's end is news too (the callback
  // decides how often to show it).
  if (opt_.progress && ctas_total_ > 0) opt_.progress(double(ctas_done_) / double(ctas_total_));
  for (uint32_t d : k.dependents) {
    KernelState& dk = k_[d];
    dk.deps_done = std::max(dk.deps_done, now);
    if (--dk.deps_left == 0) push(dk.deps_done + proc_of(d).kernel_launch_ps(), Ev::kernel_ready, d);
  }
}

void Engine::take(uint32_t kid, const SegmentMember& m, Tick now) {
  KernelState& k = k_[kid];
  k.reused = true;
  ctas_total_ -= k.ctas_simulated;
  k.ctas_simulated = m.ctas_simulated;
  k.bytes_read = m.bytes_read;
  k.bytes_written = m.bytes_written;
  k.requests = m.requests;
  k.start = now;
  requests_ += m.requests;
  ++active_;
  push(now + m.duration, Ev::kernel_end, kid);
}

ReplayOutput Engine::run() {
  prepare();
  kernels_left_ = k_.size();
  const Tick start = opt_.start_ps;
  start_activity_ = activities();
  counters_.start();
  for (uint32_t i = 0; i < k_.size(); ++i)
    if (k_[i].deps_left == 0) push(start + proc_of(i).kernel_launch_ps(), Ev::kernel_ready, i);

  // The processor's events at a time come before the engine's: the CTAs that end then have ended
  // when a kernel becomes ready, and what the kernel launches starts at the processor's next call.
  Tick now = start;
  while (kernels_left_ > 0) {
    const Tick tq = q_.empty() ? model::kNever : q_.top().t;
    Tick tp = model::kNever;
    for (const model::Processor* p : procs_) tp = std::min(tp, p->next_event());
    Tick t = std::min(tq, tp);
    if (opt_.wait_until) {
      const Tick woke = opt_.wait_until(t);
      if (woke < t) {
        // An external unit answered first: what the processors remember of the memory is stale.
        for (model::Processor* p : procs_) p->memory_moved();
        now = std::max(now, woke);
        continue;
      }
    } else if (t == model::kNever) {
      throw std::runtime_error("replay deadlock: kernels left but nothing scheduled (cyclic dependences?)");
    }
    now = std::max(now, t);
    if (tp <= now) {
      for (uint32_t i = 0; i < procs_.size(); ++i) {
        if (procs_[i]->next_event() > now) continue;
        ended_.clear();
        procs_[i]->advance(now, ended_);
        moved(i);
        for (const auto& e : ended_) cta_ended(e, now);
      }
    }
    if (timeline_.sample_due(now - opt_.start_ps)) sample_counters(now);
    while (!q_.empty() && q_.top().t <= now) {
      const Event e = q_.top();
      q_.pop();
      if (e.type == Ev::kernel_end) {
        end_kernel(e.kernel, now);
      } else {
        // Kernels that become ready at one instant with nothing running start one segment together
        // (SegmentReuse::at_idle); with something running, each joins the segment that runs.
        std::vector<uint32_t> ready{e.kernel};
        --pending_ready_;
        while (active_ == 0 && !q_.empty() && q_.top().t == now && q_.top().type == Ev::kernel_ready) {
          ready.push_back(q_.top().kernel);
          q_.pop();
          --pending_ready_;
        }
        kernels_ready(ready, now);
      }
    }
  }
  counters_.close(window_ctas_, window_simulated_);  // the last segment
  return results(now);
}

ReplayOutput Engine::results(Tick now) {
  ReplayOutput out;
  const Tick start = opt_.start_ps, span = now - start;
  out.step_ns = model::ps_to_ns(span);
  out.end_ps = now;
  out.requests = requests_;
  // Busy time in this replay: the processors' since it started, and the memos it took.
  const auto busy = [&](uint32_t i) {
    const model::ProcessorActivity a = procs_[i]->activity();
    return std::make_pair(double(a.resident_ps - start_activity_[i].resident_ps) + double(reused_[i].resident_ps),
                          double(a.compute_ps - start_activity_[i].compute_ps) + double(reused_[i].compute_ps));
  };
  const double units = double(proc_.units());
  out.sm_busy_fraction = span ? busy(0).first / double(span) / units : 0;
  out.tensor_busy_fraction = span ? busy(0).second / double(span) / units : 0;
  for (uint32_t i = 0; i < procs_.size(); ++i) {
    ProcessorBusy b;
    b.unit_name = procs_[i]->unit_name();
    b.units = procs_[i]->units();
    const auto [res, cmp] = busy(i);
    b.busy_fraction = span ? res / double(span) / double(b.units) : 0;
    b.compute_fraction = span ? cmp / double(span) / double(b.units) : 0;
    for (const KernelState& k : k_) b.kernels += k.proc == i;
    out.processors.push_back(b);
  }
  for (const KernelState& k : k_) {
    const KernelRecord& r = *k.rec;
    KernelResult kr;
    kr.id = r.id;
    kr.name = r.name;
    kr.kind = trace::to_string(r.kind);
    kr.layer = r.layer;
    kr.stream = r.stream;
    kr.start_ns = model::ps_to_ns(k.start - start);
    kr.end_ns = model::ps_to_ns(k.end - start);
    // Sampled kernels: the bytes the unsimulated CTAs would have moved, at the sampled rate.
    const double cta_scale = double(r.cta_count()) / double(std::max<uint64_t>(1, k.ctas_simulated));
    kr.bytes_read = uint64_t(double(k.bytes_read) * cta_scale);
    kr.bytes_written = uint64_t(double(k.bytes_written) * cta_scale);
    kr.flops = r.total_flops();
    kr.ctas = r.cta_count();
    kr.ctas_per_sm = k.per_unit;
    kr.measured_ns = double(r.measured_ns);
    kr.simulated = k.reused                            ? "reused"
                   : k.ctas_simulated < r.cta_count() ? "sampled"
                   : k.line_share < 1                 ? "steady"
                                                      : "all";
    kr.wall_s = k.wall_s;
    kr.processor = procs_[k.proc]->unit_name();
    kr.roofline_ns = k.roofline_ns();
    kr.bound = k.mem_roofline_ns >= k.flop_roofline_ns ? "memory" : "compute";
    out.bytes_read += kr.bytes_read;
    out.bytes_written += kr.bytes_written;
    out.kernels.push_back(std::move(kr));
  }
  if (timeline_.on()) {
    sample_counters(now);
    std::vector<std::pair<uint32_t, uint32_t>> edges;
    for (uint32_t i = 0; i < k_.size(); ++i)
      for (uint32_t d : k_[i].dependents) edges.emplace_back(i, d);
    timeline_.write(out.kernels, edges);
  }
  if (opt_.keep_segments) out.segments = reuse_->library();
  out.unsimulated = counters_.unsimulated();
  return out;
}

}  // namespace

ReplayOutput replay(const std::vector<model::Processor*>& processors, const ReplayInput& in, const ReplayOptions& opt) {
  if (processors.empty()) throw std::invalid_argument("replay: no processor");
  Engine e(processors, in, opt);
  return e.run();
}

ReplayOutput replay(model::Processor& processor, const ReplayInput& in, const ReplayOptions& opt) {
  return replay(std::vector<model::Processor*>{&processor}, in, opt);
}

}  // namespace indexsim::sim
