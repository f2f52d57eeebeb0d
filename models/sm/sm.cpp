// SPDX-License-Identifier: Apache-2.0
#include "models/sm/sm.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace indexsim::model {

using config::Rule;

SmParams SmParams::load(const config::Node& gpu) {
  SmParams p;
  p.sm_count = gpu.req<int>("sm_count", Rule::range(1, 4096));
  p.sm_clock_MHz = gpu.req<double>("sm_clock_MHz", Rule::clock_MHz());
  p.max_threads_per_sm = gpu.req<int>("max_threads_per_sm", Rule::positive());
  p.max_ctas_per_sm = gpu.req<int>("max_ctas_per_sm", Rule::range(1, 255));
  p.registers_per_sm = gpu.req<int>("registers_per_sm", Rule::positive());
  p.smem_per_sm_bytes = static_cast<uint64_t>(gpu.req<double>("smem_per_sm_KiB", Rule::positive()) * 1024);
  p.smem_per_cta_max_bytes = static_cast<uint64_t>(gpu.req<double>("smem_per_cta_max_KiB", Rule::positive()) * 1024);
  if (p.smem_per_cta_max_bytes > p.smem_per_sm_bytes)
    gpu.fail("smem_per_cta_max_KiB", std::to_string(p.smem_per_cta_max_bytes / 1024.0), "must not exceed smem_per_sm_KiB");
  p.warpgroup_mma = gpu.req<bool>("warpgroup_mma");
  p.max_outstanding_requests = gpu.req<int>("max_outstanding_requests_per_sm", Rule::range(1, 65535));
  p.line_bytes = gpu.req<uint32_t>("line_bytes", Rule::power_of_two());
  p.sector_bytes = gpu.req<uint32_t>("sector_bytes", Rule::power_of_two());
  p.fast_chunk_bytes = gpu.req<uint32_t>("fast_mode_chunk_bytes", Rule::power_of_two());
  if (p.fast_chunk_bytes < p.line_bytes || p.fast_chunk_bytes > kMaxRequestLines * p.line_bytes)
    gpu.fail("fast_mode_chunk_bytes", std::to_string(p.fast_chunk_bytes),
             "must lie between line_bytes and " + std::to_string(kMaxRequestLines) +
                 " x line_bytes (the replay tags a request with its line count)");
  p.fast_sampling.max_waves = gpu.req<uint32_t>("fast_mode_sample_waves", Rule::range(1, 1e6));
  // Four marks at least: the steadiness test compares lines through all of them and all but two.
  p.fast_sampling.min_waves = gpu.req<uint32_t>("fast_mode_min_sample_waves", Rule::range(4, 1e6));
  // Optional: a file without it stops every sample after fast_mode_sample_waves, steady or not.
  p.fast_sampling.run_on_waves =
      gpu.opt<uint32_t>("fast_mode_run_on_waves", p.fast_sampling.max_waves, Rule::range(1, 1e6));
  if (p.fast_sampling.run_on_waves < p.fast_sampling.max_waves)
    gpu.fail("fast_mode_run_on_waves", std::to_string(p.fast_sampling.run_on_waves),
             "must be at least fast_mode_sample_waves (" + std::to_string(p.fast_sampling.max_waves) +
                 "): a sample runs on beyond those waves, not short of them");
  p.fast_sampling.steady_tolerance = gpu.req<double>("fast_mode_steady_tolerance_percent", Rule::range(0, 100)) / 100;
  // Optional: a file without it simulates every line of a kernel that wave sampling leaves whole.
  p.fast_sampling.line_marks = gpu.opt<uint32_t>("fast_mode_steady_line_marks", 0, Rule::range(0, 4096));
  if (p.fast_sampling.line_marks != 0 && p.fast_sampling.line_marks < p.fast_sampling.min_waves + 2)
    gpu.fail("fast_mode_steady_line_marks", std::to_string(p.fast_sampling.line_marks),
             "must be 0 (off) or at least fast_mode_min_sample_waves + 2: a projection needs its steady marks "
             "and lines left to project");
  // Optional: a file without them samples math-bound kernels as any other.
  p.fast_sampling.math_bound_marks = gpu.opt<uint32_t>("fast_mode_math_bound_marks", 0, Rule::range(0, 1e6));
  if (p.fast_sampling.math_bound_marks != 0 && p.fast_sampling.math_bound_marks < 4)
    gpu.fail("fast_mode_math_bound_marks", std::to_string(p.fast_sampling.math_bound_marks),
             "must be 0 (off) or at least 4: the steadiness test compares lines through all marks and all but two");
  p.fast_sampling.math_bound_slack =
      gpu.opt<double>("fast_mode_math_bound_slack_percent", 0, Rule::range(0, 100)) / 100;
  // Optional: a file without it replays every wave of a GEMM that wave sampling leaves whole.
  p.fast_sampling.gemm_waves = gpu.opt<uint32_t>("fast_mode_gemm_sample_waves", 0, Rule::range(0, 1e6));
  if (p.fast_sampling.gemm_waves != 0 && p.fast_sampling.gemm_waves < 3)
    gpu.fail("fast_mode_gemm_sample_waves", std::to_string(p.fast_sampling.gemm_waves),
             "must be 0 (off) or at least 3: a wave's time is read between the ends of the sample's waves "
             "that end while the next still start (two at least)");
  // Optional: a file without it warms with every CTA a sample skips.
  p.warm_capacities = gpu.opt<double>("fast_mode_warm_capacities", 0, Rule::range(0, 16));
  p.cta_launch_ns = gpu.req<double>("cta_launch_ns", Rule::non_negative());
  p.kernel_launch_ns = gpu.req<double>("kernel_launch_ns", Rule::non_negative());
  p.pipeline_stages = gpu.req<int>("pipeline_stages", Rule::range(1, 64));
  // Optional: a file without them times no kernel by its instruction issue.
  p.warp_schedulers_per_sm = gpu.opt<int>("warp_schedulers_per_sm", 4, Rule::range(1, 64));
  p.warp_issue_interval_cycles = gpu.opt<double>("warp_issue_interval_cycles", 0, Rule::range(0, 1000));
  if (p.sector_bytes > p.line_bytes)
    gpu.fail("sector_bytes", std::to_string(p.sector_bytes), "must not exceed line_bytes");
  return p;
}

