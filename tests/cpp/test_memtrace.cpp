// SPDX-License-Identifier: Apache-2.0
// Plain memory traces (sim/memtrace): each format reads its own project's example lines, a written
// trace reads back as the same requests, a malformed line names file, line and text; an attention
// trace exported and read back is the same request stream; a replay honours time stamps.
#include <gtest/gtest.h>

#include <fstream>
#include <random>
#include <sstream>

#include <nlohmann/json.hpp>

#include "models/dram/address_map.hpp"
#include "models/dram/dram_params.hpp"
#include "models/common/params.hpp"
#include "sim/memsys/bench.hpp"
#include "sim/memsys/memory_system.hpp"
#include "sim/memtrace/export.hpp"
#include "sim/memtrace/plain_trace.hpp"
#include "sim/memtrace/target.hpp"
#include "sim/memtrace/trace_source.hpp"
#include "tests/cpp/test_trace_util.hpp"
#include "traces/generators/emulate.hpp"
#include "traces/generators/model_shape.hpp"

namespace mt = indexsim::sim::memtrace;
using indexsim::config::Document;
using indexsim::model::Tick;
using indexsim::test::CliResult;
using indexsim::test::run_cli;
using indexsim::test::temp_path;

namespace {

std::string fixture(const std::string& leaf) { return std::string(INDEXSIM_TEST_DATA) + "/../fixtures/memtrace/" + leaf; }
std::string preset_file() { return std::string(INDEXSIM_TEST_DATA) + "/../../configs/hardware/hbm3-stack-6400.yaml"; }

std::shared_ptr<Document> preset(const std::vector<std::string>& sets = {}) {
  auto doc = Document::load_file(preset_file());
  for (const auto& s : sets) doc->set(s);
  return doc;
}

indexsim::model::dram::DramParams preset_params(const std::vector<std::string>& sets = {}) {
  auto doc = preset(sets);
  return indexsim::model::dram::load_dram_params(mt::target_section(doc->root(), "hbm"));
}

std::vector<mt::PlainRequest> read_all(mt::PlainTraceReader& r) {
  std::vector<mt::PlainRequest> out;
  mt::PlainRequest q;
  while (r.next(q)) out.push_back(q);
  return out;
}

bool same(const mt::PlainRequest& a, const mt::PlainRequest& b) {
  return a.addr == b.addr && a.write == b.write && a.cycle == b.cycle;
}

// The error a one-line malformed trace gives, after one good line.
std::string error_of(mt::Format f, const std::string& good, const std::string& bad,
                     const mt::AddressVectorCodec* codec = nullptr) {
  std::istringstream in(good + "\n" + bad + "\n");
  mt::PlainTraceReader r(in, "bad.trace", f, codec);
  try {
    read_all(r);
  } catch (const mt::MemTraceError& e) {
    EXPECT_EQ(e.line, 2u);
    EXPECT_EQ(e.text, bad);
    return e.what();
  }
  ADD_FAILURE() << "no error for '" << bad << "'";
  return "";
}

}  // namespace

TEST(MemTraceFormats, DramSim3ReadsItsExampleTrace) {
  mt::PlainTraceReader r(fixture("dramsim3_example.trace"), mt::Format::DramSim3);
  const auto q = read_all(r);
  ASSERT_EQ(q.size(), 10u);
  EXPECT_EQ(q[0].addr, 0x1FF96FC0u);
  EXPECT_FALSE(q[0].write);
  EXPECT_EQ(q[0].cycle, 160u);
  EXPECT_EQ(q[6].addr, 0x1FF970C0u);
  EXPECT_TRUE(q[6].write);
  EXPECT_EQ(q[6].cycle, 606u);
  EXPECT_EQ(q[9].cycle, 847u);
}

