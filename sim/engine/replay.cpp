// SPDX-License-Identifier: Apache-2.0
#include "sim/engine/replay.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <queue>
#include <stdexcept>

#include <nlohmann/json.hpp>

namespace indexsim::sim {

using model::Tick;
using trace::AccessRecord;
using trace::KernelRecord;

namespace {

constexpr uint32_t kSlotBits = 8;   // CTA slot inside an SM (max_ctas_per_sm <= 255)
constexpr uint32_t kSmBits = 12;    // SM index (sm_count <= 4096)
constexpr uint32_t kLineBits = 6;   // lines of a request, less one
static_assert(model::kMaxRequestLines <= (1u << kLineBits), "a request's line count must fit its tag");
constexpr uint32_t kIdTagBits = kSlotBits + kSmBits + kLineBits;
constexpr uint64_t kAlignmentBytes = 4096;  // kernel reuse: a larger alignment than any line or chunk
constexpr size_t kMaxSegmentsPerStart = 16;  // memos kept per first-member signature

struct KernelState {
  const KernelRecord* rec = nullptr;
  std::vector<const AccessRecord*> accesses;
  std::vector<uint32_t> dependents;
  uint32_t deps_left = 0;
  Tick deps_done = 0;             // when the last dependence finished
  uint64_t next_cta = 0, ctas_done = 0;
  uint64_t ctas_simulated = 0;    // all of them, or the sampled waves in the fast mode
  Tick start = model::kNever, end = 0;
  Tick cta_compute = 0;           // Tensor Core / CUDA-core time of one CTA
  Tick cta_tail = 0;              // double-buffered: the math on the last stage, after its data lands
  // Fast mode: contiguous runs go out as chunks only in a kernel that fills a wave. One that does
  // not is latency-bound: a chunk frees its window entries when its slowest line returns, which
  // slows a lone CTA's stream by ~20 %, so its requests stay line-sized.
  bool coarse = false;
  // Sampled kernels: when each whole number of waves' worth of CTAs had ended, while the machine
  // was still full (before the last sampled CTA started).
  std::vector<Tick> wave_done;
  int per_sm = 0;
  uint64_t wave = 0;              // CTAs of one full wave: sm_count x per_sm
  uint64_t bytes_read = 0, bytes_written = 0;
  std::vector<double> bytes_by_region;  // for the roofline
  std::map<uint32_t, double> bytes_by_tensor;
  double mem_roofline_ns = 0, flop_roofline_ns = 0;   // compulsory bytes / peak, FLOPs / peak
  double roofline_ns() const { return std::max(mem_roofline_ns, flop_roofline_ns); }
  uint64_t requests = 0;
  // Reuse (ReplayOptions::reuse).
  std::string signature;          // everything that decides the kernel's timing, except addresses
  Tick ready_at = 0;
  bool reused = false;
  const struct SegmentMember* stand_in = nullptr;   // takes this member's figures when it becomes ready
};

// A segment runs from a moment the machine is idle (a kernel becomes ready with nothing running,
// ready or about to be) to the next such moment; its members are the kernels that became ready in
// between, the first one first. What a simulated segment leaves for a later one that repeats it:
struct SegmentMember {
  std::string signature;
  Tick ready = 0;                 // after the segment's start
  Tick duration = 0;              // ready to end
  uint64_t bytes_read = 0, bytes_written = 0, requests = 0, ctas_simulated = 0;
};
struct SegmentMemo {
  std::vector<SegmentMember> members;
  Tick span = 0;                  // the last member's end, after the segment's start
  Tick resident = 0, tensor = 0;  // SM-resident and tensor-busy time summed over SMs
};

struct Slot {
  bool used = false;
  uint32_t kernel = 0;
  uint64_t cta = 0;
  model::AccessCursor cursor;
  uint32_t outstanding = 0;
  Tick start = 0;
  Tick compute_end = 0;           // reserved tensor-pipe interval end (double-buffered kernels)
  bool mem_done = false;
};

struct SmState {
  std::vector<Slot> slots;
  std::vector<uint32_t> active;   // slots with requests left to issue
  size_t rr = 0;                  // round-robin position in `active`
  uint32_t lines_in_flight = 0;   // the window counts lines: a 2 KiB fast-mode request holds 16
  int threads = 0, ctas = 0, regs = 0;
  uint64_t smem = 0;
  Tick tensor_free = 0;
  Tick tensor_busy = 0;
  Tick resident_since = 0;        // start of the current interval with at least one CTA
  Tick resident_total = 0;
  bool stalled = false;           // the memory system refused a request
};

enum class Ev : uint8_t { cta_end, kernel_ready, kernel_end };
struct Event {
  Tick t;
  uint64_t seq;
  Ev type;
  uint32_t a, b;
  bool operator>(const Event& o) const { return t != o.t ? t > o.t : seq > o.seq; }
};

class Engine {
 public:
  Engine(const model::SmParams& sm, const model::TensorCore& tc, model::MemoryDevice& mem,
         const ReplayInput& in, const ReplayOptions& opt)
      : p_(sm), tc_(tc), mem_(mem), in_(in), opt_(opt) {}