namespace {
struct Limits {
  int threads, ctas, regs, smem;
};
Limits limits(const SmParams& p, const trace::KernelRecord& k) {
  const int threads = std::max<int>(1, k.threads_per_cta());
  Limits l;
  l.threads = p.max_threads_per_sm / threads;
  l.ctas = p.max_ctas_per_sm;
  const long regs = long(k.regs_per_thread) * threads;
  l.regs = regs > 0 ? int(p.registers_per_sm / regs) : p.max_ctas_per_sm;
  l.smem = k.smem_bytes > 0 ? int(p.smem_per_sm_bytes / k.smem_bytes) : p.max_ctas_per_sm;
  return l;
}
}  // namespace

int ctas_per_sm(const SmParams& p, const trace::KernelRecord& k) {
  const Limits l = limits(p, k);
  return std::max(0, std::min({l.threads, l.ctas, l.regs, l.smem}));
}

std::string occupancy_limiter(const SmParams& p, const trace::KernelRecord& k) {
  const Limits l = limits(p, k);
  const int m = std::min({l.threads, l.ctas, l.regs, l.smem});
  if (m == l.smem) return "smem";
  if (m == l.regs) return "registers";
  if (m == l.threads) return "threads";
  return "ctas";
}

AccessCursor::AccessCursor(const std::vector<const trace::AccessRecord*>* records, uint32_t cta,
                           const std::vector<uint64_t>* tensor_base, uint32_t line_bytes,
                           uint32_t sector_bytes, uint32_t chunk_bytes, const std::vector<uint8_t>* tensor_tag,
                           uint32_t steps)
    : records_(records), tensor_base_(tensor_base), tensor_tag_(tensor_tag), cta_(cta), line_(line_bytes), sector_(sector_bytes),
      chunk_(std::max(chunk_bytes, line_bytes)), steps_(steps > 1 ? steps : 0) {
  for (const uint32_t size : {line_, sector_, chunk_})
    if (size == 0 || (size & (size - 1)))
      throw std::invalid_argument("AccessCursor: line, sector and chunk sizes must be powers of two, not " + std::to_string(size));
  line_mask_ = line_ - 1;
  sector_mask_ = sector_ - 1;
  chunk_mask_ = chunk_ - 1;
  // One round walks the records one after another; a stepped walk takes as many as its longest row.
  rounds_ = steps_ ? 0 : 1;
  if (steps_)
    for (const auto* r : *records_)
      if (applies(*r)) rounds_ = std::max(rounds_, (element_bytes(*r) + step_of(*r) - 1) / step_of(*r));
  seek(0);
}

uint64_t AccessCursor::element_bytes(const trace::AccessRecord& r) {
  return r.kind == trace::AccessRecord::Kind::strided ? r.elem_bytes : r.row_bytes;
}

bool AccessCursor::applies(const trace::AccessRecord& r) const {
  return cta_ >= r.cta_first && cta_ < r.cta_first + r.cta_count && r.bytes_per_cta() > 0;
}

uint64_t AccessCursor::step_of(const trace::AccessRecord& r) const {
  const uint64_t raw = (element_bytes(r) + steps_ - 1) / steps_;
  const uint64_t lines = (raw + line_mask_) & ~line_mask_;
  // Gathers split at lines in both modes (below); contiguous steps may be fast-mode chunks.
  return r.kind == trace::AccessRecord::Kind::gather ? lines : std::max<uint64_t>(lines, chunk_);
}

bool AccessCursor::covers(const trace::AccessRecord& r) const {
  return applies(r) && (!steps_ || round_ * step_of(r) < element_bytes(r));
}

