// SPDX-License-Identifier: Apache-2.0
#include "models/npu/npu.hpp"

#include <algorithm>
#include <cmath>


namespace indexsim::model {

using config::Rule;
using trace::Precision;

namespace {

// A request's id: the core in the low bits, a sequence number above.
constexpr uint32_t kCoreBits = 12;

uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

}  // namespace

NpuParams NpuParams::load(const config::Node& n) {
  NpuParams p;
  p.cores = n.req<uint32_t>("cores", Rule::range(1, (1u << kCoreBits) - 1));
  p.clock_MHz = n.req<double>("clock_MHz", Rule::clock_MHz());
  p.array_rows = n.req<uint32_t>("array_rows", Rule::range(1, 4096));
  p.array_cols = n.req<uint32_t>("array_cols", Rule::range(1, 4096));
  auto m = n.child("macs_per_pe_per_cycle");
  for (Precision q : {Precision::fp32, Precision::tf32, Precision::bf16, Precision::fp16, Precision::fp8, Precision::fp4})
    p.macs_per_pe[int(q)] = m.req<double>(trace::to_string(q), Rule::non_negative());
  if (p.macs_per_pe[int(Precision::fp16)] <= 0 && p.macs_per_pe[int(Precision::bf16)] <= 0)
    n.fail("macs_per_pe_per_cycle", "fp16 and bf16 both 0", "the array must run fp16 or bf16");
  p.vector_flops_per_cycle = n.req<double>("vector_flops_per_cycle", Rule::positive());
  p.dma_Bpc = n.req<double>("dma_bytes_per_cycle", Rule::positive());
  p.local_Bpc = n.req<double>("local_bytes_per_cycle", Rule::positive());
  p.dma_request_B = n.req<uint32_t>("dma_request_B", Rule::power_of_two());
  p.fast_chunk_B = n.req<uint32_t>("fast_mode_chunk_B", Rule::power_of_two());
  if (p.fast_chunk_B < p.dma_request_B || p.fast_chunk_B > p.dma_request_B * kMaxRequestLines)
    n.fail("fast_mode_chunk_B", std::to_string(p.fast_chunk_B),
           "between dma_request_B and " + std::to_string(kMaxRequestLines) + " x dma_request_B");
  p.dma_outstanding = n.req<uint32_t>("dma_outstanding_requests", Rule::range(1, 65536));
  p.stage_B = n.req<uint64_t>("stage_B", Rule::positive());
  p.task_launch_ns = n.req<double>("task_launch_ns", Rule::non_negative());
  p.kernel_launch_ns = n.req<double>("kernel_launch_ns", Rule::non_negative());
  n.note("source");
  return p;
}

Precision npu_effective_precision(const NpuParams& p, Precision prec) {
  // fp4 -> fp8 -> bf16 -> fp16, tf32 -> fp32: a narrower format the array lacks is widened.
  static constexpr Precision kWider[trace::kPrecisionCount] = {Precision::simt, Precision::fp32, Precision::fp16,
                                                                Precision::bf16, Precision::bf16, Precision::fp8,
                                                                Precision::simt};
  Precision q = prec;
  for (int guard = 0; guard < 6 && q != Precision::simt && p.macs_per_pe[int(q)] <= 0; ++guard) q = kWider[int(q)];
  return q;
}

uint64_t matmul_cycles(const NpuParams& p, uint64_t m, uint64_t k, uint64_t n, Precision prec) {
  const Precision q = npu_effective_precision(p, prec);
  if (q == Precision::simt || m == 0 || k == 0 || n == 0) return 0;
  const uint64_t depth = std::max<uint64_t>(1, uint64_t(std::llround(p.macs_per_pe[int(q)])));
  const uint64_t folds = ceil_div(k, uint64_t(p.array_rows) * depth) * ceil_div(n, p.array_cols);
  return folds * (2ull * p.array_rows + p.array_cols + m - 2);
}

Npu::Npu(const NpuParams& p, MemoryDevice& memory) : p_(p), clk_(p.clock_MHz), mem_(memory), cores_(p.cores) {}

double Npu::peak_flops(Precision prec) const {
  const Precision q = npu_effective_precision(p_, prec);
  const double hz = p_.clock_MHz * 1e6 * p_.cores;
  if (q == Precision::simt) return p_.vector_flops_per_cycle * hz;
  return 2.0 * p_.array_rows * p_.array_cols * p_.macs_per_pe[int(q)] * hz;
}

trace::LaunchLimits Npu::launch_limits() const {
  trace::LaunchLimits l;
  l.units = p_.cores;
  for (int i = 0; i < trace::kPrecisionCount; ++i) l.native[size_t(i)] = p_.macs_per_pe[size_t(i)] > 0;
  l.native[size_t(Precision::simt)] = true;
  return l;
}

Tick Npu::task_compute_ps(const KernelWork& w, uint64_t ctas) const {
  const trace::KernelRecord& r = *w.rec;
  const double tasks = double(std::max<uint64_t>(1, r.cta_count())) / double(std::max<uint64_t>(1, ctas));
  uint64_t array_cycles = 0;
  double vector_flops = 0;
  for (int i = 0; i < trace::kPrecisionCount; ++i) {
    const double f = r.flops[size_t(i)] / tasks;
    if (f <= 0) continue;
    const Precision q = npu_effective_precision(p_, Precision(i));
    if (q == Precision::simt) {
      vector_flops += f;
      continue;
    }
    // The stationary operand the workload gave, or (unknown) one that fills every fold exactly.
    const uint64_t depth = std::max<uint64_t>(1, uint64_t(std::llround(p_.macs_per_pe[size_t(q)])));
    const uint64_t k = w.mm_k ? w.mm_k : uint64_t(p_.array_rows) * depth, n = w.mm_n ? w.mm_n : p_.array_cols;
    const uint64_t m = std::max<uint64_t>(1, uint64_t(std::ceil(f / (2.0 * double(k) * double(n)) - 1e-9)));
    array_cycles += matmul_cycles(p_, m, k, n, Precision(i));
  }
  const double vector_cycles = vector_flops / p_.vector_flops_per_cycle;
  // The vector unit and the array overlap unless the kernel's phases alternate (dequantise, then
  // multiply), as on the SMs.
  const double cycles = r.simt_overlaps_mma ? std::max(double(array_cycles), vector_cycles)
                                            : double(array_cycles) + vector_cycles;
  return Tick(std::llround(cycles * double(clk_.period_ps())));
}

AccessCursor Npu::cursor_for(const KernelWork& w, uint64_t cta) const {
  const uint32_t chunk = w.coarse ? p_.fast_chunk_B : p_.dma_request_B;
  return AccessCursor(w.accesses, static_cast<uint32_t>(cta), w.tensor_base, p_.dma_request_B, 32, chunk, w.tensor_tag);
}

bool Npu::requests_left(Core& core) const {
  while (core.cursor.done() && core.cta + 1 < core.cta_end) {
    ++core.cta;
    core.cursor = cursor_for(kernels_[core.kernel].work, core.cta);
  }
  return !core.cursor.done();
}

void Npu::launch(const KernelWork& w, Tick now) {
  if (w.kernel >= kernels_.size()) kernels_.resize(size_t(w.kernel) + 1);
  Kernel& k = kernels_[w.kernel];
  k = Kernel{};
  k.work = w;
  k.batch = std::max<uint64_t>(1, (w.ctas + p_.cores - 1) / p_.cores);
  for (const trace::AccessRecord* a : *w.accesses)
    if (!a->write) k.read_B += double(a->total_bytes());
  k.read_B /= double(std::max<uint64_t>(1, w.rec->cta_count()));
  ready_.insert(std::upper_bound(ready_.begin(), ready_.end(), w.kernel), w.kernel);
  dispatch_pending_ = true;
  dispatch_at_ = now;
}

inline Tick Npu::memory_next() const {
  if (!mem_next_valid_) {
    mem_next_ = stalled_.empty() ? mem_.next_event() : mem_.next_retry();
    mem_next_valid_ = true;
  }
  return mem_next_;
}

Tick Npu::next_event() const {
  Tick t = events_.empty() ? kNever : events_.top().t;
  t = std::min(t, memory_next());
  if (dispatch_pending_ && !ready_.empty()) t = std::min(t, dispatch_at_);
  return t;
}

void Npu::dispatch(Tick now) {
  // Kernels in launch order; a free core takes the next task (cores in index order).
  for (uint32_t c = 0; c < cores_.size() && !ready_.empty(); ++c) {
    Core& core = cores_[c];
    if (core.busy) continue;
    Kernel& k = kernels_[ready_.front()];
    const uint64_t first = k.work.first_cta + k.next, n = std::min(k.batch, k.work.ctas - k.next);
    k.next += n;
    const uint32_t kid = ready_.front();
    if (k.next >= k.work.ctas) ready_.erase(ready_.begin());
    const Tick busy = core.busy_total, comp = core.compute_total;
    core = Core{};
    core.busy_total = busy;
    core.compute_total = comp;
    core.busy = true;
    core.kernel = kid;
    core.cta = first;
    core.cta_end = first + n;
    core.ctas = n;
    core.start = now;
    core.dma_free = now;
    core.cursor = cursor_for(k.work, first);
    core.compute = task_compute_ps(k.work, n);
    core.compute_total += core.compute;
    if (k.work.rec->double_buffered) core.compute_end = now + core.compute;
    if (!requests_left(core)) {
      finish_memory(c, now);
    } else {
      issue(c, now);
    }
  }
  mem_next_valid_ = false;
}

void Npu::issue(uint32_t c, Tick now) {
  Core& core = cores_[c];
  while (core.outstanding < p_.dma_outstanding && (core.held || requests_left(core))) {
    if (!core.held) {
      core.held_req = core.cursor.next();
      core.held = true;
    }
    // The engine moves one request at a time at its rate: the next waits for it.
    if (core.dma_free > now) {
      if (!core.wake) events_.push({core.dma_free, seq_++, c, Ev::dma});
      core.wake = true;
      return;
    }
    const CtaRequest& r = core.held_req;
    MemRequest mr;
    mr.id = (req_seq_ << kCoreBits) | c;
    mr.addr = r.addr;
    mr.bytes = r.bytes;
    mr.write = r.write;
    mr.tag = r.tag;
    mr.source = c;  // its port on the memory system numbers it after the other processors' units
    if (!mem_.try_enqueue(mr, now)) {
      if (!core.stalled) stalled_.push_back(c);
      core.stalled = true;
      mem_next_valid_ = false;
      return;
    }
    mem_next_valid_ = false;
    ++req_seq_;
    core.held = false;
    ++core.outstanding;
    ++core.requests;
    (r.write ? core.bytes_written : core.bytes_read) += r.bytes;
    const double rate = local(r.addr) ? p_.local_Bpc : p_.dma_Bpc;
    core.dma_free = now + Tick(std::llround(double(r.bytes) / rate * double(clk_.period_ps())));
  }
}

void Npu::finish_memory(uint32_t c, Tick now) {
  Core& core = cores_[c];
  const Kernel& k = kernels_[core.kernel];
  core.mem_done = true;
  // Double-buffered: the math on the last stage's data follows it (that share of the task's math).
  const Tick compute = core.compute;
  const double read = k.read_B * double(core.ctas);
  const double tail = read > 0 ? std::min(1.0, double(p_.stage_B) / read) : 1.0;
  const Tick end = k.work.rec->double_buffered ? std::max(core.compute_end, now + Tick(double(compute) * tail))
                                               : now + compute;
  events_.push({end + ns_to_ps(p_.task_launch_ns), seq_++, c, Ev::end});
}

void Npu::advance(Tick now, std::vector<CtaEnd>& ended) {
  if (dispatch_pending_) {
    dispatch_pending_ = false;
    if (!ready_.empty()) dispatch(now);
  }
  if (memory_next() <= now) {
    mem_next_valid_ = false;
    done_.clear();
    mem_.advance(now, done_);
    for (const auto& d : done_) {
      const uint32_t c = uint32_t(d.id & ((1u << kCoreBits) - 1));
      Core& core = cores_[c];
      --core.outstanding;
      if (core.outstanding == 0 && !core.held && !requests_left(core) && !core.mem_done) finish_memory(c, std::max(now, d.done));
      else issue(c, now);
    }
    if (!stalled_.empty()) {
      auto stalled = std::move(stalled_);
      stalled_.clear();
      for (uint32_t c : stalled) {
        cores_[c].stalled = false;
        issue(c, now);
      }
    }
  }
  while (!events_.empty() && events_.top().t <= now) {
    const Event e = events_.top();
    events_.pop();
    Core& core = cores_[e.core];
    if (e.type == Ev::dma) {
      core.wake = false;
      if (core.busy && !core.mem_done && !core.stalled) issue(e.core, now);
      continue;
    }
    const Kernel& k = kernels_[core.kernel];
    core.busy = false;
    core.busy_total += now - core.start;
    // One end a CTA of the task (the engine counts CTAs), its traffic on the first.
    for (uint64_t i = 0; i < core.ctas; ++i)
      ended.push_back({core.kernel, e.core, core.start, now, i ? 0 : core.bytes_read, i ? 0 : core.bytes_written,
                       i ? 0 : core.requests, k.next >= k.work.ctas});
    dispatch_pending_ = true;
    dispatch_at_ = now;
  }
}

void Npu::warm(const KernelWork& w) {
  mem_next_valid_ = false;
  for (uint64_t t = w.first_cta; t < w.first_cta + w.ctas; ++t) {
    AccessCursor cur = cursor_for(w, t);
    while (!cur.done()) {
      const CtaRequest q = cur.next();
      mem_.warm({0, q.addr, q.bytes, q.write, 0});
    }
  }
}

// An NPU kernel is never sampled (wave_sampling: no waves), so the engine never stops one early.
uint64_t Npu::stop_starting(uint32_t kernel) { return kernels_[kernel].next; }

ProcessorActivity Npu::activity() const {
  ProcessorActivity a;
  for (const Core& c : cores_) {
    a.resident_ps += c.busy_total;
    a.compute_ps += c.compute_total;
  }
  return a;
}

namespace {
INDEXSIM_REGISTER(ProcessorRegistry, "processor", "npu", [](const config::Node& n, MemoryDevice& memory) {
  return std::make_unique<Npu>(NpuParams::load(n), memory);
});
}  // namespace

}  // namespace indexsim::model