TEST(MemTraceFormats, RamulatorLoadStoreReadsItsExampleTrace) {
  mt::PlainTraceReader r(fixture("ramulator2_example_loadstore.trace"), mt::Format::RamulatorLoadStore);
  const auto q = read_all(r);
  ASSERT_EQ(q.size(), 15u);
  EXPECT_EQ(q[0].addr, 0x100000u);
  EXPECT_FALSE(q[0].write);
  EXPECT_EQ(q[11].addr, 0x1102c0u);  // ST 0x1102c0
  EXPECT_TRUE(q[11].write);
  for (const auto& x : q) EXPECT_EQ(x.cycle, 0u);  // the format has no time
}

TEST(MemTraceFormats, DramSysReadsItsReadmeExampleAndRankTest) {
  mt::PlainTraceReader r(fixture("dramsys_readme_example.stl"), mt::Format::DramSys);
  const auto q = read_all(r);
  ASSERT_EQ(q.size(), 4u);  // two comment lines skipped
  EXPECT_EQ(q[0].cycle, 31u);
  EXPECT_EQ(q[0].addr, 0x400140u);
  EXPECT_FALSE(q[0].write);
  EXPECT_EQ(q[2].cycle, 56u);
  EXPECT_EQ(q[2].addr, 0x7fff8000u);
  EXPECT_TRUE(q[2].write);  // with its data field
  EXPECT_EQ(r.line(), 6u);

  mt::PlainTraceReader rank(fixture("dramsys_ranktest.stl"), mt::Format::DramSys);
  const auto w = read_all(rank);
  ASSERT_EQ(w.size(), 8u);
  EXPECT_EQ(w[4].cycle, 15u);  // `15: write   0x78000000`: spaces instead of tabs
  EXPECT_EQ(w[4].addr, 0x78000000u);
  EXPECT_EQ(w[6].addr, 0xF8000000u);
  for (const auto& x : w) EXPECT_TRUE(x.write);
}

TEST(MemTraceFormats, DramSysDataLengthSizesTheRequest) {
  std::istringstream in("7:\t(32)\tread\t0x40\n");
  mt::PlainTraceReader r(in, "len.stl", mt::Format::DramSys);
  mt::PlainRequest q;
  ASSERT_TRUE(r.next(q));
  EXPECT_EQ(q.bytes, 32u);
  EXPECT_EQ(q.cycle, 7u);
}

TEST(MemTraceFormats, RamulatorReadWriteVectorsNameTheLevelsOfTheHbm3Stack) {
  const mt::AddressVectorCodec codec(preset_params());
  mt::PlainTraceReader r(fixture("ramulator2_readwrite.trace"), mt::Format::RamulatorReadWrite, &codec);
  const auto q = read_all(r);
  ASSERT_EQ(q.size(), 4u);
  EXPECT_EQ(q[0].addr, 0u);
  EXPECT_TRUE(q[2].write);
  // Each address decodes back to the vector it was written as.
  // The fixture has Ramulator 2's 6-level vectors (no rank); IndexSim writes 2.1's 7 levels.
  EXPECT_EQ(codec.to_vector(q[1].addr), (std::vector<uint64_t>{0, 1, 0, 0, 0, 0, 1}));
  EXPECT_EQ(codec.to_vector(q[2].addr), (std::vector<uint64_t>{15, 1, 0, 3, 3, 16383, 31}));
  EXPECT_EQ(codec.to_vector(q[3].addr), (std::vector<uint64_t>{7, 0, 0, 2, 1, 42, 5}));
  // The last address of the stack is the last vector: 8 GiB - 32 B.
  EXPECT_EQ(q[2].addr, (uint64_t{8} << 30) - 32);
}