void AccessCursor::seek(size_t from) {
  for (rec_ = from;; rec_ = 0) {
    while (rec_ < records_->size() && !covers(*(*records_)[rec_])) ++rec_;
    if (rec_ < records_->size()) break;
    if (++round_ >= rounds_) return;  // done: rec_ == size
  }
  enter_record();
}

void AccessCursor::enter_record() {
  const auto* r = (*records_)[rec_];
  start_ = (*tensor_base_)[r->tensor] + r->base + int64_t(cta_ - r->cta_first) * r->cta_stride_bytes;
  tag_ = tensor_tag_ && r->tensor < tensor_tag_->size() ? (*tensor_tag_)[r->tensor] : 0;
  item_ = 0;
  item_off_ = 0;
  // One element, or elements that touch, is a contiguous run (the fast mode's coarse requests).
  contiguous_ = !steps_ && r->kind == trace::AccessRecord::Kind::strided && (r->stride_bytes == int64_t(r->elem_bytes) || r->count == 1);
  if (steps_) step_ = step_of(*r);
}

CtaRequest AccessCursor::next_stepped() {
  const auto* r = (*records_)[rec_];
  const bool gather = r->kind == trace::AccessRecord::Kind::gather;
  const uint64_t lo = round_ * step_, len = std::min(element_bytes(*r), lo + step_) - lo;
  const uint64_t addr = (gather ? start_ + uint64_t(r->rows[item_]) * r->row_pitch_bytes
                                : start_ + uint64_t(int64_t(item_) * r->stride_bytes)) + lo + item_off_;
  const uint64_t granule_mask = gather ? line_mask_ : chunk_mask_;
  const uint64_t boundary = (addr | granule_mask) + 1;
  const uint64_t take = std::min<uint64_t>(len - item_off_, boundary - addr);
  const uint64_t a = addr & ~sector_mask_;
  const uint64_t b = (addr + take + sector_mask_) & ~sector_mask_;
  const CtaRequest req{a, static_cast<uint32_t>(b - a), r->write, tag_};
  item_off_ += take;
  if (item_off_ >= len) {
    item_off_ = 0;
    if (++item_ >= (gather ? r->rows.size() : r->count)) seek(rec_ + 1);
  }
  return req;
}

uint64_t AccessCursor::remaining_estimate() const {
  if (done()) return 0;
  return (*records_)[rec_]->bytes_per_cta();
}

CtaRequest AccessCursor::next() {
  if (steps_) return next_stepped();
  const auto* r = (*records_)[rec_];
  uint64_t addr, span_left;
  uint64_t granule_mask;  // the largest request this kind of access makes, less one
  if (contiguous_) {
    const uint64_t total = r->count * r->elem_bytes;
    addr = start_ + item_off_;
    span_left = total - item_off_;
    granule_mask = chunk_mask_;
  } else if (r->kind == trace::AccessRecord::Kind::strided) {
    addr = start_ + item_ * r->stride_bytes + item_off_;
    span_left = r->elem_bytes - item_off_;
    granule_mask = line_mask_;
  } else {
    addr = start_ + uint64_t(r->rows[item_]) * r->row_pitch_bytes + item_off_;
    span_left = r->row_bytes - item_off_;
    // Rows of a gather split at lines in both modes: a row is a few lines, and a coarse request
    // would hold its window entries until its slowest line returned (a latency-bound gather then
    // runs ~8 % slower than its line requests do).
    granule_mask = line_mask_;
  }
  // Never cross a `granule` boundary; round the ends out to whole sectors.
  const uint64_t boundary = (addr | granule_mask) + 1;
  const uint64_t take = std::min<uint64_t>(span_left, boundary - addr);
  const uint64_t lo = addr & ~sector_mask_;
  const uint64_t hi = (addr + take + sector_mask_) & ~sector_mask_;
  CtaRequest req{lo, static_cast<uint32_t>(hi - lo), r->write, tag_};

  item_off_ += take;
  const bool item_done = contiguous_ ? item_off_ >= r->count * r->elem_bytes
                                     : item_off_ >= (r->kind == trace::AccessRecord::Kind::strided ? r->elem_bytes
                                                                                                   : r->row_bytes);
  if (item_done) {
    item_off_ = 0;
    ++item_;
    const uint64_t items = contiguous_ ? 1 : (r->kind == trace::AccessRecord::Kind::strided ? r->count : r->rows.size());
    if (item_ >= items) seek(rec_ + 1);
  }
  return req;
}

std::array<std::vector<const trace::AccessRecord*>, 2> epilogue_phases(const trace::KernelRecord& k,
                                                                      const std::vector<const trace::AccessRecord*>& records) {
  std::array<std::vector<const trace::AccessRecord*>, 2> ph;
  for (const trace::AccessRecord* a : records) ph[k.stores_after_math && a->write ? 1 : 0].push_back(a);
  return ph;
}

}  // namespace indexsim::model
