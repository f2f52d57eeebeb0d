// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

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