TEST(MemTraceFormats, SevenLevelVectorsCarryTheStackIdAsRank) {
  // Ramulator 2.1's HBM3 vectors: channel, pseudochannel, rank (SID), bankgroup, bank, row,
  // column. On the H200's 8-high stacks (2 SIDs), rank 1 bank group 2 bank 3 is bank
  // 3 + 4 x (2 + 4 x 1) = 27 of its pseudo-channel, and a 6-level vector counts that bank group as 6.
  auto doc = indexsim::config::Document::load_file(std::string(INDEXSIM_TEST_DATA) + "/../../configs/hardware/h200.yaml");
  const auto p = indexsim::model::dram::load_dram_params(doc->root().child("memory").child("hbm"));
  const mt::AddressVectorCodec codec(p);
  const uint64_t a = codec.to_addr({5, 1, 1, 2, 3, 100, 7});
  const indexsim::model::dram::AddressMap map(p);
  const auto d = map.decode(a);
  EXPECT_EQ(d.pc, 11u);
  EXPECT_EQ(d.bank, 27u);
  EXPECT_EQ(d.row, 100u);
  EXPECT_EQ(d.column, 7u);
  EXPECT_EQ(codec.to_vector(a), (std::vector<uint64_t>{5, 1, 1, 2, 3, 100, 7}));
  EXPECT_EQ(codec.to_addr({5, 1, 6, 3, 100, 7}), a);
  EXPECT_THROW(codec.to_addr({5, 1, 2, 0, 0, 0, 0}), std::invalid_argument);   // rank 2 of 2
}

TEST(MemTraceFormats, MalformedLinesNameFileLineAndText) {
  using F = mt::Format;
  EXPECT_NE(error_of(F::DramSim3, "0x40 READ 1", "0x80 FETCH 2").find("bad.trace:2:"), std::string::npos);
  EXPECT_NE(error_of(F::DramSim3, "0x40 READ 1", "0x80 READ").find("3 fields"), std::string::npos);
  EXPECT_NE(error_of(F::DramSim3, "0x40 READ 1", "0xZZ READ 4").find("'0xZZ READ 4'"), std::string::npos);
  EXPECT_NE(error_of(F::DramSim3, "0x40 READ 1", "0x80 READ 12abc").find("cycle"), std::string::npos);
  EXPECT_NE(error_of(F::RamulatorLoadStore, "LD 0x40", "LOAD 0x80").find("LD or ST"), std::string::npos);
  EXPECT_NE(error_of(F::RamulatorLoadStore, "LD 0x40", "ST 0x80 7").find("2 fields"), std::string::npos);
  EXPECT_NE(error_of(F::DramSys, "1:\tread\t0x0", "x:\tread\t0x40").find("time stamp"), std::string::npos);
  EXPECT_NE(error_of(F::DramSys, "1:\tread\t0x0", "2:\tfetch\t0x40").find("read or write"), std::string::npos);
  EXPECT_NE(error_of(F::DramSys, "1:\tread\t0x0", "2:\tread\t0x40 0x1").find("only a write"), std::string::npos);
  const mt::AddressVectorCodec codec(preset_params());
  EXPECT_NE(error_of(F::RamulatorReadWrite, "R 0,0,0,0,0,0", "R 16,0,0,0,0,0", &codec).find("channel 16"),
            std::string::npos);
  EXPECT_NE(error_of(F::RamulatorReadWrite, "R 0,0,0,0,0,0", "R 0,0,0", &codec).find("7 levels"), std::string::npos);
}

TEST(MemTraceFormats, WrittenTracesReadBackAsTheSameRequests) {
  const mt::AddressVectorCodec codec(preset_params());
  std::mt19937_64 rng(7);
  for (const auto& name : mt::format_names()) {
    const mt::Format f = mt::parse_format(name);
    std::vector<mt::PlainRequest> in;
    for (int i = 0; i < 500; ++i) {
      mt::PlainRequest q;
      q.addr = (rng() % (uint64_t{8} << 30)) / 32 * 32;  // address vectors hold whole bursts
      q.write = rng() % 3 == 0;
      q.cycle = mt::has_timestamps(f) ? rng() % 1000000 : 0;
      in.push_back(q);
    }
    std::stringstream ss;
    mt::PlainTraceWriter w(ss, f, &codec);
    for (const auto& q : in) w.write(q);
    w.close();
    mt::PlainTraceReader r(ss, name, f, &codec);
    const auto out = read_all(r);
    ASSERT_EQ(out.size(), in.size()) << name;
    for (size_t i = 0; i < in.size(); ++i) EXPECT_TRUE(same(in[i], out[i])) << name << " request " << i;
  }
}

