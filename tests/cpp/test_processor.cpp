// SPDX-License-Identifier: Apache-2.0
// The processor contract (models/common/processor.hpp) from the engine's side: the replay drives a
// processor it knows nothing of. The one here is a test double: `units` units, one CTA each at a
// time, every CTA `cta_ps` long, no memory traffic. It registers like a real model would.
#include <gtest/gtest.h>

#include <queue>
#include <stdexcept>

#include "models/common/processor.hpp"
#include "models/sm/sm_array.hpp"
#include "sim/engine/replay.hpp"
#include "tests/cpp/fake_memory.hpp"
#include "tests/cpp/test_kernel_util.hpp"

using namespace indexsim;
using model::Tick;

namespace {

class UniformProcessor : public model::Processor {
 public:
  UniformProcessor(uint32_t units, Tick cta_ps, Tick launch_ps) : units_(units), cta_(cta_ps), launch_(launch_ps) {}
  uint32_t units() const override { return units_; }
  std::string unit_name() const override { return "core"; }
  int ctas_per_unit(const trace::KernelRecord&) const override { return 1; }
  std::string occupancy_limiter(const trace::KernelRecord&) const override { return "slots"; }
  double peak_flops(trace::Precision) const override { return 1e15; }
  Tick kernel_launch_ps() const override { return launch_; }
  uint32_t line_bytes() const override { return 128; }
  uint32_t sector_bytes() const override { return 32; }
  double clock_MHz() const override { return 1000; }
  model::WaveSampling wave_sampling() const override { return {1000, 3, 0.0}; }
  uint64_t fitted_smem_bytes(uint64_t smem) const override { return smem; }
  trace::LaunchLimits launch_limits() const override {
    trace::LaunchLimits l;
    l.units = units_;
    return l;
  }
  void launch(const model::KernelWork& w, Tick now) override {
    for (uint64_t c = 0; c < w.ctas; ++c) waiting_.push_back({w.kernel, c + 1 == w.ctas});
    start(now);
  }
  Tick next_event() const override { return running_.empty() ? model::kNever : running_.top().end; }
  void advance(Tick now, std::vector<model::CtaEnd>& ended) override {
    while (!running_.empty() && running_.top().end <= now) {
      const Run r = running_.top();
      running_.pop();
      free_.push_back(r.unit);
      ended.push_back({r.kernel, r.unit, r.end - cta_, r.end, 0, 0, 0, r.last_started});
    }
    start(now);
  }
  void warm(const model::KernelWork&) override {}
  uint64_t stop_starting(uint32_t) override { throw std::logic_error("UniformProcessor: no kernel is sampled"); }
  model::ProcessorActivity activity() const override { return {busy_, busy_}; }

 private:
  struct Run {
    Tick end;
    uint32_t kernel, unit;
    bool last_started;
    bool operator>(const Run& o) const { return end != o.end ? end > o.end : unit > o.unit; }
  };
  void start(Tick now) {
    if (free_.empty() && running_.empty()) for (uint32_t u = 0; u < units_; ++u) free_.push_back(units_ - 1 - u);
    while (!free_.empty() && !waiting_.empty()) {
      const uint32_t u = free_.back();
      free_.pop_back();
      running_.push({now + cta_, waiting_.front().first, u, waiting_.size() == 1});
      waiting_.erase(waiting_.begin());
      busy_ += cta_;
    }
  }
  uint32_t units_;
  Tick cta_, launch_, busy_ = 0;
  std::vector<std::pair<uint32_t, bool>> waiting_;
  std::vector<uint32_t> free_;
  std::priority_queue<Run, std::vector<Run>, std::greater<Run>> running_;
};

using test::kernel;

sim::ReplayOutput run(model::Processor& p, std::vector<trace::KernelRecord> ks, bool reuse = false) {
  const sim::Workload w = test::workload(ks, {}, 0);
  sim::ReplayInput in;
  in.workload = &w;
  sim::ReplayOptions opt;
  opt.reuse = reuse;
  return sim::replay(p, in, opt);
}

}  // namespace

TEST(Processor, TheEngineDrivesAProcessorItDoesNotKnow) {
  // 10 CTAs on 4 units of 1 us each: ceil(10 / 4) = 3 waves = 3 us, after the 2 us launch gap.
  // The dependent kernel of 4 CTAs starts 2 us after the first ends: 2 + 3 + 2 + 1 = 8 us.
  UniformProcessor p(4, 1000000, 2000000);
  const auto out = run(p, {kernel(0, 10), kernel(1, 4, {0})});
  ASSERT_EQ(out.kernels.size(), 2u);
  EXPECT_DOUBLE_EQ(out.kernels[0].start_ns, 2000.0);
  EXPECT_DOUBLE_EQ(out.kernels[0].end_ns, 5000.0);
  EXPECT_DOUBLE_EQ(out.kernels[1].start_ns, 7000.0);
  EXPECT_DOUBLE_EQ(out.step_ns, 8000.0);
  // Busy: 14 CTA-us over 4 units x 8 us.
  EXPECT_DOUBLE_EQ(out.sm_busy_fraction, 14.0 / 32.0);
}

TEST(Processor, ARepeatedKernelIsTakenFromTheMemoWhateverTheProcessor) {
  // Three kernels of one shape in a chain: the second and third repeat the first's segment and are
  // reused; the step is unchanged: 3 x (2 + 1) us.
  UniformProcessor p(4, 1000000, 2000000);
  const auto out = run(p, {kernel(0, 4), kernel(1, 4, {0}), kernel(2, 4, {1})}, true);
  EXPECT_EQ(out.kernels[0].simulated, "all");
  EXPECT_EQ(out.kernels[1].simulated, "reused");
  EXPECT_EQ(out.kernels[2].simulated, "reused");
  EXPECT_DOUBLE_EQ(out.step_ns, 9000.0);
}

TEST(Processor, ImplementationsAreChosenByName) {
  auto doc = config::Document::load_string("gpu: {impl: no_such_processor}\n", "hw.yaml");
  test::FakeMemory mem(100.0, 100.0);
  try {
    model::make_processor(doc->root().child("gpu"), mem);
    FAIL() << "an unknown impl was accepted";
  } catch (const config::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("sm_array"), std::string::npos) << e.what();  // names the choices
    EXPECT_EQ(e.path, "gpu.impl");
  }
}
