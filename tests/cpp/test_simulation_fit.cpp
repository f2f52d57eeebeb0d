// SPDX-License-Identifier: Apache-2.0
// A workload written with Hopper tiles runs on a GPU with less shared memory per SM: the kernel
// classes that do not fit keep their bytes per stage and drop pipeline stages (CUTLASS does the
// same per architecture), and the run records it.
#include <gtest/gtest.h>

#include "sim/engine/simulation.hpp"

using namespace indexsim;

namespace {
// A 4-layer GLM-5.3-Flash decode step (three linear-attention layers and one DSA layer).
sim::RunResult small_flash(const std::string& hardware) {
  sim::RunSpec s;
  s.hardware = hardware;
  s.workload = "glm-5.3-flash";
  s.step.context = 4096;
  s.fast = true;
  s.sets = {"workload.model.num_layers=4",
            "workload.layers=[{first: 0, last: 3, attention: linear, mlp: dense}, {first: 3, last: 3, attention: dsa, indexer: full}]"};
  return sim::simulate(s);
}
}  // namespace

// The A100 (163 KiB a CTA, no wgmma): GEMMs take CUTLASS's Ampere tiles, the FP8-KV attention
// kernel one raw staging tile instead of two (its two-stage layout needs 164.75 KiB), and every
// kernel of the step launches.
TEST(Simulation, KernelsOfAStepFitAnA100) {
  const auto r = small_flash("a100");
  ASSERT_EQ(r.status, "ok") << r.error;
  for (const auto& k : r.kernels) EXPECT_GE(k.ctas_per_sm, 1) << k.name;
  EXPECT_GT(r.step_ns, 0);
}

TEST(Simulation, KernelsThatFitAreLeftAsWritten) {
  const auto r = small_flash("h200");
  ASSERT_EQ(r.status, "ok") << r.error;
  EXPECT_FALSE(r.config["step"].contains("smem_fitted_to_gpu"));
}
