// SPDX-License-Identifier: Apache-2.0
// Sweep specs: axes, ranges, constraints, the runs they expand to, and the errors that name the path.
#include <gtest/gtest.h>

#include "models/common/params.hpp"
#include "sim/sweep/runner.hpp"
#include "sim/sweep/spec.hpp"

using namespace indexsim::sim::sweep;

namespace {

const char* kBase = R"(
name: t
base:
  hardware: h200
  workload: glm-5
  step: {context: 4096}
  fast: true
)";

SweepSpec parse(const std::string& rest) { return SweepSpec::load_string(std::string(kBase) + rest, "spec.yaml"); }

std::string error_of(const std::string& rest) {
  try {
    parse(rest);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(SweepSpec, ProductHasOnePointPerCombinationLastAxisFastest) {
  // |points| = Π |values| = 2 × 3; order: nested loops in file order.
  const auto s = parse("axes:\n  hardware: [h100, h200]\n  step.context: {values: [1024, 2048, 4096]}\n");
  const auto p = s.points();
  ASSERT_EQ(p.size(), 6u);
  EXPECT_EQ(p[0], (Assignment{{"hardware", "h100"}, {"step.context", "1024"}}));
  EXPECT_EQ(p[1], (Assignment{{"hardware", "h100"}, {"step.context", "2048"}}));
  EXPECT_EQ(p[5], (Assignment{{"hardware", "h200"}, {"step.context", "4096"}}));
}

TEST(SweepSpec, ArithmeticRangeIncludesItsEnd) {
  // from + i·step for i = 0 … floor((to − from)/step): 4, 5, 6; and 0.1 steps without drift.
  EXPECT_EQ(expand_range(4, 6, 1, 0), (std::vector<std::string>{"4", "5", "6"}));
  EXPECT_EQ(expand_range(0.1, 0.3, 0.1, 0), (std::vector<std::string>{"0.1", "0.2", "0.3"}));
  EXPECT_EQ(expand_range(6, 4, -1, 0), (std::vector<std::string>{"6", "5", "4"}));
}

TEST(SweepSpec, GeometricRangeMultipliesByTheFactor) {
  // from · factor^i ≤ to: 16K · 2^i up to 1M is 7 values.
  const auto v = expand_range(16384, 1048576, 0, 2);
  ASSERT_EQ(v.size(), 7u);
  EXPECT_EQ(v.front(), "16384");
  EXPECT_EQ(v.back(), "1048576");
}

TEST(SweepSpec, RequireExpressionKeepsOnlyMatchingPoints) {
  // 2 × 3 points; dropped: h100 with context > 2048 (one point) → 5.
  const auto s = parse(
      "axes:\n  hardware: [h100, h200]\n  step.context: [1024, 2048, 4096]\n"
      "constraints:\n  - \"hardware == 'h200' or step.context <= 2048\"\n");
  EXPECT_EQ(s.points().size(), 5u);
}

TEST(SweepSpec, SkipListDropsPartialAssignments) {
  // A partial assignment drops every point that matches it: {hardware: h100} drops 3, the full one 1.
  const auto s = parse(
      "axes:\n  hardware: [h100, h200, b200]\n  step.context: [1024, 2048, 4096]\n"
      "constraints:\n  - skip: [{hardware: h100}, {hardware: b200, step.context: 4096.0}]\n");
  const auto p = s.points();
  EXPECT_EQ(p.size(), 9u - 3u - 1u);
  for (const auto& a : p) EXPECT_NE(a[0].second, "h100");
}

TEST(SweepSpec, PointBecomesRunSpecAndRunArguments) {
  const auto s = parse("axes:\n  hardware.memory.hbm.stacks: [4]\n  step.context: [1024]\n  techniques: [indexpool]\n");
  const auto a = s.points().at(0);
  const auto r = s.run_spec(a);
  EXPECT_EQ(r.step.context, 1024u);
  EXPECT_EQ(r.techniques, "indexpool");
  ASSERT_EQ(r.sets.size(), 1u);
  EXPECT_EQ(r.sets[0], "hardware.memory.hbm.stacks=4");
  const auto args = s.run_args(a);
  EXPECT_NE(std::find(args.begin(), args.end(), "--fast"), args.end());
  EXPECT_NE(std::find(args.begin(), args.end(), "hardware.memory.hbm.stacks=4"), args.end());
}

TEST(SweepSpec, UnknownAxisPathIsAnErrorNamingIt) {
  const std::string e = error_of("axes:\n  steps.context: [1, 2]\n");
  EXPECT_NE(e.find("axes.steps.context"), std::string::npos) << e;
  EXPECT_NE(e.find("unknown axis path"), std::string::npos) << e;
}

TEST(SweepSpec, ConstraintNamingNoAxisIsAnError) {
  const std::string e = error_of("axes:\n  hardware: [h100]\nconstraints:\n  - \"hardwear == 'h100'\"\n");
  EXPECT_NE(e.find("hardwear"), std::string::npos) << e;
  EXPECT_NE(e.find("constraints.0"), std::string::npos) << e;
}

TEST(SweepSpec, RangeNeedsExactlyOneOfStepAndFactor) {
  EXPECT_NE(error_of("axes:\n  step.context: {from: 1, to: 4}\n").find("exactly one of step and factor"),
            std::string::npos);
  EXPECT_NE(error_of("axes:\n  step.context: {from: 4, to: 1, factor: 2}\n").find("factor"), std::string::npos);
  EXPECT_NE(error_of("axes:\n  step.context: []\n").find("at least one value"), std::string::npos);
}

TEST(SweepSpec, MisspeltSpecKeyIsAnError) {
  const std::string e = error_of("axis:\n  hardware: [h100]\n");
  EXPECT_NE(e.find("axis"), std::string::npos) << e;
  EXPECT_NE(e.find("unknown key"), std::string::npos) << e;
}

TEST(SweepPlan, KeysAreTheHashOfTheResolvedConfig) {
  // key = stable_hash(resolve(run_spec(point))): the key the store uses for the same run.
  const auto s = parse("axes:\n  step.context: [1024, 2048]\n");
  const auto runs = plan(s, "");
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].key, indexsim::config::stable_hash(indexsim::sim::resolve(s.run_spec(s.points()[0]))));
  EXPECT_NE(runs[0].key, runs[1].key);
  EXPECT_FALSE(runs[0].done);
}