TEST(MemTraceAddressMap, EncodeInvertsDecodeForEveryMapping) {
  std::mt19937_64 rng(11);
  for (const auto& m : indexsim::model::dram::AddressMap::mapping_names()) {
    for (const char* interleave : {"32", "256"}) {
      const auto p = preset_params({"memory.hbm.address_mapping=" + m,
                                    std::string("memory.hbm.channel_interleave_bytes=") + interleave});
      const indexsim::model::dram::AddressMap map(p);
      for (int i = 0; i < 2000; ++i) {
        const uint64_t a = (rng() % p.capacity_bytes()) / 32 * 32;
        EXPECT_EQ(map.encode(map.decode(a)), a) << m << " " << interleave << " " << a;
      }
    }
  }
}

TEST(MemTraceAddressMap, RowBankRankColumnChannelIsRamulatorsRoBaRaCoCh) {
  // Ramulator 2 RoBaRaCoCh on its HBM3 levels, from the least significant bit after the 32 B
  // transaction offset: channel (4 bits), column (5), pseudochannel (1), bankgroup (2), bank (2), row.
  const auto p = preset_params();
  ASSERT_EQ(p.address_mapping, "row_bank_rank_column_channel");
  const indexsim::model::dram::AddressMap map(p);
  std::mt19937_64 rng(3);
  for (int i = 0; i < 2000; ++i) {
    const uint64_t a = (rng() % p.capacity_bytes()) / 32 * 32;
    uint64_t x = a >> 5;
    const uint64_t ch = x & 15, col = (x >> 4) & 31, pc = (x >> 9) & 1, bg = (x >> 10) & 3, ba = (x >> 12) & 3,
                   row = x >> 14;
    const auto d = map.decode(a);
    EXPECT_EQ(d.pc, ch * 2 + pc) << a;
    EXPECT_EQ(d.column, col) << a;
    EXPECT_EQ(d.group, bg) << a;
    EXPECT_EQ(d.bank, ba + 4 * bg) << a;
    EXPECT_EQ(d.row, row) << a;
  }
}

namespace {

std::unique_ptr<indexsim::model::MemoryDevice> preset_device(const std::vector<std::string>& sets) {
  auto doc = preset(sets);
  return indexsim::sim::make_target(doc->root(), "hbm");
}

}  // namespace

TEST(MemTraceReplay, WidelySpacedReadsEndAtTheLastTimeStampPlusOneIdleReadLatency) {
  // Eight reads to eight closed banks of different channels, 20000 cycles apart (12.5 us at
  // 0.625 ns): each sees the idle latency tRCD + tCL + burst, and the run ends at
  // 7 x 20000 x 625 ps + idle latency. Refresh off, so no read meets a refreshing bank.
  auto dev = preset_device({"memory.hbm.refresh=none"});
  const Tick idle = dev->idle_read_latency_ps();
  std::stringstream trace;
  for (int i = 0; i < 8; ++i) trace << "0x" << std::hex << i * 32 << " READ " << std::dec << i * 20000 << "\n";
  mt::PlainTraceReader reader(trace, "spaced.trace", mt::Format::DramSim3);
  mt::PlainTraceSource src(reader, 1600, 32);
  indexsim::sim::TraceReplaySpec spec;
  const auto r = indexsim::sim::run_trace_bench(*dev, src, spec);
  EXPECT_EQ(r.requests, 8u);
  EXPECT_EQ(r.sim_ps, Tick{7} * 20000 * 625 + idle);
  EXPECT_DOUBLE_EQ(r.latency_p99_ns, idle / 1000.0);
  EXPECT_DOUBLE_EQ(r.latency_mean_ns, idle / 1000.0);
}

