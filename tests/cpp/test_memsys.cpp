// SPDX-License-Identifier: Apache-2.0
// The composed memory system: every shipped preset builds every target, the address map, routing,
// the SRAM cache's backing region, pointer-chase latency against reference §1.3, determinism.
#include <gtest/gtest.h>

#include "traces/generators/collective_kernels.hpp"

#include <fstream>
#include <set>
#include <sstream>

#include "models/cxl/cxl.hpp"
#include "models/common/params.hpp"
#include "sim/memsys/bench.hpp"
#include "sim/memsys/memory_system.hpp"
#include "tests/cpp/test_memsys_fixed.hpp"

using indexsim::config::ConfigError;
using indexsim::config::Document;
using indexsim::config::Rule;
using indexsim::model::MemoryRegistry;
using indexsim::model::StatSink;
using indexsim::model::kNever;
using indexsim::sim::BenchPattern;
using indexsim::sim::BenchSpec;
using indexsim::sim::make_target;
using indexsim::sim::run_memory_bench;

// A fixed-latency memory any test config can name (`impl: test_fixed_latency`).
INDEXSIM_REGISTER(MemoryRegistry, "memory", "test_fixed_latency",
                  [](const indexsim::config::Node& n) -> std::unique_ptr<indexsim::model::MemoryDevice> {
                    return std::make_unique<indexsim::test::FixedLatencyMemory>(
                        indexsim::model::ns_to_ps(n.req<double>("latency_ns", Rule::positive())));
                  });

namespace {
const std::vector<std::string> kPresets = {"a100", "h100", "h200", "b200"};

std::shared_ptr<Document> preset(const std::string& name) {
  return Document::load_file(std::string(INDEXSIM_TEST_DATA) + "/../../configs/hardware/" + name + ".yaml");
}

// The mean pointer-chase latency in SM cycles: HBM (footprint = all of the first cached region)
// or L2 hits (a 64 KiB footprint streamed once to warm it, then chased).
double chase_cycles(const std::string& hw, bool l2_hits, uint64_t requests) {
  auto doc = preset(hw);
  auto root = doc->root();
  const double clock_MHz = root.child("gpu").req<double>("sm_clock_MHz");
  auto sys = make_target(root, "system");
  BenchSpec s;
  s.base = indexsim::sim::region_base(root, "hbm");
  s.bytes = 64;
  s.seed = 3;
  s.footprint_bytes = l2_hits ? 64 * 1024 : sys->capacity_bytes();
  if (l2_hits) {
    s.pattern = BenchPattern::Stream;
    s.requests = s.footprint_bytes / s.bytes;
    s.start_ps = run_memory_bench(*sys, s).end_ps;
  }
  s.pattern = BenchPattern::PointerChase;
  s.requests = requests;
  const auto r = run_memory_bench(*sys, s);
  return r.latency_mean_ns * clock_MHz / 1000.0;
}
}  // namespace

TEST(MemorySystem, EveryPresetBuildsEveryTargetAndReadsEveryMemoryKey) {
  for (const auto& hw : kPresets) {
    auto doc = preset(hw);
    auto root = doc->root();
    root.note("name");
    root.note("description");
    root.note("gpu");  // the SM model's section
    indexsim::trace::read_fabric_limits(root);  // the fabric's topology and the collective library's tuning
    const auto targets = indexsim::sim::target_names(root);
    for (const auto& t : targets) {
      auto dev = make_target(root, t);
      ASSERT_NE(dev, nullptr) << hw << " " << t;
      EXPECT_EQ(dev->next_event(), kNever) << hw << " " << t << ": a fresh target must be idle";
      EXPECT_GT(dev->peak_bandwidth_GBps(), 0) << hw << " " << t;
      EXPECT_GT(dev->capacity_bytes(), 0u) << hw << " " << t;
    }
    EXPECT_NO_THROW(doc->check_unused()) << hw;
  }
}

