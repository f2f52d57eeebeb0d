// SPDX-License-Identifier: Apache-2.0
// The GPU's SM array as a processor (models/common/processor.hpp): the block scheduler, each SM's
// CTA slots under the occupancy limits, its window of outstanding requests and its tensor pipe.
//
// - Block scheduler: ready kernels are served in launch order; each spreads its CTAs breadth-first
//   over the SMs, round-robin, as far as they fit (threads, registers, shared memory, CTA slots). A
//   kernel that no longer fits leaves room for a later one with smaller CTAs.
// - Window: an SM keeps at most `max_outstanding_requests_per_sm` lines in flight across its CTAs,
//   interleaving their requests one by one, so that bandwidth follows Little's law. A request holds
//   as many window entries as lines it spans (a 2 KiB fast-mode chunk holds 16). That window is
//   the load/store units'; a pipelined (double-buffered) CTA's TMA or cp.async fills its shared-
//   memory stages ahead of its math, so while such CTAs are resident the window is at least their
//   stages but the one being read: (pipeline_stages - 1) / pipeline_stages of their shared memory.
// - Compute: a CTA's math takes the Tensor Core time of its share of the kernel's FLOPs. A
//   double-buffered kernel reserves the SM's tensor pipe from the CTA's start and runs only the last
//   stage's math after its data lands; other kernels compute after their loads.
// - Epilogue (KernelRecord::stores_after_math, GEMMs): a double-buffered CTA's loads go out first;
//   its stores go out once its math has ended, and it holds its SM until they are acknowledged.
//   Other kernels' writes go out with their loads, beside the math.
// - A CTA ends with its math (or its epilogue's stores), plus the kernel's `wait_ns` (a
//   collective's waits on its peers, which the fabric's symmetry leaves to the kernel record). Its
//   slot takes another CTA `cta_launch_ns` later (the block scheduler's turnover): a kernel's last
//   CTAs end the kernel without it, and a one-wave kernel never pays it; nor do the work units of
//   a persistent grid (KernelRecord::persistent), which a resident CTA takes one after another.
#pragma once

#include <array>
#include <memory>
#include <queue>
#include <vector>

#include "models/common/processor.hpp"
#include "models/sm/sm.hpp"
#include "models/tensorcore/tensor_core.hpp"

namespace indexsim::model {

class SmArray : public Processor {
 public:
  SmArray(const SmParams& sm, const TensorCoreParams& tc, MemoryDevice& memory);

  uint32_t units() const override { return uint32_t(p_.sm_count); }
  std::string unit_name() const override { return "SM"; }
  int ctas_per_unit(const trace::KernelRecord& k) const override { return ctas_per_sm(p_, k); }
  std::string occupancy_limiter(const trace::KernelRecord& k) const override { return model::occupancy_limiter(p_, k); }
  double peak_flops(trace::Precision p) const override { return tc_.peak_flops(p, p_.sm_count); }
  Tick kernel_launch_ps() const override { return ns_to_ps(p_.kernel_launch_ns); }
  uint32_t line_bytes() const override { return p_.line_bytes; }
  uint32_t sector_bytes() const override { return p_.sector_bytes; }
  double clock_MHz() const override { return p_.sm_clock_MHz; }
  WaveSampling wave_sampling() const override { return p_.fast_sampling; }
  uint64_t fitted_smem_bytes(uint64_t smem_bytes) const override;
  trace::LaunchLimits launch_limits() const override;

  void launch(const KernelWork& w, Tick now) override;
  Tick next_event() const override;
  void advance(Tick now, std::vector<CtaEnd>& ended) override;
  void warm(const KernelWork& w) override;
  uint64_t stop_starting(uint32_t kernel) override;
  ProcessorActivity activity() const override;
  double simulated_line_share(uint32_t kernel) const override;
  Tick resident_ps_at(Tick now) const override;
  void memory_moved() override { mem_next_valid_ = false; }

  const SmParams& params() const { return p_; }

 private:
  struct Kernel {  // a launched kernel's work and the per-CTA times derived from it
    KernelWork work;
    uint64_t next = 0;              // CTAs of the work started so far
    Tick cta_compute = 0;           // Tensor Core / CUDA-core time of one CTA
    Tick cta_tail = 0;              // double-buffered: the math on the last stage, after its data lands
    Tick cta_issue = 0;             // the least a CTA lasts: its warps' instruction streams (0: not known)
    Tick math_spare = 0;            // a math-bound CTA's memory ends at least this long before its math: the tail and the slack
    // Steady projection (fast mode, WaveSampling::line_marks): the lines of its CTAs, those done,
    // those projected; when each 1/line_marks of them was done; once steady, the time one line
    // takes a CTA (the kernel's rate over the CTAs it had in flight).
    bool marking = false, steady = false;
    uint64_t lines_total = 0, lines_done = 0, lines_projected = 0;
    double mark_lines = 0;
    Tick first_start = kNever;
    std::vector<Tick> marks;
    double cta_ps_per_line = 0;
    // trace::KernelRecord::stores_after_math: its access records split into loads and stores
    // (held by pointer: cursors point at them while `kernels_` grows).
    std::unique_ptr<std::array<std::vector<const trace::AccessRecord*>, 2>> phases;
  };
  struct Slot {
    bool used = false;
    uint32_t kernel = 0;            // index into kernels_
    AccessCursor cursor;
    uint32_t outstanding = 0;
    uint32_t lines_out = 0;         // lines of its outstanding requests
    Tick start = 0;
    Tick compute_end = 0;           // reserved tensor-pipe interval end (double-buffered kernels)
    Tick mem_floor = 0;             // projected: its memory work ends no earlier
    bool mem_done = false;
    bool math_bound = false;        // CtaEnd::math_bound
    uint32_t cta = 0;
    bool stores_pending = false;    // its epilogue's stores go out once its math ends
    bool storing = false;           // ... and are going out
    bool turning = false;           // ended; held for the block scheduler's turnover (cta_launch_ns)
    uint64_t bytes_read = 0, bytes_written = 0, requests = 0;
  };
  struct Sm {
    std::vector<Slot> slots;
    std::vector<uint32_t> active;   // slots with requests left to issue
    size_t rr = 0;                  // round-robin position in `active`
    uint32_t lines_in_flight = 0;   // the window counts lines
    uint32_t pipeline_lines = 0;    // resident CTAs' pipeline_lines(), summed
    int threads = 0, ctas = 0, regs = 0;
    uint64_t smem = 0;
    Tick tensor_free = 0;
    Tick tensor_busy = 0;
    Tick resident_since = 0;        // start of the current interval with at least one CTA
    Tick resident_total = 0;
    bool stalled = false;           // the memory system refused a request
  };
  struct End {  // a CTA's end, due at `t`; equal times in the order they were scheduled
    Tick t;
    uint64_t seq;
    uint32_t sm, slot;
    bool operator>(const End& o) const { return t != o.t ? t > o.t : seq > o.seq; }
  };

