// SPDX-License-Identifier: Apache-2.0
// What fuzz/fuzz_constraint found in sweep specs' `require:` expressions, kept as tests. Built in the
// main suite and, sanitized, in the fuzz build (fuzz/CMakeLists.txt), so it needs only the spec.
#include <gtest/gtest.h>

#include <string>

#include "sim/sweep/spec.hpp"

using indexsim::sim::sweep::SweepSpec;

namespace {

SweepSpec with_constraint(const std::string& expr) {
  return SweepSpec::load_string(
      "name: t\nbase: {hardware: h200, workload: glm-5, step: {context: 4096}}\n"
      "axes:\n  hardware: [h100, h200]\n  step.context: [1024, 4096]\n"
      "constraints:\n  - \"" + expr + "\"\n",
      "spec.yaml");
}

// `n` copies of `term` joined by `op` (" or ", " and ").
std::string chain(const std::string& term, const std::string& op, size_t n) {
  std::string s;
  s.reserve(n * (term.size() + op.size()));
  for (size_t i = 0; i < n; ++i) s += (i ? op : "") + term;
  return s;
}

// Long enough that the old left-leaning tree of pairs overflowed an 8 MiB stack, in evaluation and
// in the destructor: a million terms in a release build, some 40,000 under AddressSanitizer, whose
// larger frames make the shorter chain enough (and whose slower code makes a million cost seconds).
// GCC says ASan is on with __SANITIZE_ADDRESS__, clang before 17 only through __has_feature.
#if defined(__SANITIZE_ADDRESS__)
#define INDEXSIM_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define INDEXSIM_TEST_ASAN 1
#endif
#endif
#ifdef INDEXSIM_TEST_ASAN
constexpr size_t kLongChain = 100000;
#else
constexpr size_t kLongChain = 1000000;
#endif

}  // namespace

TEST(SweepConstraintFuzz, ALongOrChainParsesEvaluatesAndFreesWithoutOverflowingTheStack) {
  // Every term false but the last, so evaluation visits all of them: only context 4096 is kept.
  const auto s = with_constraint(chain("1 > 2", " or ", kLongChain) + " or step.context == 4096");
  EXPECT_EQ(s.points().size(), 2u);
}

TEST(SweepConstraintFuzz, ALongAndChainParsesEvaluatesAndFreesWithoutOverflowingTheStack) {
  // Every term true but the last, which keeps h200 only.
  const auto s = with_constraint(chain("1 < 2", " and ", kLongChain) + " and hardware == 'h200'");
  EXPECT_EQ(s.points().size(), 2u);
}

TEST(SweepConstraintFuzz, AndBindsTighterThanOrAndTermsAreReadLeftToRight) {
  // h100/1024 or (h200 and 4096): points h100/1024 and h200/4096 of the four.
  EXPECT_EQ(with_constraint("hardware == 'h100' and step.context == 1024 or hardware == 'h200' and step.context == 4096")
                .points()
                .size(),
            2u);
  // not binds tighter than and; parentheses regroup: not h100 and not 1024 → h200/4096 only.
  EXPECT_EQ(with_constraint("not hardware == 'h100' and not step.context == 1024").points().size(), 1u);
  EXPECT_EQ(with_constraint("not (hardware == 'h100' or step.context == 1024)").points().size(), 1u);
  EXPECT_EQ(with_constraint("(hardware == 'h100' or hardware == 'h200') and (step.context > 1024)").points().size(), 2u);
}