TEST(MemorySystem, RegionIStartsAtIWindows) {
  auto doc = preset("h200");
  auto root = doc->root();
  const auto regions = indexsim::sim::read_regions(root);
  ASSERT_GE(regions.size(), 4u);
  for (size_t i = 0; i < regions.size(); ++i)
    EXPECT_EQ(indexsim::sim::region_base(root, regions[i].name), uint64_t{i} << indexsim::sim::kRegionWindowBits);
}

TEST(MemorySystem, UnknownRegionIsAConfigErrorNamingTheChoices) {
  auto doc = preset("h200");
  try {
    indexsim::sim::region_base(doc->root(), "tape");
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.path, "noc.regions");
    EXPECT_NE(e.rule.find("hbm"), std::string::npos);
  }
  EXPECT_THROW(make_target(doc->root(), "tape"), std::invalid_argument);
}

TEST(MemorySystem, RegionSectionThatDoesNotExistIsAConfigError) {
  std::ifstream in(std::string(INDEXSIM_TEST_DATA) + "/../../configs/hardware/h200.yaml");
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  const auto at = text.find("section: memory.cxl");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 19, "section: memory.cxI");
  auto doc = Document::load_string(text, "h200.yaml");
  try {
    make_target(doc->root(), "system");
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.path, "noc.regions");
    EXPECT_EQ(e.value, "memory.cxI");
  }
}

TEST(MemorySystem, AddressOutsideEveryRegionIsRejected) {
  auto doc = preset("h200");
  auto sys = make_target(doc->root(), "system");
  const uint64_t nowhere = uint64_t{200} << indexsim::sim::kRegionWindowBits;
  EXPECT_THROW(
      {
        sys->try_enqueue({1, nowhere, 64, false, 0}, 0);
        indexsim::test::drain(*sys);
      },
      std::out_of_range);
}

TEST(MemorySystem, EachRegionIsReachedThroughTheSystemAtItsBase) {
  auto doc = preset("h200");
  auto root = doc->root();
  auto sys = make_target(root, "system");
  uint64_t id = 0;
  for (const auto& r : indexsim::sim::read_regions(root))
    ASSERT_TRUE(sys->try_enqueue({id++, indexsim::sim::region_base(root, r.name) + 4096, 64, false, 0}, 0));
  const auto done = indexsim::test::drain(*sys);
  EXPECT_EQ(done.size(), id);
  StatSink sink;
  sys->report(sink, "");
  EXPECT_EQ(sink.get("hbm", "reads"), 1);
  EXPECT_EQ(sink.get("cxl", "reads"), 1);
  EXPECT_EQ(sink.get("sram", "hits"), 1);
  EXPECT_EQ(sink.get("hbf", "reads"), 1);
}

TEST(MemorySystem, SramCacheMissesAreServedByTheBackingRegion) {
  auto doc = preset("h200");
  doc->set("memory.sram.policy=lru");
  auto sram = make_target(doc->root(), "sram");
  ASSERT_TRUE(sram->try_enqueue({1, 4096, 64, false, 0}, 0));
  indexsim::test::drain(*sram);
  ASSERT_TRUE(sram->try_enqueue({2, 4096, 64, false, 0}, 10000000));
  indexsim::test::drain(*sram);
  StatSink sink;
  sram->report(sink, "");
  EXPECT_EQ(sink.get("sram", "misses"), 1);
  EXPECT_EQ(sink.get("sram", "hits"), 1);
  EXPECT_EQ(sink.get("hbm", "reads"), 1);  // the one fill
}

