// SPDX-License-Identifier: Apache-2.0
// The timing-core interface of a processor (the GPU's SM array, an NPU): what executes the CTAs of
// kernels, as MemoryDevice is what serves their requests.
//
// The replay engine hands a processor the CTAs of each kernel that became ready, asks when its next
// event is due, advances it to that time and collects the CTAs that ended. What happens inside (how
// CTAs are placed, how their requests reach memory, how compute overlaps loads) is the processor's;
// the engine never knows which processor it drives. Plain C++, event-driven, no idle ticks.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "models/common/memory_device.hpp"
#include "models/common/params.hpp"
#include "models/common/registry.hpp"
#include "models/common/time.hpp"
#include "traces/launch_limits.hpp"
#include "traces/records.hpp"

namespace indexsim::model {

// A kernel's work for a processor: CTAs [first_cta, first_cta + ctas) of its grid. The fast mode
// hands over the last waves only; the earlier CTAs go through warm().
struct KernelWork {
  uint32_t kernel = 0;  // the engine's handle, echoed in CtaEnd; kernels are served in handle order
  const trace::KernelRecord* rec = nullptr;
  const std::vector<const trace::AccessRecord*>* accesses = nullptr;
  const std::vector<uint64_t>* tensor_base = nullptr;  // physical base address of each tensor id
  uint64_t first_cta = 0, ctas = 0;
  // Contiguous runs as the processor's coarse requests (fast mode) instead of line requests.
  bool coarse = false;
  // The stationary operand of the kernel's matrix work (K x N), where the workload knows it; 0:
  // unknown. A matrix array's folds depend on it (models/npu); the SMs' Tensor Cores do not use it.
  uint64_t mm_k = 0, mm_n = 0;
  // The MemRequest::tag of each tensor id's requests (null or short: untagged).
  const std::vector<uint8_t>* tensor_tag = nullptr;
  // Fast mode, a kernel that wave sampling leaves whole: the processor may mark its progress in
  // lines and, once the rate is steady, project the rest (WaveSampling::line_marks). roofline_ps:
  // the least time these CTAs can take (the floor of the projected rate).
  bool project_when_steady = false;
  double roofline_ps = 0;
};

// One CTA that ended, with the traffic it made.
struct CtaEnd {
  uint32_t kernel = 0;
  uint32_t unit = 0;           // the compute unit (SM, core) it ran on
  Tick start = 0, end = 0;
  uint64_t bytes_read = 0, bytes_written = 0, requests = 0;  // projected lines' included
  // Every CTA of its KernelWork had started when it ended (the machine no longer full of it).
  bool all_started = false;
  // Its end was set by its math: a double-buffered CTA whose memory was done at least
  // WaveSampling::math_bound_slack of its math before that math ended.
  bool math_bound = false;
};

// Fast mode: how a kernel of many waves is sampled (sim/engine/sampling.hpp). How many waves reach
// the steady state depends on the processor, so its section says.
struct WaveSampling {
  uint32_t max_waves = 0;         // a kernel of more full waves replays this many of its last ones
  uint32_t min_waves = 0;         // wave marks a sample needs before it may stop at a steady rate
  double steady_tolerance = 0;    // how far (a fraction of the duration) the predicted end may still move
  // A kernel that wave sampling leaves whole, fits one wave and has CTAs of one size marks its
  // progress at each 1/line_marks of its lines; once min_waves marks pass the same test and its
  // recent rate holds (SmArray), the rest of each CTA's lines are warmed, not simulated, and take
  // the time that rate gives them. 0 (every preset): every line simulated.
  uint32_t line_marks = 0;
  // A kernel whose CTAs after its first wave all end math-bound (CtaEnd::math_bound, with
  // math_bound_slack, a fraction of a CTA's math, to spare) may stop once math_bound_marks wave marks
  // after the first (at least four) are steady, and its end counts whole waves: where the math sets
  // a CTA's end, a last partial wave takes as long as a full one. 0 (a file without it): off.
  uint32_t math_bound_marks = 0;
  double math_bound_slack = 0;
  // A sampled kernel replays at most this many of its last waves (at least max_waves): a sample
  // that is not yet steady after max_waves runs on, and stops once steady. 0: max_waves.
  uint32_t run_on_waves = 0;
  // A pipelined GEMM (double-buffered, loading in K steps) that the rules above would replay whole
  // and that has more than gemm_waves full waves replays only its last gemm_waves full waves and its
  // partial one (gemm_waves + 1 full waves if it has no partial one, and then more than that), from
  // the state its kernel starts in (a cold first wave, its real tail); each full wave left out takes
  // the time of a wave of the sample, and the math rule does not stop it (sim/engine/sampling.hpp).
  // 0: off.
  uint32_t gemm_waves = 0;
};

// Time the units were occupied, summed over units: the basis of utilisation figures.
struct ProcessorActivity {
  Tick resident_ps = 0;   // with at least one CTA resident
  Tick compute_ps = 0;    // matrix / vector pipe busy
};

class Processor {
 public:
  virtual ~Processor() = default;