TEST(MemTraceReplay, BackToBackIgnoresTimeStampsAndOneSlotSerialises) {
  // One requester x one outstanding: each read issues when the last completes, so N reads to N
  // closed banks take N x idle latency, whatever their time stamps say.
  auto dev = preset_device({"memory.hbm.refresh=none"});
  const Tick idle = dev->idle_read_latency_ps();
  std::vector<indexsim::sim::TimedRequest> v;
  for (int i = 0; i < 16; ++i) v.push_back({uint64_t(i) * 32, 32, false, Tick(i) * 1000000000});
  indexsim::sim::VectorSource src(v);
  indexsim::sim::TraceReplaySpec spec;
  spec.back_to_back = true;
  const auto r = indexsim::sim::run_trace_bench(*dev, src, spec);
  EXPECT_EQ(r.sim_ps, 16 * idle);
}

TEST(MemTraceReplay, MoreSlotsOverlapRequests) {
  // With 16 slots the same 16 reads (16 channels) run in parallel: one idle latency in all.
  auto dev = preset_device({"memory.hbm.refresh=none"});
  const Tick idle = dev->idle_read_latency_ps();
  std::vector<indexsim::sim::TimedRequest> v;
  for (int i = 0; i < 16; ++i) v.push_back({uint64_t(i) * 32, 32, false, 0});
  indexsim::sim::VectorSource src(v);
  indexsim::sim::TraceReplaySpec spec;
  spec.back_to_back = true;
  spec.requesters = 4;
  spec.outstanding = 4;
  const auto r = indexsim::sim::run_trace_bench(*dev, src, spec);
  EXPECT_EQ(r.sim_ps, idle);
}

namespace {
indexsim::trace::TraceData small_step() {
  indexsim::trace::StepParams p;
  p.phase = indexsim::trace::Phase::decode;
  p.context = 5000;
  p.batch = 2;
  p.queries = 1;
  p.seed = 3;
  const auto shape = indexsim::trace::load_model_shape_file(indexsim::test::workload_file("glm-5.3-flash"), {});
  return indexsim::trace::emulate_step(shape, p, indexsim::test::hopper_limits());
}
}  // namespace

TEST(MemTraceExport, ExportThenImportGivesTheSameRequestStream) {
  const auto t = small_step();
  mt::ExportOptions o;
  o.kernel = "indexer_score";
  o.bytes = 32;
  o.interval_cycles = 3;
  std::vector<mt::PlainRequest> expanded;
  const auto st = mt::expand_accesses(t, o, [&](const mt::PlainRequest& r) { expanded.push_back(r); });
  ASSERT_GT(st.requests, 0u);
  ASSERT_EQ(st.requests, expanded.size());
  // Every byte the selected kernels read is covered: requests x 32 B >= their read bytes.
  uint64_t read_bytes = 0;
  for (const auto& a : t.accesses)
    for (const auto& k : t.kernels)
      if (k.id == a.kernel && k.kind == indexsim::trace::KernelKind::indexer_score && !a.write) read_bytes += a.total_bytes();
  EXPECT_GE(st.reads * 32, read_bytes);
  const mt::AddressVectorCodec codec(preset_params());
  for (const auto& name : mt::format_names()) {
    const mt::Format f = mt::parse_format(name);
    std::stringstream ss;
    mt::PlainTraceWriter w(ss, f, &codec);
    mt::expand_accesses(t, o, [&w](const mt::PlainRequest& r) { w.write(r); });
    w.close();
    mt::PlainTraceReader r(ss, name, f, &codec);
    const auto back = read_all(r);
    ASSERT_EQ(back.size(), expanded.size()) << name;
    for (size_t i = 0; i < back.size(); ++i) {
      ASSERT_EQ(back[i].addr, expanded[i].addr) << name << " request " << i;
      ASSERT_EQ(back[i].write, expanded[i].write) << name << " request " << i;
      ASSERT_EQ(back[i].cycle, mt::has_timestamps(f) ? i * 3 : 0) << name << " request " << i;
    }
  }
}