  ReplayOutput run();

 private:
  void push(Tick t, Ev type, uint32_t a, uint32_t b = 0) {
    if (type == Ev::kernel_ready) ++pending_ready_;
    q_.push({t, seq_++, type, a, b});
  }
  void dispatch(Tick now);
  bool fits(const SmState& s, const KernelState& k) const;
  void start_cta(uint32_t sm, uint32_t kernel, Tick now);
  void issue(uint32_t sm, Tick now);
  void finish_memory(uint32_t sm, uint32_t slot, Tick now);
  void end_cta(uint32_t sm, uint32_t slot, Tick now);
  void end_kernel(uint32_t k, Tick now);
  uint32_t region_of(uint32_t tensor) const { return region_index_[tensor]; }
  void kernel_ready(uint32_t k, Tick now);
  void warm_with_unsimulated(const KernelState& k);
  model::AccessCursor cursor_for(const KernelState& k, uint64_t cta) const {
    return model::AccessCursor(&k.accesses, static_cast<uint32_t>(cta), &in_.tensor_base, p_.line_bytes,
                               p_.sector_bytes, k.coarse ? p_.fast_chunk_bytes : p_.line_bytes);
  }
  std::string signature(const KernelState& k) const;
  const std::string& signature_of(uint32_t kid);
  void close_segment();
  bool reuse_segment(uint32_t kid, Tick now);
  void take(uint32_t kid, const SegmentMember& m, Tick now);
  Tick resident_sum() const;
  Tick tensor_sum() const;

  const model::SmParams& p_;
  const model::TensorCore& tc_;
  model::MemoryDevice& mem_;
  const ReplayInput& in_;
  const ReplayOptions& opt_;

