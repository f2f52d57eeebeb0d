// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>
#include <tuple>
#include <utility>

#include "sim/engine/validate.hpp"

using namespace indexsim::sim;

TEST(Validate, MapeIsTheMeanAbsoluteRelativeErrorOverMeasuredKernels) {
  // Kernels: sim 110 vs 100 (+10 %), sim 45 vs 50 (-10 %), sim 80 vs 100 (-20 %), one without a
  // measurement (ignored). MAPE = (0.10 + 0.10 + 0.20) / 3 = 0.1333.
  RunResult r;
  auto add = [&](const char* kind, double sim, double meas) {
    KernelResult k;
    k.kind = kind;
    k.name = kind;
    k.start_ns = 0;
    k.end_ns = sim;
    k.measured_ns = meas;
    r.kernels.push_back(k);
  };
  add("indexer_score", 110, 100);
  add("topk", 45, 50);
  add("topk", 80, 100);
  add("gemm", 10, 0);
  Validation v = validate_run(r);
  ASSERT_EQ(v.kernels.size(), 3u);
  EXPECT_NEAR(v.mape, 0.4 / 3, 1e-12);
  EXPECT_NEAR(v.mape_by_kind["topk"], 0.15, 1e-12);
  EXPECT_NEAR(v.kernels[1].error, -0.10, 1e-12);
}

TEST(Validate, AnEmulatedTraceHasNothingToValidate) {
  RunResult r;
  KernelResult k;
  k.end_ns = 5;
  r.kernels.push_back(k);
  EXPECT_THROW(validate_run(r), std::invalid_argument);
}

// The reference is the in-kernel time where the trace has CTA stamps: kernel 0 ran its CTAs from
// 40 to 140 ns (span 100 ns) inside 200 ns of events, so 110 ns simulated is +10 %; kernel 1 has
// no stamps (a cuBLAS GEMM) and is compared with its events: 45 against 50 is -10 %.
TEST(Validate, TheReferenceIsTheCtaSpanWhereTheTraceHasStampsElseTheEvents) {
  indexsim::trace::TraceData t;
  for (auto [s, e] : {std::pair<uint64_t, uint64_t>{40, 90}, {60, 140}}) {
    indexsim::trace::CtaRecord c;
    c.kernel = 0;
    c.start_ns = s;
    c.end_ns = e;
    t.ctas.push_back(c);
  }
  const auto spans = cta_spans(t);
  ASSERT_EQ(spans.size(), 1u);
  EXPECT_EQ(spans.at(0), 100.0);
  RunResult r;
  for (auto [id, sim, events] : {std::tuple<uint32_t, double, double>{0, 110, 200}, {1, 45, 50}}) {
    KernelResult k;
    k.id = id;
    k.kind = "topk";
    k.end_ns = sim;
    k.measured_ns = events;
    r.kernels.push_back(k);
  }
  const Validation v = validate_run(r, spans);
  ASSERT_EQ(v.kernels.size(), 2u);
  EXPECT_EQ(v.kernels[0].reference, "cta span");
  EXPECT_NEAR(v.kernels[0].error, 0.10, 1e-12);
  EXPECT_EQ(v.kernels[0].events_ns, 200.0);
  EXPECT_EQ(v.kernels[1].reference, "events");
  EXPECT_NEAR(v.kernels[1].error, -0.10, 1e-12);
}
