// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include "sim/workload/workload.hpp"

using indexsim::sim::Workload;
using indexsim::trace::KernelRecord;

namespace {
KernelRecord k(uint32_t id, std::vector<uint32_t> deps) {
  KernelRecord r;
  r.id = id;
  r.name = "k" + std::to_string(id);
  r.deps = std::move(deps);
  return r;
}
}  // namespace

TEST(WorkloadDag, RemovingAKernelKeepsTheOrderOfItsNeighbours) {
  // a → b → c; removing b must leave a → c.
  Workload w({}, {}, {k(0, {}), k(1, {0}), k(2, {1})}, {});
  w.remove_kernel(1);
  EXPECT_TRUE(w.has_edge(0, 2));
  std::vector<KernelRecord> ks;
  std::vector<indexsim::trace::AccessRecord> as;
  w.lower(ks, as);
  ASSERT_EQ(ks.size(), 2u);
  EXPECT_EQ(ks[1].deps, std::vector<uint32_t>{0});
}

TEST(WorkloadDag, ACycleIsAnErrorNotAHang) {
  Workload w({}, {}, {k(0, {}), k(1, {0})}, {});
  w.add_edge(1, 0);
  EXPECT_THROW(w.topological_order(), std::runtime_error);
}

TEST(WorkloadDag, AddedKernelsGetFreshIdsAndComeAfterTheirPredecessors) {
  Workload w({}, {}, {k(0, {}), k(1, {0})}, {});
  KernelRecord extra;
  extra.name = "extra";
  const size_t v = w.add_kernel(extra, {});
  w.add_edge(v, 0);  // the new kernel must run before kernel 0
  std::vector<KernelRecord> ks;
  std::vector<indexsim::trace::AccessRecord> as;
  w.lower(ks, as);
  ASSERT_EQ(ks.size(), 3u);
  EXPECT_EQ(ks[0].name, "extra");
  EXPECT_EQ(ks[0].id, 2u);
  EXPECT_EQ(ks[1].deps, std::vector<uint32_t>{2});
}

TEST(WorkloadDag, UnknownDependenceIsAnError) {
  EXPECT_THROW(Workload({}, {}, {k(0, {7})}, {}), std::runtime_error);
}
