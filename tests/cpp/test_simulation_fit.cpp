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

TEST(Simulation, HopperTiledKernelsDropStagesToFitAnA100) {
  const auto r = small_flash("a100");
  ASSERT_EQ(r.status, "ok") << r.error;
  const auto& fit = r.config["step"]["smem_fitted_to_gpu"];
  // gemm: 192 KiB in 4 stages = 48 KiB a stage; the A100's 164 KiB hold floor(164 / 48) = 3 stages.
  ASSERT_TRUE(fit.contains("gemm"));
  EXPECT_DOUBLE_EQ(fit["gemm"]["smem_KiB_to"].get<double>(), 3 * 48.0);
  for (const auto& k : r.kernels) EXPECT_GE(k.ctas_per_sm, 1) << k.name;
  EXPECT_GT(r.step_ns, 0);
}

TEST(Simulation, KernelsThatFitAreLeftAsWritten) {
  const auto r = small_flash("h200");
  ASSERT_EQ(r.status, "ok") << r.error;
  EXPECT_FALSE(r.config["step"].contains("smem_fitted_to_gpu"));
}