  // Units that run CTAs side by side (SMs, cores), and what one is called in reports.
  virtual uint32_t units() const = 0;
  virtual std::string unit_name() const = 0;
  // CTAs of `k` that one unit holds at once; 0 when one CTA does not fit (the launch would fail),
  // and then occupancy_limiter() says which resource.
  virtual int ctas_per_unit(const trace::KernelRecord& k) const = 0;
  virtual std::string occupancy_limiter(const trace::KernelRecord& k) const = 0;
  // Peak rate of the whole processor at one precision, FLOP/s: the compute roofline.
  virtual double peak_flops(trace::Precision p) const = 0;
  // Gap between a kernel's dependences resolving and its first CTA starting.
  virtual Tick kernel_launch_ps() const = 0;
  // The line its requests are counted in (for summaries of a gather's locality), and the smallest
  // request it sends (an access narrower than a line).
  virtual uint32_t line_bytes() const = 0;
  virtual uint32_t sector_bytes() const = 0;
  // The clock its cycles are counted in (reports give latencies in these cycles too).
  virtual double clock_MHz() const = 0;
  // The shared memory a kernel library gives a CTA that asks for `smem_bytes` on this processor
  // (fewer pipeline stages where a unit has less); `smem_bytes` itself when it fits or nothing does.
  virtual uint64_t fitted_smem_bytes(uint64_t smem_bytes) const = 0;
  virtual WaveSampling wave_sampling() const = 0;
  // What kernel libraries read from the device to pick their launch shapes (units, shared memory
  // per CTA, native precisions): emulated kernels are shaped from this.
  virtual trace::LaunchLimits launch_limits() const = 0;

  // Queues a ready kernel's CTAs; they start at the processor's next event (no later than `now`).
  virtual void launch(const KernelWork& w, Tick now) = 0;
  // The earliest time at which something may happen: a CTA ending, a request completing, queued
  // work starting. kNever when idle.
  virtual Tick next_event() const = 0;
  // Processes everything due at or before `now`; appends the CTAs that ended.
  virtual void advance(Tick now, std::vector<CtaEnd>& ended) = 0;
  // Functional warming: the memory state the CTAs of `w` would leave, with no timing or statistics.
  virtual void warm(const KernelWork& w) = 0;
  // Fast mode's early stop: the launched kernel `kernel` starts no more CTAs (those started run to
  // their end); returns how many of its work's CTAs had started.
  virtual uint64_t stop_starting(uint32_t kernel) = 0;
  virtual ProcessorActivity activity() const = 0;
  // The share of a launched kernel's lines that went through the memory system (the rest were
  // projected at its steady rate, KernelWork::project_when_steady): what the engine scales the
  // memory counters of its window by. 1 for a processor that never projects.
  virtual double simulated_line_share(uint32_t kernel) const {
    (void)kernel;
    return 1.0;
  }
  // Resident time up to `now`, busy periods still open included (activity() credits a unit's busy
  // period when it ends): what a timeline's occupancy over a window needs.
  virtual Tick resident_ps_at(Tick now) const {
    (void)now;
    return activity().resident_ps;
  }

  // The address window of a local memory next to the units (an NPU's SRAM), which they reach at
  // their local rate. Processors without one ignore it.
  virtual void set_local_memory(uint64_t base, uint64_t bytes) { (void)base, (void)bytes; }
  // Another processor sent to or advanced the memory this one shares with it since this one last
  // looked: what it remembers of the memory's next event is stale.
  virtual void memory_moved() {}
};

// Processors are built from their hardware section (`impl:` picks the entry) over the memory
// system their requests go to.
using ProcessorRegistry = config::Registry<Processor, const config::Node&, MemoryDevice&>;

// Builds the processor named by node's `impl` key; unknown names are a ConfigError naming the choices.
std::unique_ptr<Processor> make_processor(const config::Node& node, MemoryDevice& memory);

}  // namespace indexsim::model