TEST(SweepPlan, AxisNamingNoConfigKeyFailsBeforeAnyRunNamingTheAxis) {
  const auto s = parse("axes:\n  hardware.memory.hbm.stackz: [4]\n");
  try {
    plan(s, "");
    FAIL() << "expected an error";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("hardware.memory.hbm.stackz"), std::string::npos) << e.what();
  }
}

TEST(SweepPlan, SelectPicksPointsByIndex) {
  const auto s = parse("axes:\n  step.context: [1024, 2048, 4096]\n");
  const auto runs = plan(s, "", {2});
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].index, 2u);
  EXPECT_EQ(runs[0].spec.step.context, 4096u);
  EXPECT_THROW(plan(s, "", {3}), std::invalid_argument);
}

TEST(SweepSpec, SharedSegmentsGroupPointsThatDifferOnlyInContextAndTechniques) {
  // A point's seed: the first point (spec order) with the same values on every other axis; the
  // first point whose seed is skipped by a constraint is its group's seed itself.
  const auto s = parse(
      "share_segments: true\n"
      "axes:\n  hardware: [h100, h200]\n  techniques: [baseline, indexshare]\n  techniques.index_share.enabled: [true]\n"
      "  step.context: [1024, 2048]\n  step.batch: [1, 2]\n"
      "constraints:\n  - skip: [{hardware: h200, techniques: baseline, step.context: 1024}]\n");
  EXPECT_TRUE(s.share_segments);
  const auto p = s.points();
  const auto seeds = s.segment_seeds(p);
  ASSERT_EQ(seeds.size(), p.size());
  const auto value = [](const Assignment& a, const std::string& path) {
    for (const auto& [k, v] : a)
      if (k == path) return v;
    return std::string();
  };
  for (size_t i = 0; i < p.size(); ++i) {
    const size_t g = seeds[i];
    ASSERT_LE(g, i);
    EXPECT_EQ(seeds[g], g);  // a seed is its own
    EXPECT_EQ(value(p[g], "hardware"), value(p[i], "hardware"));
    EXPECT_EQ(value(p[g], "step.batch"), value(p[i], "step.batch"));
    for (size_t j = 0; j < g; ++j)  // no earlier point would do
      EXPECT_FALSE(value(p[j], "hardware") == value(p[i], "hardware") && value(p[j], "step.batch") == value(p[i], "step.batch"));
  }
  // h100: its seed is (baseline, 1024); h200: (baseline, 1024) is skipped, so (baseline, 2048).
  EXPECT_EQ(value(p[seeds[p.size() - 1]], "step.context"), "2048");
  EXPECT_EQ(value(p[seeds[0]], "step.context"), "1024");
  EXPECT_FALSE(parse("axes:\n  hardware: [h100]\n").share_segments);  // off unless asked
}
