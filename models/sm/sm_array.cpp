// SPDX-License-Identifier: Apache-2.0
#include "models/sm/sm_array.hpp"

#include <algorithm>
#include <cmath>

#include "models/common/distinct_lines.hpp"
#include "models/common/steady_rate.hpp"

namespace indexsim::model {

using trace::AccessRecord;
using trace::KernelRecord;

namespace {

// Steady projection applies to kernels whose CTAs' line counts differ by at most this fraction.
constexpr double kUniformCtas = 0.05;
// ... and whose rate over the latest third of its marks is within this fraction of the third before.
constexpr double kSteadyLineRate = 0.02;

// A request's id carries where its completion goes: the slot, the SM and its line count.
constexpr uint32_t kSlotBits = 8;   // CTA slot inside an SM (max_ctas_per_sm <= 255)
constexpr uint32_t kSmBits = 12;    // SM index (sm_count <= 4096)
constexpr uint32_t kLineBits = 6;   // lines of a request, less one
static_assert(kMaxRequestLines <= (1u << kLineBits), "a request's line count must fit its tag");
constexpr uint32_t kIdTagBits = kSlotBits + kSmBits + kLineBits;

}  // namespace

SmArray::SmArray(const SmParams& sm, const TensorCoreParams& tc, MemoryDevice& memory)
    : p_(sm), tc_(tc), mem_(memory), sms_(size_t(sm.sm_count)) {
  for (auto& s : sms_) s.slots.resize(size_t(p_.max_ctas_per_sm));
}

uint64_t SmArray::fitted_smem_bytes(uint64_t smem) const {
  // The stage count is an architecture parameter in CUTLASS: a kernel class whose CTA needs more
  // than the SM offers keeps its bytes per stage (smem / pipeline_stages) and drops stages until it
  // fits; when not even one stage fits it is left as it is, and the replay says which kernel cannot run.
  if (smem <= p_.smem_per_sm_bytes) return smem;
  const uint64_t stage = std::max<uint64_t>(1, smem / uint64_t(p_.pipeline_stages));
  const uint64_t stages = p_.smem_per_sm_bytes / stage;
  return stages == 0 ? smem : stages * stage;
}

trace::LaunchLimits SmArray::launch_limits() const {
  trace::LaunchLimits l;
  l.units = uint32_t(p_.sm_count);
  l.smem_per_cta_bytes = p_.smem_per_cta_max_bytes;
  l.smem_per_unit_bytes = p_.smem_per_sm_bytes;
  l.max_threads_per_unit = uint32_t(p_.max_threads_per_sm);
  l.registers_per_unit = uint32_t(p_.registers_per_sm);
  for (int i = 0; i < trace::kPrecisionCount; ++i) l.native[size_t(i)] = tc_.params().flops_per_clk[size_t(i)] > 0;
  l.warpgroup_mma = p_.warpgroup_mma;
  const auto& tc = tc_.params();
  l.simt_flops_per_fp8_value = tc.fp8_dequant_cycles_per_value * tc.flops_per_clk[int(trace::Precision::simt)];
  return l;
}

AccessCursor SmArray::cursor_for(const KernelWork& w, const std::vector<const trace::AccessRecord*>* records,
                                 uint64_t cta, uint32_t steps) const {
  return AccessCursor(records, static_cast<uint32_t>(cta), w.tensor_base, p_.line_bytes, p_.sector_bytes,
                      w.coarse ? p_.fast_chunk_bytes : p_.line_bytes, w.tensor_tag, steps);
}

AccessCursor SmArray::load_cursor(const Kernel& k, uint64_t cta) const {
  return cursor_for(k.work, k.phases ? &(*k.phases)[0] : k.work.accesses, cta, k.work.rec->load_steps);
}

AccessCursor SmArray::store_cursor(const Kernel& k, uint64_t cta) const {
  return cursor_for(k.work, &(*k.phases)[1], cta, 0);
}

// A CTA's warps issue I = warp_instructions / (CTAs · warps a CTA) instructions each. The W warps
// resident on a scheduler (the CTAs that share an SM at this kernel's occupancy) take turns, one
// instruction a cycle at most, and a warp cannot issue again until `warp_issue_interval_cycles`
// after its last instruction; so each warp's stream takes I · max(W, interval) cycles. Few warps
// (top-k's single 1024-thread sort, a 128-thread combine) are bound by the interval; many by issue.
Tick SmArray::issue_ps(const KernelRecord& r) const {
  if (r.warp_instructions <= 0 || p_.warp_issue_interval_cycles <= 0) return 0;
  const double ctas = double(std::max<uint64_t>(1, r.cta_count()));
  const double warps_per_cta = std::ceil(double(r.threads_per_cta()) / 32.0);
  const double resident = std::min<double>(std::max(1, ctas_per_sm(p_, r)), std::ceil(ctas / double(p_.sm_count)));
  const double per_scheduler = std::max(1.0, resident * warps_per_cta / p_.warp_schedulers_per_sm);
  const double insts_per_warp = r.warp_instructions / ctas / warps_per_cta;
  const double cycles = insts_per_warp * std::max(per_scheduler, p_.warp_issue_interval_cycles);
  return Tick(std::llround(cycles * 1e6 / p_.sm_clock_MHz));
}

void SmArray::launch(const KernelWork& w, Tick now) {
  if (w.kernel >= kernels_.size()) kernels_.resize(size_t(w.kernel) + 1);
  Kernel& k = kernels_[w.kernel];
  k = Kernel{};
  k.work = w;
  const KernelRecord& r = *w.rec;
  std::array<double, trace::kPrecisionCount> per_cta{};
  const double n = double(std::max<uint64_t>(1, r.cta_count()));
  for (int p = 0; p < trace::kPrecisionCount; ++p) per_cta[p] = r.flops[p] / n;
  k.cta_compute = tc_.compute_ps(per_cta, r.simt_overlaps_mma);
  // A multi-stage pipeline holds smem / stages bytes a stage; the math on the last stage's data is
  // that share of the CTA's math (a 6 MiB GEMM panel through 48 KiB stages leaves 1/128 of it).
  // Kernels without shared memory stream through registers: a stage is 1/stages of the CTA.
  double read_per_cta = 0;
  for (const AccessRecord* a : *w.accesses)
    if (!a->write) read_per_cta += double(a->total_bytes());
  read_per_cta /= n;
  const double stage_bytes = double(r.smem_bytes) / p_.pipeline_stages;
  const double tail = r.smem_bytes > 0 && read_per_cta > 0 ? std::min(1.0, stage_bytes / read_per_cta)
                                                           : 1.0 / p_.pipeline_stages;
  k.cta_tail = Tick(double(k.cta_compute) * tail);
  k.cta_issue = issue_ps(r);
  if (auto phases = epilogue_phases(r, *w.accesses); !phases[1].empty())
    k.phases = std::make_unique<std::array<std::vector<const AccessRecord*>, 2>>(std::move(phases));
  k.math_spare = k.cta_tail + Tick(p_.fast_sampling.math_bound_slack * double(k.cta_compute));
  const uint32_t marks = p_.fast_sampling.line_marks;
  // One wave only: across waves the rate steps as a wave ends and the next ramps up (a 2-wave GEMM
  // went steady in its second wave and came out 4 % fast).
  if (w.project_when_steady && marks > 0 && w.ctas <= uint64_t(ctas_per_sm(p_, r)) * sms_.size()) {
    uint64_t least = ~uint64_t(0), most = 0;
    for (uint64_t c = w.first_cta; c < w.first_cta + w.ctas; ++c) {
      uint64_t lines = 0;
      for (AccessCursor cur = load_cursor(k, c); !cur.done();) lines += lines_of(cur.next().bytes);
      if (k.phases)
        for (AccessCursor cur = store_cursor(k, c); !cur.done();) lines += lines_of(cur.next().bytes);
      k.lines_total += lines;
      least = std::min(least, lines);
      most = std::max(most, lines);
    }
    k.mark_lines = double(k.lines_total) / marks;
    // Only CTAs of one size share a rate to the end: where some have more lines than others, those
    // speed up as the others finish, which one steady rate cannot say (a kernel whose CTAs split a
    // scan unevenly came out 18 % slow). Fewer lines than marks leave nothing to mark with.
    k.marking = k.lines_total >= uint64_t(marks) * 4 && double(most) <= double(least) * (1 + kUniformCtas);
  }
  // Launch order among ready kernels: by handle (the order the host enqueued them).
  ready_.insert(std::upper_bound(ready_.begin(), ready_.end(), w.kernel), w.kernel);
  mem_next_valid_ = false;
  dispatch_pending_ = true;
  dispatch_at_ = now;
}

Tick SmArray::next_event() const {
  Tick t = ends_.empty() ? kNever : ends_.top().t;
  t = std::min(t, memory_next());
  if (dispatch_pending_ && !ready_.empty()) t = std::min(t, dispatch_at_);
  return t;
}

void SmArray::advance(Tick now, std::vector<CtaEnd>& ended) {
  // Work queued or slots freed at the last event start first, then the memory system answers, then
  // the CTAs due end (their slots fill at the next call, at this same time).
  if (dispatch_pending_) {
    dispatch_pending_ = false;
    if (!ready_.empty()) {
      dispatch(now);
      mem_next_valid_ = false;  // new requests went out
    }
  }
  if (memory_next() <= now) {
    mem_next_valid_ = false;
    done_.clear();
    mem_.advance(now, done_);
    for (const auto& c : done_) {
      const uint32_t slot = uint32_t(c.id & ((1u << kSlotBits) - 1));
      const uint32_t sm = uint32_t((c.id >> kSlotBits) & ((1u << kSmBits) - 1));
      Sm& s = sms_[sm];
      Slot& sl = s.slots[slot];
      --sl.outstanding;
      const uint32_t lines = uint32_t((c.id >> (kSlotBits + kSmBits)) & ((1u << kLineBits) - 1)) + 1;
      s.lines_in_flight -= lines;
      sl.lines_out -= lines;
      // Off in every preset: the kernel's state is not touched per completion then.
      if (p_.fast_sampling.line_marks > 0 && kernels_[sl.kernel].marking) lines_done(sl.kernel, lines, std::max(now, c.done));
      if (sl.outstanding == 0 && sl.cursor.done() && !sl.mem_done)
        finish_memory(sm, slot, std::max({now, c.done, sl.mem_floor}));
      issue(sm, now);
    }
    // SMs refused by a full queue try again now that something drained.
    if (!stalled_.empty()) {
      auto stalled = std::move(stalled_);
      stalled_.clear();
      for (uint32_t sm : stalled) {
        sms_[sm].stalled = false;
        issue(sm, now);
      }
    }
  }
  while (!ends_.empty() && ends_.top().t <= now) {
    const End e = ends_.top();
    ends_.pop();
    Slot& sl = sms_[e.sm].slots[e.slot];
    if (sl.stores_pending) {
      start_stores(e.sm, e.slot, now);
      continue;
    }
    if (!sl.turning) {
      ended.push_back(end_cta(e.sm, e.slot, now));
      // The slot is held until the block scheduler can fill it; a persistent grid's CTA takes its
      // next unit itself.
      if (p_.cta_launch_ns > 0 && !kernels_[sl.kernel].work.rec->persistent) {
        sl.turning = true;
        ends_.push({now + ns_to_ps(p_.cta_launch_ns), seq_++, e.sm, e.slot});
        continue;
      }
    }
    free_slot(e.sm, e.slot, now);
    dispatch_pending_ = true;
    dispatch_at_ = now;
  }
}

void SmArray::dispatch(Tick now) {
  // Kernels in launch order, each spread breadth-first over the SMs.
  for (size_t i = 0; i < ready_.size();) {
    Kernel& k = kernels_[ready_[i]];
    uint32_t tried = 0;
    while (k.next < k.work.ctas && tried < sms_.size()) {
      const uint32_t sm = rr_sm_;
      rr_sm_ = (rr_sm_ + 1) % uint32_t(sms_.size());
      if (fits(sms_[sm], *k.work.rec)) {
        start_cta(sm, ready_[i], now);
        tried = 0;
      } else {
        ++tried;
      }
    }
    if (k.next >= k.work.ctas) {
      ready_.erase(ready_.begin() + long(i));
    } else {
      ++i;  // the machine is full for this kernel; a later kernel may still fit (smaller CTAs)
    }
  }
}

void SmArray::start_cta(uint32_t sm, uint32_t kernel, Tick now) {
  Sm& s = sms_[sm];
  Kernel& k = kernels_[kernel];
  uint32_t slot = 0;
  while (s.slots[slot].used) ++slot;
  Slot& sl = s.slots[slot];
  const uint64_t cta = k.work.first_cta + k.next++;
  sl = Slot{};
  sl.used = true;
  sl.kernel = kernel;
  sl.start = now;
  sl.cta = uint32_t(cta);
  // An epilogue kernel's CTA loads first; its stores wait for its math (start_stores).
  sl.cursor = load_cursor(k, cta);
  sl.stores_pending = k.phases != nullptr;
  const auto& r = *k.work.rec;
  const int threads = int(r.threads_per_cta());
  if (s.ctas == 0) s.resident_since = now;
  s.ctas++;
  s.threads += threads;
  s.regs += int(r.regs_per_thread) * threads;
  s.smem += r.smem_bytes;
  s.pipeline_lines += pipeline_lines(r);
  if (r.double_buffered) {
    // Loads and math overlap: the CTA's math occupies the SM's tensor pipe from its start.
    const Tick cs = std::max(now, s.tensor_free);
    sl.compute_end = cs + k.cta_compute;
    s.tensor_free = sl.compute_end;
    s.tensor_busy += k.cta_compute;
  }
  if (k.marking) k.first_start = std::min(k.first_start, now);
  begin_requests(sm, slot, now);
}

void SmArray::begin_requests(uint32_t sm, uint32_t slot, Tick now) {
  Sm& s = sms_[sm];
  Slot& sl = s.slots[slot];
  if (kernels_[sl.kernel].steady) {
    project(sm, slot, now);
  } else if (sl.cursor.done()) {
    finish_memory(sm, slot, now);
  } else {
    s.active.push_back(slot);
    mem_next_valid_ = false;
    issue(sm, now);
  }
}

void SmArray::issue(uint32_t sm, Tick now) {
  Sm& s = sms_[sm];
  const auto window = std::max(uint32_t(p_.max_outstanding_requests), s.pipeline_lines);
  while (s.lines_in_flight < window && !s.active.empty()) {
    if (s.rr >= s.active.size()) s.rr = 0;
    const uint32_t slot = s.active[s.rr];
    Slot& sl = s.slots[slot];
    AccessCursor saved = sl.cursor;
    const CtaRequest r = sl.cursor.next();
    // Little's law must not depend on the mode: a request holds as many window entries as the
    // lines it spans (one in the detailed mode), and waits until they are free.
    const uint32_t lines = lines_of(r.bytes);
    if (s.lines_in_flight > 0 && s.lines_in_flight + lines > window) {
      sl.cursor = saved;
      return;
    }
    MemRequest mr;
    mr.id = (req_seq_ << kIdTagBits) | (uint64_t(lines - 1) << (kSlotBits + kSmBits)) | (uint64_t(sm) << kSlotBits) |
            slot;
    mr.addr = r.addr;
    mr.bytes = r.bytes;
    mr.write = r.write;
    mr.tag = r.tag;
    mr.source = sm;
    if (!mem_.try_enqueue(mr, now)) {
      sl.cursor = saved;  // retry the same request once the memory system drains
      // Held by a limit of its own (its crossbar port full): one of its completions, which issues
      // again, is the first chance. Retrying at every other event only refused again, and those
      // refusals were most of a memory-bound kernel's wall time.
      if (s.lines_in_flight > 0 && mem_.refused_per_source()) return;
      if (!s.stalled) {
        s.stalled = true;
        stalled_.push_back(sm);
      }
      return;
    }
    ++req_seq_;
    ++sl.outstanding;
    s.lines_in_flight += lines;
    sl.lines_out += lines;
    ++sl.requests;
    (r.write ? sl.bytes_written : sl.bytes_read) += r.bytes;
    if (sl.cursor.done()) {
      s.active.erase(s.active.begin() + long(s.rr));
    } else {
      ++s.rr;  // interleave CTAs request by request, as warps of different CTAs do
    }
  }
}

namespace {
// The rate over the latest third of the marks, in ps a mark (at least the roofline's).
double recent_ps_per_mark(const std::vector<Tick>& m, double floor_ps) {
  const size_t n = m.size(), third = std::max<size_t>(2, n / 3);
  return std::max(floor_ps, double(m[n - 1] - m[n - 1 - third]) / double(third));
}
// Line marks come in bursts (a GEMM's weight rows: 120 ns a mark, then 97), so a line fitted
// through all of them can pass the wave test while 10 % off. Steady here: the wave test, and the
// latest third's rate within the tolerance (as a fraction of the rate) of the third before it.
bool steady_lines(const std::vector<Tick>& m, Tick start, double floor_ps, const WaveSampling& rule) {
  const size_t n = m.size(), third = n / 3;
  if (third < 2 || !steady_end(m, start, rule.line_marks, floor_ps, rule)) return false;
  const double latest = double(m[n - 1] - m[n - 1 - third]), before = double(m[n - 1 - third] - m[n - 1 - 2 * third]);
  return std::abs(latest - before) <= kSteadyLineRate * before;
}
}  // namespace

void SmArray::lines_done(uint32_t kernel, uint32_t lines, Tick now) {
  Kernel& k = kernels_[kernel];
  k.lines_done += lines;
  if (k.steady) return;
  const WaveSampling& rule = p_.fast_sampling;
  bool added = false;
  while (k.marks.size() + 1 < rule.line_marks && double(k.lines_done) >= k.mark_lines * double(k.marks.size() + 1)) {
    k.marks.push_back(now);
    added = true;
  }
  const double floor_ps = k.work.roofline_ps / rule.line_marks;
  if (!added || !steady_lines(k.marks, k.first_start, floor_ps, rule)) return;
  // Steady: the lines each of its CTAs has left (those in flight included) are warmed, not
  // simulated, and take the time the kernel's steady rate R gives them, shared by the CTAs moving
  // data now (each CTA's window is full at the kernel's latency: as some end, the others speed up
  // less than a share of R would say; GEMMs came out 4-7 % fast with R shared by the CTAs left).
  const double lines_per_ps = k.mark_lines / recent_ps_per_mark(k.marks, floor_ps);
  std::vector<std::pair<uint32_t, uint32_t>> moving;  // (SM, slot)
  for (uint32_t sm = 0; sm < sms_.size(); ++sm)
    for (uint32_t slot = 0; slot < sms_[sm].slots.size(); ++slot) {
      const Slot& sl = sms_[sm].slots[slot];
      if (sl.used && sl.kernel == kernel && !sl.mem_done) moving.emplace_back(sm, slot);
    }
  k.steady = true;
  // Each of them gets R / (CTAs moving); so does one of its CTAs that starts later (its wave had
  // waited for another kernel's CTAs to leave).
  k.cta_ps_per_line = double(moving.size()) / lines_per_ps;
  for (const auto& [sm, slot] : moving) project(sm, slot, now);
}

uint64_t SmArray::warm_rest(uint32_t sm, uint32_t slot) {
  // The rest of a CTA's requests leave the state they would (warm), counted as its traffic; its
  // lines still in flight drain ahead of them (returned with them).
  Sm& s = sms_[sm];
  Slot& sl = s.slots[slot];
  Kernel& k = kernels_[sl.kernel];
  uint64_t lines = 0;
  // A projected CTA's stores ride at the same steady rate as its loads.
  for (bool more = true; more;) {
    while (!sl.cursor.done()) {
      const CtaRequest q = sl.cursor.next();
      mem_.warm({0, q.addr, q.bytes, q.write, 0});
      lines += lines_of(q.bytes);
      ++sl.requests;
      (q.write ? sl.bytes_written : sl.bytes_read) += q.bytes;
    }
    more = sl.stores_pending;
    if (more) {
      sl.stores_pending = false;
      sl.cursor = store_cursor(k, sl.cta);
    }
  }
  mem_next_valid_ = false;
  k.lines_projected += lines;
  const auto it = std::find(s.active.begin(), s.active.end(), slot);
  if (it != s.active.end()) {
    if (size_t(it - s.active.begin()) < s.rr) --s.rr;
    s.active.erase(it);
  }
  return lines + sl.lines_out;
}

void SmArray::project(uint32_t sm, uint32_t slot, Tick now) {
  // The CTA's lines left, warmed, at the steady per-CTA rate.
  Slot& sl = sms_[sm].slots[slot];
  const Kernel& k = kernels_[sl.kernel];
  sl.mem_floor = now + Tick(double(warm_rest(sm, slot)) * k.cta_ps_per_line);
  if (sl.outstanding == 0) finish_memory(sm, slot, sl.mem_floor);
}

double SmArray::simulated_line_share(uint32_t kernel) const {
  if (kernel >= kernels_.size()) return 1.0;
  const Kernel& k = kernels_[kernel];
  return k.lines_total == 0 ? 1.0 : 1.0 - double(k.lines_projected) / double(k.lines_total);
}

void SmArray::finish_memory(uint32_t sm, uint32_t slot, Tick now) {
  Sm& s = sms_[sm];
  Slot& sl = s.slots[slot];
  const Kernel& k = kernels_[sl.kernel];
  sl.mem_done = true;
  Tick end;
  if (sl.storing) {
    end = now;  // its math ended before its stores began
  } else if (k.work.rec->double_buffered) {
    // The last stage's math runs after its data arrives.
    end = std::max(sl.compute_end, now + k.cta_tail);
    sl.math_bound = sl.compute_end >= now + k.math_spare;
  } else {
    const Tick cs = std::max(now, s.tensor_free);
    end = cs + k.cta_compute;
    s.tensor_free = end;
    s.tensor_busy += k.cta_compute;
  }
  end = std::max(end, sl.start + k.cta_issue);  // not before its warps have issued their instructions
  if (sl.stores_pending) {  // its stores go out when its math ends
    ends_.push({end, seq_++, sm, slot});
    return;
  }
  // A collective's CTA then waits on its peers' handshakes (the kernel's wait_ns); it holds its
  // slot meanwhile, as a spinning NCCL channel does.
  end += ns_to_ps(double(k.work.rec->wait_ns));
  ends_.push({end, seq_++, sm, slot});
}

void SmArray::start_stores(uint32_t sm, uint32_t slot, Tick now) {
  // The epilogue: the CTA's output leaves after its math, and the CTA holds its SM until every
  // store is acknowledged. DeepGEMM's persistent kernel lets a tile's store drain during the next
  // tile's mainloop and waits for it only before that tile's own epilogue: this serialises more
  // (docs/library-heuristics.md §1c has the comparison and the measurements behind the choice).
  Slot& sl = sms_[sm].slots[slot];
  sl.stores_pending = false;
  sl.storing = true;
  sl.mem_done = false;
  sl.cursor = store_cursor(kernels_[sl.kernel], sl.cta);
  begin_requests(sm, slot, now);
}

CtaEnd SmArray::end_cta(uint32_t sm, uint32_t slot, Tick now) {
  const Slot& sl = sms_[sm].slots[slot];
  const Kernel& k = kernels_[sl.kernel];
  return {sl.kernel, sm, sl.start, now, sl.bytes_read, sl.bytes_written, sl.requests, k.next >= k.work.ctas, sl.math_bound};
}

void SmArray::free_slot(uint32_t sm, uint32_t slot, Tick now) {
  Sm& s = sms_[sm];
  Slot& sl = s.slots[slot];
  const auto& r = *kernels_[sl.kernel].work.rec;
  const int threads = int(r.threads_per_cta());
  s.ctas--;
  s.threads -= threads;
  s.regs -= int(r.regs_per_thread) * threads;
  s.smem -= r.smem_bytes;
  s.pipeline_lines -= pipeline_lines(r);
  if (s.ctas == 0) s.resident_total += now - s.resident_since;
  sl.used = false;
  sl.turning = false;
}

uint64_t SmArray::first_warming_cta(const KernelWork& w) const {
  // Walk back from the last CTA until its distinct lines fill the caches warm_capacities times.
  const uint64_t end = w.first_cta + w.ctas;
  if (p_.warm_capacities <= 0) return w.first_cta;
  const uint64_t reach = mem_.warm_reach_bytes();
  if (reach == 0) return end;  // nothing below keeps what warming would leave
  if (reach == UINT64_MAX) return w.first_cta;
  DistinctLines seen(uint64_t(p_.warm_capacities * double(reach) / double(p_.line_bytes)));
  const uint32_t shift = uint32_t(__builtin_ctz(p_.line_bytes));
  for (uint64_t c = end; c > w.first_cta; --c) {
    AccessCursor cur = cursor_for(w, w.accesses, c - 1, 0);
    while (!cur.done()) {
      const CtaRequest q = cur.next();
      for (uint64_t l = q.addr >> shift, last = (q.addr + std::max<uint32_t>(q.bytes, 1) - 1) >> shift; l <= last; ++l) seen.add(l);
    }
    if (seen.reached()) return c - 1;
  }
  return w.first_cta;
}

void SmArray::warm(const KernelWork& w) {
  mem_next_valid_ = false;
  for (uint64_t c = first_warming_cta(w); c < w.first_cta + w.ctas; ++c) {
    AccessCursor cur = cursor_for(w, w.accesses, c, 0);  // record by record: the same lines, fewer fast-mode requests
    while (!cur.done()) {
      const CtaRequest q = cur.next();
      mem_.warm({0, q.addr, q.bytes, q.write, 0});
    }
  }
}

uint64_t SmArray::stop_starting(uint32_t kernel) {
  Kernel& k = kernels_[kernel];
  k.work.ctas = k.next;  // its CTAs that end from now on report all_started
  const auto it = std::find(ready_.begin(), ready_.end(), kernel);
  if (it != ready_.end()) ready_.erase(it);
  return k.next;
}

Tick SmArray::resident_ps_at(Tick now) const {
  Tick t = 0;
  for (const auto& s : sms_) t += s.resident_total + (s.ctas > 0 && now > s.resident_since ? now - s.resident_since : 0);
  return t;
}

ProcessorActivity SmArray::activity() const {
  ProcessorActivity a;
  for (const auto& s : sms_) {
    a.resident_ps += s.resident_total;
    a.compute_ps += s.tensor_busy;
  }
  return a;
}

namespace {
INDEXSIM_REGISTER(ProcessorRegistry, "processor", "sm_array", [](const config::Node& gpu, MemoryDevice& memory) {
  return std::make_unique<SmArray>(SmParams::load(gpu), TensorCoreParams::load(gpu), memory);
});
}  // namespace

}  // namespace indexsim::model
