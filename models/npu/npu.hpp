// SPDX-License-Identifier: Apache-2.0
// An NPU as a second processor (models/common/processor.hpp): cores that each run one task at a
// time, with a matrix array, a vector unit and a DMA engine.
//
// - Tasks: a kernel placed on the NPU was cut into CTAs for some grid; an NPU library runs it as a
//   persistent kernel, one task per core, each over ceil(CTAs / cores) consecutive CTAs (the last
//   ones fewer). So there are no waves, and the fast mode samples none.
// - Matrix array: R x C processing elements, each retiring a dot product of `macs_per_pe[p]` MACs a
//   cycle at precision p (an Ascend Cube is 16 x 16 PEs of 16-deep dot products). Weight
//   stationary, as SCALE-Sim models it (Samajdar et al., ISPASS 2020, §III-B): the stationary
//   K x N operand is cut into folds of (R·D) x C, and the streamed operand's M rows pass each fold
//   in 2R + C + M - 2 cycles (fill, M rows, drain). A precision the array lacks runs at the next
//   wider one it has (fp8 -> bf16), as on the GPU.
// - Vector unit: the task's SIMT-precision work at `vector_flops_per_cycle`; it overlaps the array.
// - DMA: one engine a core moves the task's bytes as requests of `dma_request_B` (or the fast mode's
//   chunks), at most `dma_outstanding` in flight, paced at `dma_Bpc` bytes a cycle for data outside
//   the core's local memory and `local_Bpc` for data in it (the SRAM region the hardware names):
//   data there costs the SRAM's bandwidth and no HBM bytes. It walks a task's records in order:
//   a GPU GEMM's K steps and epilogue (KernelRecord::load_steps, stores_after_math) are the SM's.
// - A double-buffered task computes while its DMA runs and ends `tail` after its data lands (the
//   math on the last `stage_B` bytes); otherwise it computes after its loads. Then `task_launch_ns`.
#pragma once

#include <array>
#include <queue>
#include <vector>

#include "models/common/processor.hpp"
#include "models/sm/sm.hpp"

namespace indexsim::model {

struct NpuParams {
  uint32_t cores = 0;
  double clock_MHz = 0;
  uint32_t array_rows = 0, array_cols = 0;
  std::array<double, trace::kPrecisionCount> macs_per_pe{};  // per cycle; 0 = not native
  double vector_flops_per_cycle = 0;  // per core
  double dma_Bpc = 0;                 // per core, data outside the local memory
  double local_Bpc = 0;               // per core, data in the local memory
  uint32_t dma_request_B = 0;         // detailed mode
  uint32_t fast_chunk_B = 0;          // fast mode
  uint32_t dma_outstanding = 0;       // requests in flight per core
  uint64_t stage_B = 0;               // operand buffer one stage fills (double-buffered tasks)
  double task_launch_ns = 0;
  double kernel_launch_ns = 0;

  static NpuParams load(const config::Node& npu);
};

// Cycles of an M x K x N matrix product (M streamed, K x N stationary) on the array at precision p,
// after the fallback to a precision it has: folds x (2R + C + M - 2), folds = ceil(K/(R·D)) x ceil(N/C).
uint64_t matmul_cycles(const NpuParams& p, uint64_t m, uint64_t k, uint64_t n, trace::Precision prec);
// The precision the array runs `prec` at (itself, or the next wider one it has); simt if none.
trace::Precision npu_effective_precision(const NpuParams& p, trace::Precision prec);

class Npu : public Processor {
 public:
  Npu(const NpuParams& p, MemoryDevice& memory);

  uint32_t units() const override { return p_.cores; }
  std::string unit_name() const override { return "NPU core"; }
  int ctas_per_unit(const trace::KernelRecord&) const override { return 1; }
  std::string occupancy_limiter(const trace::KernelRecord&) const override { return "tasks"; }
  double peak_flops(trace::Precision p) const override;
  Tick kernel_launch_ps() const override { return ns_to_ps(p_.kernel_launch_ns); }
  uint32_t line_bytes() const override { return p_.dma_request_B; }
  uint32_t sector_bytes() const override { return p_.dma_request_B; }  // its DMA moves whole requests
  double clock_MHz() const override { return p_.clock_MHz; }
  uint64_t fitted_smem_bytes(uint64_t smem_bytes) const override { return smem_bytes; }
  WaveSampling wave_sampling() const override { return {UINT32_MAX, UINT32_MAX, 0}; }
  trace::LaunchLimits launch_limits() const override;
  void set_local_memory(uint64_t base, uint64_t bytes) override {
    local_base_ = base;
    local_end_ = base + bytes;
  }

  void launch(const KernelWork& w, Tick now) override;
  Tick next_event() const override;
  void advance(Tick now, std::vector<CtaEnd>& ended) override;
  void warm(const KernelWork& w) override;
  uint64_t stop_starting(uint32_t kernel) override;
  ProcessorActivity activity() const override;
  void memory_moved() override { mem_next_valid_ = false; }

  // The compute time of a task of `ctas` CTAs of `w` (array and vector unit, the busier one): their
  // rows stream through each fold in one pass.
  Tick task_compute_ps(const KernelWork& w, uint64_t ctas) const;

 private:
  struct Kernel {
    KernelWork work;
    uint64_t next = 0;    // CTAs of the work started
    uint64_t batch = 1;   // CTAs a task
    double read_B = 0;    // bytes a CTA reads
  };
  struct Core {
    bool busy = false;
    uint32_t kernel = 0;
    uint64_t cta = 0, cta_end = 0;   // the CTA its cursor walks, and the end of its task's CTAs
    uint64_t ctas = 0;
    AccessCursor cursor;
    bool held = false;        // `held_req` was refused by the memory or waits for the DMA's pacing
    CtaRequest held_req{};
    uint32_t outstanding = 0;
    Tick start = 0, dma_free = 0, compute = 0, compute_end = 0;
    bool mem_done = false;
    bool wake = false;        // a DMA-pacing event is queued
    bool stalled = false;     // in stalled_
    uint64_t bytes_read = 0, bytes_written = 0, requests = 0;
    Tick busy_total = 0, compute_total = 0;
  };
  enum class Ev : uint8_t { dma, end };
  struct Event {
    Tick t;
    uint64_t seq;
    uint32_t core;
    Ev type;
    bool operator>(const Event& o) const { return t != o.t ? t > o.t : seq > o.seq; }
  };

  AccessCursor cursor_for(const KernelWork& w, uint64_t cta) const;
  bool requests_left(Core& core) const;   // moves the cursor on to the task's next CTA as each is done
  void dispatch(Tick now);
  void issue(uint32_t core, Tick now);
  void finish_memory(uint32_t core, Tick now);
  Tick memory_next() const;
  bool local(uint64_t addr) const { return addr >= local_base_ && addr < local_end_; }

  NpuParams p_;
  Clock clk_;
  MemoryDevice& mem_;
  uint64_t local_base_ = 0, local_end_ = 0;
  std::vector<Kernel> kernels_;
  std::vector<uint32_t> ready_;   // kernels with tasks left to start, by handle
  std::vector<Core> cores_;
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> events_;
  std::vector<uint32_t> stalled_;
  std::vector<MemCompletion> done_;
  uint64_t seq_ = 0, req_seq_ = 0;
  bool dispatch_pending_ = false;
  Tick dispatch_at_ = 0;
  mutable Tick mem_next_ = kNever;
  mutable bool mem_next_valid_ = false;
};

}  // namespace indexsim::model