  bool fits(const Sm& s, const trace::KernelRecord& r) const;
  void dispatch(Tick now);
  void start_cta(uint32_t sm, uint32_t kernel, Tick now);
  void issue(uint32_t sm, Tick now);
  void finish_memory(uint32_t sm, uint32_t slot, Tick now);
  CtaEnd end_cta(uint32_t sm, uint32_t slot, Tick now);
  void free_slot(uint32_t sm, uint32_t slot, Tick now);  // the slot's resources back to the SM
  AccessCursor cursor_for(const KernelWork& w, const std::vector<const trace::AccessRecord*>* records, uint64_t cta,
                          uint32_t steps) const;
  Tick issue_ps(const trace::KernelRecord& r) const;                  // the least one CTA of r lasts (instruction issue)
  AccessCursor load_cursor(const Kernel& k, uint64_t cta) const;   // the CTA's loads (all its accesses, but an epilogue's)
  AccessCursor store_cursor(const Kernel& k, uint64_t cta) const;  // an epilogue kernel's stores
  void start_stores(uint32_t sm, uint32_t slot, Tick now);
  void begin_requests(uint32_t sm, uint32_t slot, Tick now);  // a slot's cursor starts: projected, done or issued
  // line_bytes is a power of two (the config's rule): a shift, not a division, on the issue path.
  uint32_t lines_of(uint32_t bytes) const { return (bytes + p_.line_bytes - 1) >> __builtin_ctz(p_.line_bytes); }
  // A pipelined CTA's loads in flight: all its shared-memory stages but the one its math reads.
  uint32_t pipeline_lines(const trace::KernelRecord& r) const {
    if (!r.double_buffered) return 0;
    return lines_of(uint32_t(uint64_t(r.smem_bytes) * uint64_t(p_.pipeline_stages - 1) / uint64_t(p_.pipeline_stages)));
  }
  void lines_done(uint32_t kernel, uint32_t lines, Tick now);
  uint64_t warm_rest(uint32_t sm, uint32_t slot);
  uint64_t first_warming_cta(const KernelWork& w) const;  // the first of w's CTAs that warm() walks (SmParams::warm_capacities)
  void project(uint32_t sm, uint32_t slot, Tick now);
  Tick memory_next() const;  // the memory's next event (next retry while an SM is stalled)

  SmParams p_;
  TensorCore tc_;
  MemoryDevice& mem_;
  std::vector<Kernel> kernels_;   // every kernel launched, in launch order
  std::vector<uint32_t> ready_;   // kernels_ with CTAs left to start, by handle
  std::vector<Sm> sms_;
  std::priority_queue<End, std::vector<End>, std::greater<End>> ends_;
  std::vector<uint32_t> stalled_;
  std::vector<MemCompletion> done_;
  uint64_t seq_ = 0, req_seq_ = 0;
  uint32_t rr_sm_ = 0;
  // Something freed a slot or queued a kernel since the last dispatch: dispatch at `dispatch_at_`.
  bool dispatch_pending_ = false;
  Tick dispatch_at_ = 0;
  // The memory's answer to memory_next(), kept until this processor sends, launches or advances it
  // (nothing else moves the memory between the engine's next_event() and advance()).
  mutable Tick mem_next_ = kNever;
  mutable bool mem_next_valid_ = false;
};

// On the replay's hot path: defined here so that they inline.
inline Tick SmArray::memory_next() const {
  // SMs refused by a full queue retry at the memory system's next chance to take them.
  if (!mem_next_valid_) {
    mem_next_ = stalled_.empty() ? mem_.next_event() : mem_.next_retry();
    mem_next_valid_ = true;
  }
  return mem_next_;
}

inline bool SmArray::fits(const Sm& s, const trace::KernelRecord& r) const {
  const int threads = int(r.threads_per_cta());
  return s.ctas < p_.max_ctas_per_sm && s.threads + threads <= p_.max_threads_per_sm &&
         s.regs + int(r.regs_per_thread) * threads <= p_.registers_per_sm &&
         s.smem + r.smem_bytes <= p_.smem_per_sm_bytes;
}

}  // namespace indexsim::model