// A GEMM exports as the SM model issues it: every CTA's stores (its output tile) after all of its
// loads, and its loads in K steps (the first two requests of a CTA: A's first K block, then not A's
// second, since each row's next K block waits for the next step).
TEST(MemTraceExport, AGemmsStoresFollowItsLoadsAndItsLoadsGoInKSteps) {
  const auto t = indexsim::trace::emulate_gemm(256, 256, 1024, indexsim::trace::Precision::fp8, indexsim::test::hopper_limits());
  ASSERT_TRUE(t.kernels[0].stores_after_math);
  ASSERT_EQ(t.kernels[0].load_steps, 8u);
  mt::ExportOptions o;
  o.bytes = 128;
  std::vector<mt::PlainRequest> reqs;
  mt::expand_accesses(t, o, [&](const mt::PlainRequest& r) { reqs.push_back(r); });
  const uint64_t ctas = t.kernels[0].cta_count();
  ASSERT_EQ(reqs.size() % ctas, 0u);  // all CTAs move the same bytes here
  const size_t per_cta = reqs.size() / ctas;
  for (uint64_t c = 0; c < ctas; ++c) {
    bool writing = false;
    for (size_t i = c * per_cta; i < (c + 1) * per_cta; ++i) {
      if (reqs[i].write) writing = true;
      EXPECT_EQ(reqs[i].write, writing) << "CTA " << c << " request " << i << ": a load after a store";
    }
    EXPECT_TRUE(writing) << "CTA " << c;
    // Step 0 reads 128 B of every A row, so the CTA's second request is A's next row, 1024 B on.
    EXPECT_EQ(reqs[c * per_cta + 1].addr, reqs[c * per_cta].addr + 1024) << "CTA " << c;
  }
}

TEST(MemTraceExport, LimitAndLayerSelectTheRequests) {
  const auto t = small_step();
  mt::ExportOptions o;
  o.limit = 100;
  uint64_t n = 0;
  EXPECT_EQ(mt::expand_accesses(t, o, [&n](const mt::PlainRequest&) { ++n; }).requests, 100u);
  EXPECT_EQ(n, 100u);
  o.limit = 0;
  o.have_layer = true;
  o.layer = 100000;
  EXPECT_THROW(mt::expand_accesses(t, o, [](const mt::PlainRequest&) {}), std::invalid_argument);
}

TEST(MemTraceCli, BenchReplaysADramSim3TraceAndExportFeedsIt) {
  const std::string itr = temp_path("step.itr");
  CliResult r = run_cli("trace gen --workload " + indexsim::test::workload_file("glm-5.3-flash") +
                        " --phase decode --context 5000 --batch 2 --queries 1 --seed 3 -o " + itr);
  ASSERT_EQ(r.status, 0) << r.output;
  const std::string out = temp_path("step.dramsim3");
  r = run_cli("trace export " + itr + " --format dramsim3 -o " + out + " --kernel indexer_score --bytes 32 --hardware " +
              preset_file());
  ASSERT_EQ(r.status, 0) << r.output;
  r = run_cli("bench memory --hardware " + preset_file() + " --trace " + out +
              " --format dramsim3 --bytes 32 --back-to-back --json");
  ASSERT_EQ(r.status, 0) << r.output;
  const auto j = nlohmann::json::parse(r.output.substr(r.output.find('{')));
  EXPECT_GT(j["requests"].get<uint64_t>(), 0u);
  EXPECT_GT(j["bandwidth_GBps"].get<double>(), 0);
  EXPECT_EQ(j["timing"], "back-to-back");
  EXPECT_TRUE(j["latency_sm_cycles"].is_null());  // a stand-alone memory preset has no SM clock
}

TEST(MemTraceCli, AMalformedTraceStopsTheBenchNamingTheLine) {
  const std::string bad = temp_path("bad.trace");
  {
    std::ofstream f(bad);
    f << "0x40 READ 1\n0x80 READ 2\nnonsense\n";
  }
  const CliResult r = run_cli("bench memory --hardware " + preset_file() + " --trace " + bad + " --format dramsim3");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.output.find(bad + ":3:"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("'nonsense'"), std::string::npos) << r.output;
}
