// SPDX-License-Identifier: Apache-2.0
// The streaming multiprocessor: CTA occupancy, and the issue of a CTA's memory accesses with a
// bounded number of outstanding requests.
//
// Achieved bandwidth follows Little's law: an SM with W requests of B bytes in flight against a
// loaded latency L sustains W·B/L. The window W (per SM) is the calibrated parameter; it stands for
// the MSHRs / TMA transactions in flight that a real SM can keep open.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "models/common/time.hpp"
#include "models/common/params.hpp"
#include "models/common/processor.hpp"
#include "traces/records.hpp"

namespace indexsim::model {

// A request spans at most this many lines: the replay tags each request with its line count, and
// fast_mode_chunk_bytes may not exceed it.
constexpr uint32_t kMaxRequestLines = 64;

struct SmParams {
  int sm_count = 0;
  double sm_clock_MHz = 0;
  int max_threads_per_sm = 0;
  int max_ctas_per_sm = 0;
  int registers_per_sm = 0;
  uint64_t smem_per_sm_bytes = 0;
  uint64_t smem_per_cta_max_bytes = 0;  // opt-in limit of one CTA (cudaDevAttrMaxSharedMemoryPerBlockOptin)
  bool warpgroup_mma = false;           // Hopper-style wgmma + TMA kernels (compute capability 9.x, 10.x)
  int max_outstanding_requests = 0;   // per SM, across its CTAs
  uint32_t line_bytes = 128;          // request granularity of the detailed mode
  uint32_t sector_bytes = 32;         // smallest access the memory system sees
  uint32_t fast_chunk_bytes = 0;      // contiguous request size of the fast mode
  WaveSampling fast_sampling;         // fast mode: which kernels are sampled, and when a sample may stop
  // Fast mode: the CTAs a sample skips warm the caches from the last of them whose distinct lines
  // reach this many times the caches' reach (MemoryDevice::warm_reach_bytes); those before leave
  // nothing an LRU or FIFO cache would still hold, but in a set that got fewer lines than its ways
  // since. 0: every skipped CTA warms.
  double warm_capacities = 0;
  double cta_launch_ns = 0;           // block-scheduler turnover: a freed CTA slot takes its next CTA this long after
  double kernel_launch_ns = 0;        // gap between a kernel's dependences resolving and its first CTA
  int pipeline_stages = 1;            // double-buffer depth: smem / stages bytes per stage; the math on the last stage follows its load
  // Instruction issue (kernels whose trace gives KernelRecord::warp_instructions): an SM's warps
  // share warp_schedulers_per_sm schedulers, each issuing at most one instruction a cycle, and a
  // warp alone on its scheduler issues one every warp_issue_interval_cycles (its dependences and
  // stalls). 0: off, a CTA is timed by its FLOPs and memory alone.
  int warp_schedulers_per_sm = 4;
  double warp_issue_interval_cycles = 0;

  static SmParams load(const config::Node& gpu);
};

// CTAs of `k` that fit on one SM at once, or 0 if one CTA does not fit (the launch would fail).
int ctas_per_sm(const SmParams& p, const trace::KernelRecord& k);
// Which resource limits the occupancy of `k` (threads, ctas, registers, smem), for reports.
std::string occupancy_limiter(const SmParams& p, const trace::KernelRecord& k);

// One memory request of a CTA, in the placement's physical address space.
struct CtaRequest {
  uint64_t addr;
  uint32_t bytes;
  bool write;
  uint8_t tag;   // its tensor's MemRequest::tag
};

// Walks the requests of one CTA lazily: a 1M-token scan is one access record, expanded here one
// request at a time. Contiguous runs become `chunk` sized requests (line size in the detailed mode,
// larger in the fast mode); other accesses split at line boundaries and round to whole sectors.
// With `steps` > 1 (KernelRecord::load_steps) the records are walked together, in steps: step s
// reads the s-th 1/steps of every element (row) of each record, then step s + 1 (a GEMM's K blocks
// of A and B, as its TMA producer loads them). A step is at least one line, and at least one chunk.
class AccessCursor {
 public:
  AccessCursor() = default;
  // `records` must stay alive; `tensor_base` maps a tensor id to its physical base address.
  // `tensor_tag` (may be null) gives each tensor id's MemRequest::tag.
  AccessCursor(const std::vector<const trace::AccessRecord*>* records, uint32_t cta,
               const std::vector<uint64_t>* tensor_base, uint32_t line_bytes, uint32_t sector_bytes,
               uint32_t chunk_bytes, const std::vector<uint8_t>* tensor_tag = nullptr, uint32_t steps = 0);
  bool done() const { return rec_ >= (records_ ? records_->size() : 0); }
  CtaRequest next();
  uint64_t remaining_estimate() const;

 private:
  static uint64_t element_bytes(const trace::AccessRecord& r);  // a strided element, or a gathered row
  bool applies(const trace::AccessRecord& r) const;  // names this CTA and moves bytes
  bool covers(const trace::AccessRecord& r) const;   // applies, and has bytes in this step
  void seek(size_t from);                            // the first record from `from` that covers; else the next round's
  uint64_t step_of(const trace::AccessRecord& r) const;
  CtaRequest next_stepped();
  void enter_record();
  const std::vector<const trace::AccessRecord*>* records_ = nullptr;
  const std::vector<uint64_t>* tensor_base_ = nullptr;
  const std::vector<uint8_t>* tensor_tag_ = nullptr;
  uint32_t cta_ = 0, line_ = 128, sector_ = 32, chunk_ = 128;
  // The three sizes are powers of two (the configs' rule): masks round without a division, which
  // was a third of the fast mode's issue time.
  uint64_t line_mask_ = 127, sector_mask_ = 31, chunk_mask_ = 127;
  uint8_t tag_ = 0;          // the current record's tensor's tag
  size_t rec_ = 0;
  uint64_t item_ = 0;        // element or row index inside the record
  uint64_t item_off_ = 0;    // bytes already emitted of the current element / row / run
  uint64_t start_ = 0;       // physical start of this CTA's pattern
  bool contiguous_ = false;  // strided record whose elements touch (stride == elem_bytes, or a single element)
  uint32_t steps_ = 0;       // > 1: stepped walk
  uint64_t step_ = 0;        // the current record's step, in bytes of each element
  uint64_t round_ = 0, rounds_ = 0;  // steps walked; 1 round without steps
};

// An access record list as a kernel's CTAs walk it: [0] first, then [1]. A kernel with an epilogue
// (KernelRecord::stores_after_math: a GEMM's tile, a one-element copy's store) loads first and
// stores after its math; any other kernel has everything in [0].
std::array<std::vector<const trace::AccessRecord*>, 2> epilogue_phases(const trace::KernelRecord& k,
                                                                      const std::vector<const trace::AccessRecord*>& records);

}  // namespace indexsim::model