  std::vector<KernelState> k_;
  std::vector<SmState> sms_;
  std::vector<uint32_t> ready_;   // kernels with CTAs left to dispatch, in launch order
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> q_;
  uint64_t seq_ = 0, req_seq_ = 0;
  std::vector<uint32_t> stalled_;
  std::vector<model::MemCompletion> done_;
  uint32_t rr_sm_ = 0;
  uint64_t ctas_total_ = 0, ctas_done_ = 0, kernels_left_ = 0;
  uint32_t running_ = 0;          // kernels dispatched (or reused) and not yet ended
  uint32_t pending_ready_ = 0;    // kernel_ready events in the queue
  // Segments by their first member's signature (a stored memo never changes: stand-ins point into
  // its members); the one being simulated now, if it started idle.
  std::map<std::string, std::vector<SegmentMemo>> segments_;
  struct Recording {
    bool active = false;
    Tick start = 0, resident = 0, tensor = 0;
    std::vector<uint32_t> kernels;
  } recording_;
  Tick reused_resident_ = 0, reused_tensor_ = 0;
  std::vector<uint32_t> region_index_;
  std::vector<std::string> regions_;
  ReplayOutput out_;
  // Timeline: per (kernel, SM group) first start and last end.
  std::map<std::pair<uint32_t, uint32_t>, std::pair<Tick, Tick>> sm_group_spans_;
  static constexpr uint32_t kSmGroup = 16;
};

bool Engine::fits(const SmState& s, const KernelState& k) const {
  const auto& r = *k.rec;
  const int threads = int(r.threads_per_cta());
  return s.ctas < p_.max_ctas_per_sm && s.threads + threads <= p_.max_threads_per_sm &&
         s.regs + int(r.regs_per_thread) * threads <= p_.registers_per_sm &&
         s.smem + r.smem_bytes <= p_.smem_per_sm_bytes;
}

void Engine::dispatch(Tick now) {
  // The block scheduler serves kernels in launch order and spreads CTAs breadth-first over SMs.
  for (size_t i = 0; i < ready_.size();) {
    KernelState& k = k_[ready_[i]];
    const uint64_t total = k.ctas_simulated;
    uint32_t tried = 0;
    while (k.next_cta < total && tried < sms_.size()) {
      const uint32_t sm = rr_sm_;
      rr_sm_ = (rr_sm_ + 1) % sms_.size();
      if (fits(sms_[sm], k)) {
        start_cta(sm, ready_[i], now);
        tried = 0;
      } else {
        ++tried;
      }
    }
    if (k.next_cta >= total) {
      ready_.erase(ready_.begin() + long(i));
    } else {
      ++i;  // the machine is full for this kernel; a later kernel may still fit (smaller CTAs)
    }
  }
}

void Engine::start_cta(uint32_t sm, uint32_t kernel, Tick now) {
  SmState& s = sms_[sm];
  KernelState& k = k_[kernel];
  uint32_t slot = 0;
  while (s.slots[slot].used) ++slot;
  Slot& sl = s.slots[slot];
  // A sampled kernel simulates its last CTAs, after warming with the ones before (kernel_ready).
  const uint64_t cta = k.rec->cta_count() - k.ctas_simulated + k.next_cta++;
  sl.used = true;
  sl.kernel = kernel;
  sl.cta = cta;
  sl.outstanding = 0;
  sl.start = now;
  sl.mem_done = false;
  sl.cursor = cursor_for(k, cta);
  const auto& r = *k.rec;
  const int threads = int(r.threads_per_cta());
  if (s.ctas == 0) s.resident_since = now;
  s.ctas++;
  s.threads += threads;
  s.regs += int(r.regs_per_thread) * threads;
  s.smem += r.smem_bytes;
  if (k.start == model::kNever) ++running_;
  k.start = std::min(k.start, now);
  if (r.double_buffered) {
    // Loads and math overlap: the CTA's math occupies the SM's tensor pipe from its start.
    const Tick cs = std::max(now, s.tensor_free);
    sl.compute_end = cs + k.cta_compute;
    s.tensor_free = sl.compute_end;
    s.tensor_busy += k.cta_compute;
  }
  if (sl.cursor.done()) {
    finish_memory(sm, slot, now);
  } else {
    s.active.push_back(slot);
    issue(sm, now);
  }
}

void Engine::issue(uint32_t sm, Tick now) {
  SmState& s = sms_[sm];
  const auto window = uint32_t(p_.max_outstanding_requests);
  while (s.lines_in_flight < window && !s.active.empty()) {
    if (s.rr >= s.active.size()) s.rr = 0;
    const uint32_t slot = s.active[s.rr];
    Slot& sl = s.slots[slot];
    model::AccessCursor saved = sl.cursor;
    const model::CtaRequest r = sl.cursor.next();
    // Little's law must not depend on the mode: a request holds as many window entries as the
    // lines it spans (one in the detailed mode), and waits until they are free.
    const uint32_t lines = (r.bytes + p_.line_bytes - 1) / p_.line_bytes;
    if (s.lines_in_flight > 0 && s.lines_in_flight + lines > window) {
      sl.cursor = saved;
      return;
    }
    model::MemRequest mr;
    mr.id = (req_seq_ << kIdTagBits) | (uint64_t(lines - 1) << (kSlotBits + kSmBits)) |
            (uint64_t(sm) << kSlotBits) | slot;
    mr.addr = r.addr;
    mr.bytes = r.bytes;
    mr.write = r.write;
    mr.source = sm;
    if (!mem_.try_enqueue(mr, now)) {
      sl.cursor = saved;  // retry the same request once the memory system drains
      if (!s.stalled) {
        s.stalled = true;
        stalled_.push_back(sm);
      }
      return;
    }
    ++req_seq_;
    ++out_.requests;
    ++sl.outstanding;
    s.lines_in_flight += lines;
    KernelState& k = k_[sl.kernel];
    ++k.requests;
    (r.write ? k.bytes_written : k.bytes_read) += r.bytes;
    if (sl.cursor.done()) {
      s.active.erase(s.active.begin() + long(s.rr));
    } else {
      ++s.rr;  // interleave CTAs request by request, as warps of different CTAs do
    }
  }
}

void Engine::finish_memory(uint32_t sm, uint32_t slot, Tick now) {
  SmState& s = sms_[sm];
  Slot& sl = s.slots[slot];
  KernelState& k = k_[sl.kernel];
  sl.mem_done = true;
  Tick end;
  if (k.rec->double_buffered) {
    // The last stage's math runs after its data arrives.
    end = std::max(sl.compute_end, now + k.cta_tail);
  } else {
    const Tick cs = std::max(now, s.tensor_free);
    end = cs + k.cta_compute;
    s.tensor_free = end;
    s.tensor_busy += k.cta_compute;
  }
  end += model::ns_to_ps(p_.cta_launch_ns);
  push(end, Ev::cta_end, sm, slot);
}

void Engine::end_cta(uint32_t sm, uint32_t slot, Tick now) {
  SmState& s = sms_[sm];
  Slot& sl = s.slots[slot];
  KernelState& k = k_[sl.kernel];
  const auto& r = *k.rec;
  const int threads = int(r.threads_per_cta());
  s.ctas--;
  s.threads -= threads;
  s.regs -= int(r.regs_per_thread) * threads;
  s.smem -= r.smem_bytes;
  if (s.ctas == 0) s.resident_total += now - s.resident_since;
  sl.used = false;
  if (!opt_.timeline_path.empty()) {
    auto& span = sm_group_spans_[{sl.kernel, sm / kSmGroup}];
    if (span.second == 0) span.first = sl.start;
    span.first = std::min(span.first, sl.start);
    span.second = std::max(span.second, now);
  }
  ++ctas_done_;
  if (++k.ctas_done == k.ctas_simulated) {
    if (k.ctas_simulated == r.cta_count()) {
      end_kernel(sl.kernel, now);
    } else {
      // Sampled kernel: the rest of the grid runs at the steady rate, measured while the machine was
      // full: the least-squares line through the times at which each whole wave's worth of CTAs had
      // ended, up to the last sampled dispatch, evaluated at the whole grid. CTAs end in bursts
      // whose rhythm spans several waves (a 1 GiB read-only stream: four or five waves 4.3 us
      // apart, then a short one), so the rate between two end points of a 10-wave sample put that
      // kernel 5.1 % above its detailed run; the fitted line, 1.0 %. No rate beats the kernel's
      // roofline. Without two such marks, at the sampled average.
      Tick end;
      if (k.wave_done.size() >= 2) {
        const double roofline_per_wave = k.roofline_ns() * 1e3 / double(r.cta_count()) * double(k.wave);  // ps
        end = std::max(now, extrapolate_sampled_end(k.wave_done, double(r.cta_count()) / double(k.wave),
                                                    roofline_per_wave));
      } else {
        end = k.start + Tick(double(now - k.start) * double(r.cta_count()) / double(k.ctas_simulated));
      }
      push(end, Ev::kernel_end, sl.kernel);
    }
  }
  if (k.ctas_done % k.wave == 0 && k.ctas_simulated < r.cta_count() && k.next_cta < k.ctas_simulated)
    k.wave_done.push_back(now);
  if (opt_.progress && (ctas_done_ & 0xFFF) == 0) opt_.progress(double(ctas_done_) / double(ctas_total_));
}

void Engine::end_kernel(uint32_t kid, Tick now) {
  KernelState& k = k_[kid];
  k.end = now;
  --kernels_left_;
  --running_;
  for (uint32_t d : k.dependents) {
    KernelState& dk = k_[d];
    dk.deps_done = std::max(dk.deps_done, now);
    if (--dk.deps_left == 0) push(dk.deps_done + model::ns_to_ps(p_.kernel_launch_ns), Ev::kernel_ready, d);
  }
}

Tick Engine::resident_sum() const {
  Tick t = 0;
  for (const auto& s : sms_) t += s.resident_total;
  return t;
}

Tick Engine::tensor_sum() const {
  Tick t = 0;
  for (const auto& s : sms_) t += s.tensor_busy;
  return t;
}

std::string Engine::signature(const KernelState& k) const {
  // Raw bytes of every field that the timing depends on. Tensors and addresses are left out (the
  // same layer shape at another address, another expert of the same size), except the region a
  // tensor lives in and an access's alignment within 4 KiB, which decides how it splits into
  // sectors, lines and fast-mode chunks.
  std::string sig;
  auto put = [&sig](const auto& v) { sig.append(reinterpret_cast<const char*>(&v), sizeof v); };
  const auto& r = *k.rec;
  sig += r.kind;
  sig += '\0';
  for (uint32_t g : r.grid) put(g);
  for (uint32_t b : r.block) put(b);
  put(r.smem_bytes);
  put(r.regs_per_thread);
  for (double f : r.flops) put(f);
  put(r.double_buffered);
  for (const AccessRecord* a : k.accesses) {
    put(a->cta_first);
    put(a->cta_count);
    put(a->kind);
    put(a->write);
    put(region_of(a->tensor));
    put(a->base % kAlignmentBytes);
    put(a->cta_stride_bytes);
    put(a->elem_bytes);
    put(a->count);
    put(a->stride_bytes);
    put(a->row_bytes);
    put(a->row_pitch_bytes);
    // A gather is summarised by its row count and the distinct lines its rows touch, the latter in
    // 2 % steps: two layers' top-k selections drawn alike differ in which rows they pick (their
    // durations spread by ~2 % in the detailed mode, glm-5 decode), hardly in the traffic they
    // make; a gather with other locality (a captured trace's) still runs on its own.
    put(a->rows.size());
    if (!a->rows.empty()) {
      std::vector<uint64_t> lines;
      for (uint32_t row : a->rows) {
        const uint64_t lo = (a->base + uint64_t(row) * a->row_pitch_bytes) / p_.line_bytes;
        const uint64_t hi = (a->base + uint64_t(row) * a->row_pitch_bytes + std::max(a->row_bytes, 1u) - 1) / p_.line_bytes;
        for (uint64_t l = lo; l <= hi; ++l) lines.push_back(l);
      }
      std::sort(lines.begin(), lines.end());
      const auto distinct = double(std::unique(lines.begin(), lines.end()) - lines.begin());
      put(int32_t(std::floor(std::log(distinct) / std::log(1.02))));
    }
  }
  return sig;
}

void Engine::kernel_ready(uint32_t kid, Tick now) {
  KernelState& k = k_[kid];
  k.ready_at = now;
  if (k.stand_in) {  // a member of a segment being reused
    take(kid, *k.stand_in, now);
    return;
  }
  // Nothing running, queued or about to become ready: every unfinished kernel waits on this one,
  // and a segment ends and another starts.
  if (opt_.reuse && running_ == 0 && ready_.empty() && pending_ready_ == 0) {
    close_segment();
    if (reuse_segment(kid, now)) return;
    recording_ = {true, now, resident_sum(), tensor_sum(), {kid}};
  } else if (recording_.active) {
    recording_.kernels.push_back(kid);
  }
  if (k.ctas_simulated < k.rec->cta_count()) warm_with_unsimulated(k);
  // Launch order among ready kernels: by trace order (the order the host enqueued them).
  ready_.insert(std::upper_bound(ready_.begin(), ready_.end(), kid), kid);
}

const std::string& Engine::signature_of(uint32_t kid) {
  KernelState& k = k_[kid];
  if (k.signature.empty()) k.signature = signature(k);
  return k.signature;
}

void Engine::close_segment() {
  // Called when the machine is idle: every member has ended.
  if (!recording_.active) return;
  recording_.active = false;
  SegmentMemo m;
  for (uint32_t kid : recording_.kernels) {
    const KernelState& k = k_[kid];
    m.members.push_back({signature_of(kid), k.ready_at - recording_.start, k.end - k.ready_at, k.bytes_read,
                         k.bytes_written, k.requests, k.ctas_simulated});
    m.span = std::max(m.span, k.end - recording_.start);
  }
  m.resident = resident_sum() - recording_.resident;
  m.tensor = tensor_sum() - recording_.tensor;
  auto& list = segments_[m.members.front().signature];
  if (list.size() < kMaxSegmentsPerStart) list.push_back(std::move(m));
}

bool Engine::reuse_segment(uint32_t kid, Tick now) {
  // A segment repeats an earlier one if, with the earlier members' durations, the same signatures
  // become ready at the same offsets, and nothing else becomes ready before its last member ends.
  // That is checked by propagating readiness through the dependence graph, changing nothing.
  const Tick launch = model::ns_to_ps(p_.kernel_launch_ns);
  auto it = segments_.find(signature_of(kid));
  if (it == segments_.end()) return false;
  for (const SegmentMemo& memo : it->second) {
    std::vector<uint32_t> who(memo.members.size(), UINT32_MAX);
    std::map<uint32_t, std::pair<uint32_t, Tick>> left;   // kernel -> dependences left, last end
    std::priority_queue<std::pair<Tick, uint32_t>, std::vector<std::pair<Tick, uint32_t>>, std::greater<>> ends;
    who[0] = kid;
    ends.push({now + memo.members[0].duration, 0});
    bool same = true;
    while (same && !ends.empty()) {
      const auto [t, mi] = ends.top();
      ends.pop();
      for (uint32_t d : k_[who[mi]].dependents) {
        auto& [n, done] = left.try_emplace(d, k_[d].deps_left, k_[d].deps_done).first->second;
        done = std::max(done, t);
        if (--n != 0) continue;
        const Tick ready = done + launch;
        if (ready >= now + memo.span) continue;   // after the segment
        // A member not yet matched, ready at this offset with this signature.
        uint32_t match = UINT32_MAX;
        for (uint32_t j = 1; j < memo.members.size() && match == UINT32_MAX; ++j)
          if (who[j] == UINT32_MAX && memo.members[j].ready == ready - now && memo.members[j].signature == signature_of(d))
            match = j;
        if (match == UINT32_MAX) {
          same = false;
          break;
        }
        who[match] = d;
        ends.push({ready + memo.members[match].duration, match});
      }
    }
    if (!same || std::find(who.begin(), who.end(), UINT32_MAX) != who.end()) continue;
    reused_resident_ += memo.resident;
    reused_tensor_ += memo.tensor;
    for (uint32_t j = 1; j < who.size(); ++j) k_[who[j]].stand_in = &memo.members[j];
    take(kid, memo.members[0], now);
    return true;
  }
  return false;
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
  out_.requests += m.requests;
  ++running_;
  push(now + m.duration, Ev::kernel_end, kid);
}

void Engine::warm_with_unsimulated(const KernelState& k) {
  // Functional warming: the caches as the CTAs before the sampled ones would have left them, so
  // that the sample runs in the steady state (an L2 full of the kernel's dirty lines, whose
  // write-backs a copy pays) and leaves for the next kernel what the whole grid would have.
  const uint64_t first_simulated = k.rec->cta_count() - k.ctas_simulated;
  for (uint64_t c = 0; c < first_simulated; ++c) {
    model::AccessCursor cur = cursor_for(k, c);
    while (!cur.done()) {
      const model::CtaRequest q = cur.next();
      mem_.warm({0, q.addr, q.bytes, q.write, 0});
    }
  }
}

ReplayOutput Engine::run() {
  const auto& kernels = *in_.kernels;
  k_.resize(kernels.size());
  std::map<uint32_t, uint32_t> index_of;
  for (uint32_t i = 0; i < kernels.size(); ++i) {
    k_[i].rec = &kernels[i];
    if (!index_of.emplace(kernels[i].id, i).second)
      throw std::runtime_error("trace has two kernels with id " + std::to_string(kernels[i].id));
  }
  // Regions, for per-region bytes in the roofline.
  std::map<std::string, uint32_t> rid;
  region_index_.resize(in_.tensor_region.size());
  for (size_t t = 0; t < in_.tensor_region.size(); ++t) {
    auto it = rid.emplace(in_.tensor_region[t], uint32_t(rid.size())).first;
    region_index_[t] = it->second;
  }
  regions_.resize(rid.size());
  for (auto& [name, i] : rid) regions_[i] = name;
  for (const auto& a : *in_.accesses) {
    auto it = index_of.find(a.kernel);
    if (it == index_of.end()) throw std::runtime_error("access record names unknown kernel " + std::to_string(a.kernel));
    if (a.tensor >= in_.tensor_base.size())
      throw std::runtime_error("access record names unknown tensor " + std::to_string(a.tensor));
    KernelState& k = k_[it->second];
    k.accesses.push_back(&a);
    k.bytes_by_tensor[a.tensor] += double(a.total_bytes());
  }
  // The memory roofline counts compulsory traffic: re-reads of a tensor beyond its footprint can be
  // served by the L2 (a GEMM's panels), so each tensor contributes at most its size.
  std::vector<double> region_peak(regions_.size(), 0.0);
  for (size_t t = 0; t < region_index_.size(); ++t)
    region_peak[region_index_[t]] = std::max(region_peak[region_index_[t]], in_.tensor_peak_GBps[t]);
  for (uint32_t i = 0; i < kernels.size(); ++i) {
    KernelState& k = k_[i];
    k.bytes_by_region.assign(regions_.size(), 0.0);
    for (const auto& [t, b] : k.bytes_by_tensor) {
      const double cap = t < in_.tensor_bytes.size() ? double(in_.tensor_bytes[t]) : b;
      k.bytes_by_region[region_of(t)] += std::min(b, std::max(cap, 1.0));
    }
    for (size_t g = 0; g < k.bytes_by_region.size(); ++g)
      if (region_peak[g] > 0) k.mem_roofline_ns = std::max(k.mem_roofline_ns, k.bytes_by_region[g] / region_peak[g]);  // B / (GB/s) = ns
    for (int p = 0; p < trace::kPrecisionCount; ++p)
      if (kernels[i].flops[p] > 0)
        k.flop_roofline_ns += kernels[i].flops[p] / tc_.peak_flops(trace::Precision(p), p_.sm_count) * 1e9;
  }
  for (uint32_t i = 0; i < kernels.size(); ++i) {
    KernelState& k = k_[i];
    for (uint32_t d : kernels[i].deps) {
      auto it = index_of.find(d);
      if (it == index_of.end())
        throw std::runtime_error("kernel " + kernels[i].name + " depends on unknown kernel " + std::to_string(d));
      k_[it->second].dependents.push_back(i);
      ++k.deps_left;
    }
    k.per_sm = model::ctas_per_sm(p_, kernels[i]);
    if (k.per_sm == 0)
      throw std::runtime_error("kernel " + kernels[i].name + " cannot fit one CTA on an SM (" +
                               model::occupancy_limiter(p_, kernels[i]) + ")");
    std::array<double, trace::kPrecisionCount> per_cta{};
    const double n = double(std::max<uint64_t>(1, kernels[i].cta_count()));
    for (int p = 0; p < trace::kPrecisionCount; ++p) per_cta[p] = kernels[i].flops[p] / n;
    k.cta_compute = tc_.compute_ps(per_cta);
    // A multi-stage pipeline holds smem / stages bytes a stage; the math on the last stage's data is
    // that share of the CTA's math (a 6 MiB GEMM panel through 48 KiB stages leaves 1/128 of it).
    // Kernels without shared memory stream through registers: a stage is 1/stages of the CTA.
    double read_per_cta = 0;
    for (const AccessRecord* a : k.accesses)
      if (!a->write) read_per_cta += double(a->total_bytes());
    read_per_cta /= n;
    const double stage_bytes = double(kernels[i].smem_bytes) / p_.pipeline_stages;
    const double tail = kernels[i].smem_bytes > 0 && read_per_cta > 0 ? std::min(1.0, stage_bytes / read_per_cta)
                                                                       : 1.0 / p_.pipeline_stages;
    k.cta_tail = Tick(double(k.cta_compute) * tail);
    k.ctas_simulated = kernels[i].cta_count();
    k.wave = uint64_t(p_.sm_count) * uint64_t(k.per_sm);
    k.coarse = opt_.fast && kernels[i].cta_count() >= k.wave;
    if (opt_.fast) k.ctas_simulated = std::min<uint64_t>(k.ctas_simulated, uint64_t(p_.fast_sample_waves) * k.wave);
    ctas_total_ += k.ctas_simulated;
    if (kernels[i].cta_count() == 0) throw std::runtime_error("kernel " + kernels[i].name + " has an empty grid");
  }
  kernels_left_ = kernels.size();
  for (uint32_t i = 0; i < kernels.size(); ++i)
    if (k_[i].deps_left == 0) push(model::ns_to_ps(p_.kernel_launch_ns), Ev::kernel_ready, i);

  sms_.resize(p_.sm_count);
  for (auto& s : sms_) s.slots.resize(p_.max_ctas_per_sm);

  Tick now = 0;
  while (kernels_left_ > 0) {
    const Tick tq = q_.empty() ? model::kNever : q_.top().t;
    // SMs refused by a full queue retry at the memory system's next chance to take them.
    const Tick tm = stalled_.empty() ? mem_.next_event() : mem_.next_retry();
    const Tick t = std::min(tq, tm);
    if (t == model::kNever) throw std::runtime_error("replay deadlock: kernels left but nothing scheduled (cyclic dependences?)");
    now = std::max(now, t);
    if (tm <= now) {
      done_.clear();
      mem_.advance(now, done_);
      for (const auto& c : done_) {
        const uint32_t slot = uint32_t(c.id & ((1u << kSlotBits) - 1));
        const uint32_t sm = uint32_t((c.id >> kSlotBits) & ((1u << kSmBits) - 1));
        SmState& s = sms_[sm];
        Slot& sl = s.slots[slot];
        --sl.outstanding;
        s.lines_in_flight -= uint32_t((c.id >> (kSlotBits + kSmBits)) & ((1u << kLineBits) - 1)) + 1;
        if (sl.outstanding == 0 && sl.cursor.done() && !sl.mem_done) finish_memory(sm, slot, std::max(now, c.done));
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
    bool dispatch_needed = false;
    while (!q_.empty() && q_.top().t <= now) {
      const Event e = q_.top();
      q_.pop();
      if (e.type == Ev::cta_end) {
        end_cta(e.a, e.b, now);
      } else if (e.type == Ev::kernel_end) {
        end_kernel(e.a, now);
      } else {
        --pending_ready_;
        kernel_ready(e.a, now);
      }
      dispatch_needed = true;
    }
    if (dispatch_needed && !ready_.empty()) dispatch(now);
  }

  // Results.
  out_.step_ns = model::ps_to_ns(now);
  out_.region_names = regions_;
  out_.bytes_by_region_read.assign(regions_.size(), 0);
  double resident = double(reused_resident_), tensor = double(reused_tensor_);
  for (const auto& s : sms_) {
    resident += double(s.resident_total);
    tensor += double(s.tensor_busy);
  }
  out_.sm_busy_fraction = now ? resident / double(now) / double(sms_.size()) : 0;
  out_.tensor_busy_fraction = now ? tensor / double(now) / double(sms_.size()) : 0;
  for (uint32_t i = 0; i < kernels.size(); ++i) {
    const auto& r = kernels[i];
    KernelState& k = k_[i];
    KernelResult kr;
    kr.id = r.id;
    kr.name = r.name;
    kr.kind = r.kind;
    kr.layer = r.layer;
    kr.stream = r.stream;
    kr.start_ns = model::ps_to_ns(k.start);
    kr.end_ns = model::ps_to_ns(k.end);
    // Sampled kernels: the bytes the unsimulated CTAs would have moved, at the sampled rate.
    const double cta_scale = double(r.cta_count()) / double(std::max<uint64_t>(1, k.ctas_simulated));
    kr.bytes_read = uint64_t(double(k.bytes_read) * cta_scale);
    kr.bytes_written = uint64_t(double(k.bytes_written) * cta_scale);
    kr.flops = r.total_flops();
    kr.ctas = r.cta_count();
    kr.ctas_per_sm = k.per_sm;
    kr.measured_ns = double(r.measured_ns);
    kr.simulated = k.reused ? "reused" : k.ctas_simulated < r.cta_count() ? "sampled" : "all";
    kr.roofline_ns = k.roofline_ns();
    kr.bound = k.mem_roofline_ns >= k.flop_roofline_ns ? "memory" : "compute";
    out_.bytes_read += kr.bytes_read;
    out_.bytes_written += kr.bytes_written;
    out_.kernels.push_back(std::move(kr));
  }
  for (const auto& a : *in_.accesses)
    if (!a.write) out_.bytes_by_region_read[region_of(a.tensor)] += a.total_bytes();

  if (!opt_.timeline_path.empty()) {
    nlohmann::json ev = nlohmann::json::array();
    ev.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", 1}, {"args", {{"name", "streams"}}}});
    ev.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", 2}, {"args", {{"name", "SM groups"}}}});
    for (const auto& k : out_.kernels)
      ev.push_back({{"name", k.name}, {"cat", k.kind}, {"ph", "X"}, {"pid", 1}, {"tid", k.stream},
                    {"ts", k.start_ns / 1000.0}, {"dur", k.duration_ns() / 1000.0},
                    {"args", {{"bytes_read", k.bytes_read}, {"flops", k.flops}, {"roofline_ns", k.roofline_ns}}}});
    for (const auto& [key, span] : sm_group_spans_)
      ev.push_back({{"name", kernels[key.first].name}, {"ph", "X"}, {"pid", 2}, {"tid", key.second},
                    {"ts", model::ps_to_ns(span.first) / 1000.0},
                    {"dur", model::ps_to_ns(span.second - span.first) / 1000.0}});
    for (uint32_t g = 0; g * kSmGroup < sms_.size(); ++g)
      ev.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", 2}, {"tid", g},
                    {"args", {{"name", "SM " + std::to_string(g * kSmGroup) + "-" +
                                           std::to_string(std::min<size_t>(sms_.size(), (g + 1) * kSmGroup) - 1)}}}});
    std::ofstream f(opt_.timeline_path);
    if (!f) throw std::runtime_error("cannot write timeline " + opt_.timeline_path);
    f << nlohmann::json{{"traceEvents", ev}, {"displayTimeUnit", "ns"}}.dump();
  }
  return out_;
}

}  // namespace

Tick extrapolate_sampled_end(const std::vector<Tick>& marks, double waves, double min_ps_per_wave) {
  if (marks.size() < 2) throw std::invalid_argument("extrapolate_sampled_end: needs two wave marks");
  const double n = double(marks.size()), x_mean = (n + 1) / 2;
  double t_mean = 0;
  for (Tick t : marks) t_mean += double(t);
  t_mean /= n;
  double sxt = 0, sxx = 0;
  for (size_t i = 0; i < marks.size(); ++i) {
    const double dx = double(i + 1) - x_mean;
    sxt += dx * (double(marks[i]) - t_mean);
    sxx += dx * dx;
  }
  const double per_wave = std::max(min_ps_per_wave, sxt / sxx);
  return Tick(t_mean + per_wave * (waves - x_mean));
}

ReplayOutput replay(const model::SmParams& sm, const model::TensorCore& tc, model::MemoryDevice& memory,
                    const ReplayInput& in, const ReplayOptions& opt) {
  Engine e(sm, tc, memory, in, opt);
  return e.run();
}

}  // namespace indexsim::sim
