// SPDX-License-Identifier: Apache-2.0
// Segment reuse (both modes; ReplayOptions::reuse). A segment runs from a moment the machine is idle
// (a kernel becomes ready with nothing running, ready or about to be) to the next; a kernel that
// runs alone is a segment of one, and kernels that overlap across streams (IndexShare's prefetch)
// share one. A segment that repeats an earlier one (the same kernels by signature, becoming ready
// at the same offsets) takes its kernels' durations, bytes and busy time instead of being simulated:
// a decode step's 78 layers cost about two. What it leaves out is the cache and DRAM state the
// earlier segment left behind.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "models/common/processor.hpp"
#include "models/common/stats.hpp"
#include "sim/engine/kernel_state.hpp"

namespace indexsim::sim {

// What a simulated segment leaves for a later one that repeats it, per member (the first first).
struct SegmentMember {
  std::string signature;
  GatherSummary gather;           // matched within a tolerance, not exactly
  model::Tick ready = 0;          // after the segment's start
  model::Tick duration = 0;       // ready to end
  uint64_t bytes_read = 0, bytes_written = 0, requests = 0, ctas_simulated = 0;
};
struct SegmentMemo {
  std::vector<SegmentMember> members;
  model::Tick span = 0;           // the last member's end, after the segment's start
  std::vector<model::ProcessorActivity> busy;  // per processor: resident and compute-busy time summed over units
  std::vector<model::StatSink::Extra> counters;  // the memory's counters it grew (sampled CTAs scaled in)
};
// Memos by their first member's signature. A replay may start from another's on the same hardware
// (a whole prefill's chunks: the weight GEMMs of one chunk repeat in the next, while a kernel over
// the context does not, its tensors being of another size); a memo never changes once stored.
using SegmentLibrary = std::map<std::string, std::vector<SegmentMemo>>;

class SegmentReuse {
 public:
  // `kernels` is the engine's (dependents, dependences left, signatures); tensor t lives in region
  // region_of[t]; gathers are summarised in lines of `line_bytes`; a kernel becomes ready
  // `launch_gap[p]` after its last dependence ends, p its processor.
  // `tensor_bytes[t]` is tensor t's size. Memos of `inherited` (may be null; it must outlive the
  // replay) are looked up after this replay's own.
  // `warm`: a memo is stored from a segment's second simulated occurrence, not its first.
  SegmentReuse(std::vector<KernelState>& kernels, const std::vector<uint32_t>& region_of,
               const std::vector<uint64_t>& tensor_bytes, uint32_t line_bytes, std::vector<model::Tick> launch_gap,
               const SegmentLibrary* inherited, bool warm = false)
      : k_(kernels), region_of_(region_of), tensor_bytes_(tensor_bytes), line_bytes_(line_bytes),
        launch_gap_(std::move(launch_gap)), inherited_(inherited), warm_(warm) {}

  // Kernels `ready` (in launch order, at least one) became ready together at `now` with the machine
  // idle (`activity`: each processor's so far): the segment being recorded ends and is stored. If a
  // stored one repeats from here, every member after the first gets its stand-in (those in `ready`
  // too) and the memo is returned; else recording starts with `ready`. Kernels that become ready at
  // one instant on independent chains (IndexShare's prefetch beside the previous layer's last
  // kernel) start one segment: left to the first alone, the others would never be matched.
  // `counters`: the memory counters the segment that ends here grew (CounterWindows::close).
  const SegmentMemo* at_idle(const std::vector<uint32_t>& ready, model::Tick now,
                             const std::vector<model::ProcessorActivity>& activity,
                             std::vector<model::StatSink::Extra> counters = {});
  // Kernel `kid` became ready while a segment runs: a member of the one being recorded, if any.
  void joined(uint32_t kid) {
    if (recording_.active) recording_.kernels.push_back(kid);
  }

  // Raw bytes of every field that decides the kernel's timing, except its addresses and its gathers'
  // rows, which it summarises in k.gather.
  std::string signature(KernelState& k) const;
  // The memos this replay stored.
  const SegmentLibrary& library() const { return segments_; }

 private:
  const std::string& signature_of(uint32_t kid);
  void close(const std::vector<model::ProcessorActivity>& activity, std::vector<model::StatSink::Extra> counters);
  const SegmentMemo* find(const std::vector<uint32_t>& ready, model::Tick now);
  const SegmentMemo* find_in(const SegmentLibrary& lib, const std::vector<uint32_t>& ready, model::Tick now);

  std::vector<KernelState>& k_;
  const std::vector<uint32_t>& region_of_;
  const std::vector<uint64_t>& tensor_bytes_;
  uint32_t line_bytes_;
  std::vector<model::Tick> launch_gap_;
  const SegmentLibrary* inherited_;
  bool warm_;
  // Segments by their first member's signature (a stored memo never changes: stand-ins point into
  // its members), and the one being simulated now, if it started idle.
  SegmentLibrary segments_;
  std::map<std::string, uint32_t> occurrences_;  // simulated segments closed, by first-member signature
  struct Recording {
    bool active = false;
    model::Tick start = 0;
    std::vector<model::ProcessorActivity> activity;
    std::vector<uint32_t> kernels;
  } recording_;
};

}  // namespace indexsim::sim