TEST(MemorySystem, CxlIdleReadIsLinkPlusControllerPlusItsDdr5IdleRead) {
  auto doc = preset("h200");
  auto root = doc->root();
  auto dev = indexsim::model::make_memory_device(root.child("memory").child("cxl"));
  auto* x = dynamic_cast<indexsim::model::CxlExpander*>(dev.get());
  ASSERT_NE(x, nullptr);
  const auto& p = x->params();
  auto wire = [&](double b) { return static_cast<indexsim::model::Tick>(std::ceil(b / p.raw_GBps() * 1000.0)); };
  // header (1 slot) up, 2 x port + controller, the DDR5 core's own idle read, line + header down
  const auto expect = wire(p.header_slots_per_line * p.slot_wire_B()) +
                      indexsim::model::ns_to_ps(2 * p.port_latency_ns + p.controller_latency_ns) +
                      x->dram().idle_read_latency_ps() +
                      wire((p.line_B / p.slot_B + p.header_slots_per_line) * p.slot_wire_B());
  EXPECT_EQ(x->idle_read_latency_ps(), expect);
  // §1.6: 170 to 250 ns idle for a direct-attached ASIC expander.
  EXPECT_GE(expect, indexsim::model::ns_to_ps(150));
  EXPECT_LE(expect, indexsim::model::ns_to_ps(250));
}

TEST(MemorySystem, PointerChaseThroughNocL2AndHbmLandsOnReference13) {
  // reference §1.3 (pointer chase, SM cycles): HBM A100 550, H100 700, B200 860; L2 hit A100 210,
  // H100 291, B200 295. H200 shares H100's die (GH200: 281 / 690). Tolerance: 5 %.
  const std::map<std::string, std::pair<double, double>> ref = {
      {"a100", {210, 550}}, {"h100", {291, 700}}, {"h200", {291, 700}}, {"b200", {295, 860}}};
  for (const auto& [hw, cyc] : ref) {
    EXPECT_NEAR(chase_cycles(hw, true, 4000), cyc.first, 0.05 * cyc.first) << hw << " L2 hit";
    EXPECT_NEAR(chase_cycles(hw, false, 4000), cyc.second, 0.05 * cyc.second) << hw << " HBM";
  }
}

TEST(MemorySystem, SameSeedGivesIdenticalStatistics) {
  auto run = [](uint64_t seed) {
    auto doc = preset("h200");
    auto root = doc->root();
    auto sys = make_target(root, "system");
    BenchSpec s;
    s.pattern = BenchPattern::Mix;
    s.write_fraction = 0.3;
    s.requests = 20000;
    s.requesters = 32;
    s.outstanding = 16;
    s.seed = seed;
    s.footprint_bytes = 256ull << 20;
    const auto r = run_memory_bench(*sys, s);
    std::vector<double> v;
    for (const auto& row : r.stats.rows()) v.push_back(row.value);
    v.push_back(static_cast<double>(r.sim_ps));
    v.push_back(r.latency_p99_ns);
    return v;
  };
  EXPECT_EQ(run(5), run(5));
  EXPECT_NE(run(5), run(6));
}

TEST(MemorySystem, NestedDramSectionPicksAnyRegisteredDevice) {
  auto doc = Document::load_string(R"(
cxl: {impl: cxl_type3, lanes: 8, lane_rate_GTps: 32, encoding_efficiency: 0.984615, flit_B: 68,
      slots_per_flit: 4, slot_B: 16, header_slots_per_line: 1, line_B: 64, port_latency_ns: 35,
      controller_latency_ns: 60, queue_depth: 16, dram: {impl: test_fixed_latency, latency_ns: 40}}
)", "t.yaml");
  auto dev = indexsim::model::make_memory_device(doc->root().child("cxl"));
  doc->check_unused();
  EXPECT_NE(dev, nullptr);
}

TEST(MemorySystem, EveryMemoryUnitOfThisFolderSetIsRegistered) {
  const auto names = MemoryRegistry::instance().names();
  const std::set<std::string> have(names.begin(), names.end());
  for (const char* n : {"crossbar", "sectored_l2", "cxl_type3", "npu_sram", "hbf"}) EXPECT_TRUE(have.count(n)) << n;
}
