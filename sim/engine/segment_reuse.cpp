// SPDX-License-Identifier: Apache-2.0
#include "sim/engine/segment_reuse.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <queue>

namespace indexsim::sim {

using model::Tick;
using trace::AccessRecord;

namespace {
constexpr uint64_t kAlignmentBytes = 4096;   // a larger alignment than any line or chunk
constexpr size_t kMaxSegmentsPerStart = 16;  // memos kept per first-member signature
// Two kernels' gather summaries match when each figure is within 2 % of the other's (see signature()).
constexpr double kGatherTolerance = 0.02;
bool similar(const GatherSummary& a, const GatherSummary& b) {
  auto near = [](double x, double y) { return std::abs(x - y) <= kGatherTolerance * std::max(x, y); };
  return near(a.row_lines, b.row_lines) && near(a.distinct_lines, b.distinct_lines);
}
}  // namespace

std::string SegmentReuse::signature(KernelState& k) const {
  // Tensors and addresses are left out (the same layer shape at another address, another expert of
  // the same size), except a tensor's size and the region it lives in, and an access's alignment
  // within 4 KiB, which decides how it splits into sectors, lines and fast-mode chunks.
  std::string sig;
  auto put = [&sig](const auto& v) { sig.append(reinterpret_cast<const char*>(&v), sizeof v); };
  const auto& r = *k.rec;
  put(r.kind);
  put(k.proc);
  put(k.mm_k);
  put(k.mm_n);
  for (uint32_t g : r.grid) put(g);
  for (uint32_t b : r.block) put(b);
  put(r.smem_bytes);
  put(r.regs_per_thread);
  for (double f : r.flops) put(f);
  put(r.double_buffered);
  put(r.wait_ns);
  put(r.simt_overlaps_mma);
  put(r.stores_after_math);
  put(r.load_steps);
  put(r.warp_instructions);
  put(r.persistent);
  for (const AccessRecord* a : k.accesses) {
    put(a->cta_first);
    put(a->cta_count);
    put(a->kind);
    put(a->write);
    put(region_of_[a->tensor]);
    put(a->tensor < tensor_bytes_.size() ? tensor_bytes_[a->tensor] : 0);
    put(a->base % kAlignmentBytes);
    put(a->cta_stride_bytes);
    put(a->elem_bytes);
    put(a->count);
    put(a->stride_bytes);
    put(a->row_bytes);
    put(a->row_pitch_bytes);
    put(a->rows.size());
  }
  // The kernel's gathers are summarised by their rows (above) and the lines those rows touch, beside
  // the signature (k.gather), matched within 2 %: summed over the gathers' rows (how each row splits
  // into lines) and distinct over the whole kernel (what its CTAs share in the L2; a record's CTAs
  // are counted once). Two layers' top-k selections drawn alike differ in which rows they pick
  // (their durations spread by ~2 % in the detailed mode, glm-5 decode), hardly in the traffic they
  // make; per CTA, 2 % of a few hundred lines would tell most such layers apart. A gather with other
  // locality (a captured trace's) still runs on its own. Within 2 %, not in the same 2 % step: with
  // steps, a layer whose figure fell just across a step's edge was simulated again (a DeepSeek-V3.2
  // 32K prefill chunk simulated its sparse attention twice, 23 s of its 143 s).
  struct Span {
    uint64_t lo = UINT64_MAX, hi = 0;
    std::vector<uint64_t> bits;
  };
  std::map<uint32_t, Span> touched;  // per tensor: the lines the kernel's gathers touch, as a bitmap
  double row_lines = 0;
  auto for_each_line = [this](const AccessRecord& a, auto&& f) {
    for (uint32_t row : a.rows) {
      const uint64_t start = a.base + uint64_t(row) * a.row_pitch_bytes;
      for (uint64_t l = start / line_bytes_; l <= (start + std::max(a.row_bytes, 1u) - 1) / line_bytes_; ++l) f(l);
    }
  };
  for (const AccessRecord* a : k.accesses) {
    if (a->rows.empty()) continue;
    Span& sp = touched[a->tensor];
    double lines = 0;
    for_each_line(*a, [&](uint64_t l) {
      sp.lo = std::min(sp.lo, l);
      sp.hi = std::max(sp.hi, l);
      ++lines;
    });
    row_lines += lines * double(a->cta_count);
  }
  if (touched.empty()) return sig;
  double distinct = 0;
  for (auto& [tensor, sp] : touched) sp.bits.assign((sp.hi - sp.lo) / 64 + 1, 0);
  for (const AccessRecord* a : k.accesses) {
    if (a->rows.empty()) continue;
    Span& sp = touched[a->tensor];
    for_each_line(*a, [&](uint64_t l) { sp.bits[(l - sp.lo) / 64] |= uint64_t(1) << ((l - sp.lo) % 64); });
  }
  for (const auto& [tensor, sp] : touched)
    for (uint64_t w : sp.bits) distinct += double(__builtin_popcountll(w));
  k.gather = {row_lines, distinct};
  return sig;
}

const std::string& SegmentReuse::signature_of(uint32_t kid) {
  KernelState& k = k_[kid];
  if (k.signature.empty()) k.signature = signature(k);
  return k.signature;
}

const SegmentMemo* SegmentReuse::at_idle(const std::vector<uint32_t>& ready, Tick now,
                                         const std::vector<model::ProcessorActivity>& activity,
                                         std::vector<model::StatSink::Extra> counters) {
  close(activity, std::move(counters));
  if (const SegmentMemo* m = find(ready, now)) return m;
  recording_ = {true, now, activity, ready};
  return nullptr;
}

void SegmentReuse::close(const std::vector<model::ProcessorActivity>& activity,
                         std::vector<model::StatSink::Extra> counters) {
  // Called when the machine is idle: every member has ended.
  if (!recording_.active) return;
  recording_.active = false;
  SegmentMemo m;
  for (uint32_t kid : recording_.kernels) {
    const KernelState& k = k_[kid];
    m.members.push_back({signature_of(kid), k.gather, k.ready_at - recording_.start, k.end - k.ready_at,
                         k.bytes_read, k.bytes_written, k.requests, k.ctas_simulated});
    m.span = std::max(m.span, k.end - recording_.start);
  }
  for (size_t p = 0; p < activity.size(); ++p)
    m.busy.push_back({activity[p].resident_ps - recording_.activity[p].resident_ps,
                      activity[p].compute_ps - recording_.activity[p].compute_ps});
  m.counters = std::move(counters);
  // A segment's first occurrence runs on caches the step has not warmed yet (a decode step's first
  // layer finds none of its data in the L2 and evicts little that is dirty). With warm memos the memo
  // is taken from the second, so that the occurrences that repeat it inherit a warm one's time and
  // traffic, at the cost of one more simulated occurrence per kind of segment.
  if (++occurrences_[m.members.front().signature] < (warm_ ? 2u : 1u)) return;
  auto& list = segments_[m.members.front().signature];
  if (list.size() < kMaxSegmentsPerStart) list.push_back(std::move(m));
}

const SegmentMemo* SegmentReuse::find(const std::vector<uint32_t>& ready, Tick now) {
  if (const SegmentMemo* m = find_in(segments_, ready, now)) return m;
  return inherited_ ? find_in(*inherited_, ready, now) : nullptr;
}

const SegmentMemo* SegmentReuse::find_in(const SegmentLibrary& lib, const std::vector<uint32_t>& ready, Tick now) {
  // A segment repeats an earlier one if, with the earlier members' durations, the same signatures
  // become ready at the same offsets, and nothing else becomes ready before its last member ends.
  // That is checked by propagating readiness through the dependence graph, changing nothing.
  const uint32_t kid = ready.front();
  auto it = lib.find(signature_of(kid));
  if (it == lib.end()) return nullptr;
  for (const SegmentMemo& memo : it->second) {
    if (!similar(memo.members[0].gather, k_[kid].gather)) continue;
    std::vector<uint32_t> who(memo.members.size(), UINT32_MAX);
    std::map<uint32_t, std::pair<uint32_t, Tick>> left;   // kernel -> dependences left, last end
    std::priority_queue<std::pair<Tick, uint32_t>, std::vector<std::pair<Tick, uint32_t>>, std::greater<>> ends;
    // A member not yet matched, ready at `offset` with kernel d's signature and gathers.
    const auto match_of = [&](uint32_t d, Tick offset) {
      for (uint32_t j = 1; j < memo.members.size(); ++j)
        if (who[j] == UINT32_MAX && memo.members[j].ready == offset && memo.members[j].signature == signature_of(d) &&
            similar(memo.members[j].gather, k_[d].gather))
          return j;
      return UINT32_MAX;
    };
    who[0] = kid;
    ends.push({now + memo.members[0].duration, 0});
    bool same = true;
    for (size_t i = 1; i < ready.size() && same; ++i) {
      const uint32_t match = match_of(ready[i], 0);
      if (match == UINT32_MAX) {
        same = false;
      } else {
        who[match] = ready[i];
        ends.push({now + memo.members[match].duration, match});
      }
    }
    while (same && !ends.empty()) {
      const auto [t, mi] = ends.top();
      ends.pop();
      for (uint32_t d : k_[who[mi]].dependents) {
        auto& [n, done] = left.try_emplace(d, k_[d].deps_left, k_[d].deps_done).first->second;
        done = std::max(done, t);
        if (--n != 0) continue;
        const Tick at = done + launch_gap_[k_[d].proc];
        if (at >= now + memo.span) continue;   // after the segment
        const uint32_t match = match_of(d, at - now);
        if (match == UINT32_MAX) {
          same = false;
          break;
        }
        who[match] = d;
        ends.push({at + memo.members[match].duration, match});
      }
    }
    if (!same || std::find(who.begin(), who.end(), UINT32_MAX) != who.end()) continue;
    for (uint32_t j = 1; j < who.size(); ++j) k_[who[j]].stand_in = &memo.members[j];
    return &memo;
  }
  return nullptr;
}

}  // namespace indexsim::sim
