// SPDX-License-Identifier: Apache-2.0
// The .itr format: every record type survives a round trip; every kind of damage is reported with
// the file, the byte offset and the block; the reader's memory stays at one block.
#include <cmath>
#include <gtest/gtest.h>

#include <filesystem>

#include "tests/cpp/test_trace_util.hpp"
#include "traces/codec.hpp"
#include "traces/trace_data.hpp"
#include "traces/trace_io.hpp"

using namespace indexsim::trace;
using indexsim::test::file_bytes;
using indexsim::test::temp_path;
using indexsim::test::write_bytes;

namespace {

TraceData sample_trace() {
  TraceData t;
  t.metadata = {{"source", "captured"}, {"device", "H200"}};
  t.tensors.push_back({3, "L1.kv_cache", TensorClass::kv_cache, 1, 123456789012ull});
  KernelRecord k;
  k.id = 7;
  k.name = "L1.sparse_attn";
  k.kind = KernelKind::sparse_attn;
  k.layer = 1;
  k.stream = 2;
  k.grid = {4, 5, 6};
  k.block = {384, 1, 1};
  k.smem_bytes = 200 * 1024;
  k.regs_per_thread = 168;
  k.flops[static_cast<int>(Precision::bf16)] = 1.5e12;
  k.flops[static_cast<int>(Precision::fp8)] = 0.25;
  k.double_buffered = false;
  k.measured_ns = 98765;
  k.deps = {1, 5, 6};
  k.wait_ns = 4321;
  t.kernels.push_back(k);
  AccessRecord s;
  s.kernel = 7;
  s.cta_first = 10;
  s.cta_count = 20;
  s.write = true;
  s.tensor = 3;
  s.base = 1ull << 40;
  s.cta_stride_bytes = -8448;
  s.elem_bytes = 132;
  s.count = 64;
  s.stride_bytes = -132;
  t.accesses.push_back(s);
  AccessRecord g;
  g.kernel = 7;
  g.kind = AccessRecord::Kind::gather;
  g.tensor = 3;
  g.base = 4096;
  g.row_bytes = 656;
  g.row_pitch_bytes = 656;
  g.rows = {0, 1, 2, 1000000, 17, UINT32_MAX, 5};  // descending steps and the extremes too
  t.accesses.push_back(g);
  t.ctas.push_back({7, 3, 131, 1000, 2500});
  return t;
}

std::string write_sample(const std::string& leaf = "t.itr") {
  const std::string p = temp_path(leaf);
  write_trace(sample_trace(), p);
  return p;
}

// The message of the TraceError that reading the whole file throws ("" if none).
std::string read_error(const std::string& p) {
  try {
    read_trace(p);
  } catch (const TraceError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(TraceIo, EveryRecordTypeSurvivesARoundTrip) {
  const TraceData a = sample_trace();
  const TraceData b = read_trace(write_sample());
  EXPECT_EQ(b.metadata["source"], "captured");
  EXPECT_EQ(b.metadata["format_version"], kFormatVersion);  // added by the writer
  EXPECT_TRUE(b.metadata.contains("code_version"));
  ASSERT_EQ(b.tensors.size(), 1u);
  EXPECT_EQ(b.tensors[0].name, a.tensors[0].name);
  EXPECT_EQ(b.tensors[0].bytes, a.tensors[0].bytes);
  EXPECT_EQ(b.tensors[0].cls, TensorClass::kv_cache);
  ASSERT_EQ(b.kernels.size(), 1u);
  const auto &ka = a.kernels[0], &kb = b.kernels[0];
  EXPECT_EQ(kb.name, ka.name);
  EXPECT_EQ(kb.kind, ka.kind);
  EXPECT_EQ(kb.grid, ka.grid);
  EXPECT_EQ(kb.block, ka.block);
  EXPECT_EQ(kb.smem_bytes, ka.smem_bytes);
  EXPECT_EQ(kb.regs_per_thread, ka.regs_per_thread);
  EXPECT_EQ(kb.flops, ka.flops);
  EXPECT_EQ(kb.double_buffered, ka.double_buffered);
  EXPECT_EQ(kb.measured_ns, ka.measured_ns);
  EXPECT_EQ(kb.wait_ns, ka.wait_ns);
  EXPECT_EQ(kb.deps, ka.deps);
  EXPECT_EQ(kb.stream, ka.stream);
  ASSERT_EQ(b.accesses.size(), 2u);
  const auto &s = b.accesses[0], &g = b.accesses[1];
  EXPECT_EQ(s.cta_first, 10u);
  EXPECT_EQ(s.cta_count, 20u);
  EXPECT_TRUE(s.write);
  EXPECT_EQ(s.base, 1ull << 40);
  EXPECT_EQ(s.cta_stride_bytes, -8448);
  EXPECT_EQ(s.stride_bytes, -132);
  EXPECT_EQ(s.total_bytes(), 20u * 64 * 132);
  EXPECT_EQ(g.kind, AccessRecord::Kind::gather);
  EXPECT_EQ(g.rows, a.accesses[1].rows);
  EXPECT_EQ(g.row_bytes, 656u);
  ASSERT_EQ(b.ctas.size(), 1u);
  EXPECT_EQ(b.ctas[0].sm, 131u);
  EXPECT_EQ(b.ctas[0].end_ns, 2500u);
}

// Format version 2 appends wait_ns to a kernel block; a version-1 block (without it) reads as 0.
TEST(TraceIo, AVersionOneKernelBlockReadsWithoutAWait) {
  KernelRecord k;
  k.name = "L0.all_reduce";
  k.kind = KernelKind::all_reduce;
  k.deps = {3};
  k.wait_ns = 15000;
  PayloadWriter w;
  encode(Record(k), w);
  const auto& full = w.bytes();
  PayloadReader r2(full.data(), full.size());
  EXPECT_EQ(std::get<KernelRecord>(decode(BlockType::kernel, r2)).wait_ns, 15000u);
  PayloadReader r1(full.data(), full.size() - 23);  // as version 1 wrote it: without wait_ns and all after it
  const auto v1 = std::get<KernelRecord>(decode(BlockType::kernel, r1));
  EXPECT_EQ(v1.wait_ns, 0u);
  EXPECT_EQ(v1.deps, k.deps);
}

// Version 3 appends simt_overlaps_mma; a version-2 block (without it) reads as overlapping, the
// behaviour it was written for.
TEST(TraceIo, AVersionTwoKernelBlockReadsAsOverlappingPipes) {
  KernelRecord k;
  k.name = "L0.sparse_attn";
  k.kind = KernelKind::sparse_attn;
  k.wait_ns = 7;
  k.simt_overlaps_mma = false;
  PayloadWriter w;
  encode(Record(k), w);
  const auto& full = w.bytes();
  PayloadReader r3(full.data(), full.size() - 14);  // version 3: without stores_after_math, load_steps, warp_instructions, persistent
  EXPECT_FALSE(std::get<KernelRecord>(decode(BlockType::kernel, r3)).simt_overlaps_mma);
  PayloadReader r2(full.data(), full.size() - 15);
  const auto v2 = std::get<KernelRecord>(decode(BlockType::kernel, r2));
  EXPECT_TRUE(v2.simt_overlaps_mma);
  EXPECT_EQ(v2.wait_ns, 7u);
}

// Version 4 appends stores_after_math and load_steps; a version-3 block (without them) reads as
// writing beside its math and loading one record after another, the behaviour it was written for.
TEST(TraceIo, AVersionThreeKernelBlockReadsAsStoringBesideItsMath) {
  KernelRecord k;
  k.name = "L0.q_proj";
  k.kind = KernelKind::gemm;
  k.simt_overlaps_mma = false;
  k.stores_after_math = true;
  k.load_steps = 56;
  PayloadWriter w;
  encode(Record(k), w);
  const auto& full = w.bytes();
  PayloadReader r4(full.data(), full.size() - 9);  // version 4: without warp_instructions, persistent
  const auto v4 = std::get<KernelRecord>(decode(BlockType::kernel, r4));
  EXPECT_TRUE(v4.stores_after_math);
  EXPECT_EQ(v4.load_steps, 56u);
  EXPECT_FALSE(v4.simt_overlaps_mma);
  PayloadReader r3(full.data(), full.size() - 14);
  const auto v3 = std::get<KernelRecord>(decode(BlockType::kernel, r3));
  EXPECT_FALSE(v3.stores_after_math);
  EXPECT_EQ(v3.load_steps, 0u);
  EXPECT_FALSE(v3.simt_overlaps_mma);
}

// Version 6 appends persistent; a version-5 block (one byte shorter) reads as not persistent.
TEST(TraceIo, PersistentRoundTripsAndAVersionFiveBlockReadsAsNotPersistent) {
  KernelRecord k;
  k.name = "gemm";
  k.warp_instructions = 5.0;
  k.persistent = true;
  PayloadWriter w;
  encode(Record(k), w);
  const auto& full = w.bytes();
  PayloadReader r6(full.data(), full.size());
  EXPECT_TRUE(std::get<KernelRecord>(decode(BlockType::kernel, r6)).persistent);
  PayloadReader r5(full.data(), full.size() - 1);
  const auto v5 = std::get<KernelRecord>(decode(BlockType::kernel, r5));
  EXPECT_FALSE(v5.persistent);
  EXPECT_EQ(v5.warp_instructions, 5.0);
}

// Version 5 appends warp_instructions; a version-4 block reads as 0 (unknown), and a negative or
// non-finite count is refused with the kernel's name.
TEST(TraceIo, WarpInstructionsRoundTripAndAVersionFourBlockReadsAsUnknown) {
  KernelRecord k;
  k.name = "L3.topk_sort";
  k.kind = KernelKind::topk;
  k.load_steps = 3;
  k.warp_instructions = 157472.0;
  PayloadWriter w;
  encode(Record(k), w);
  const auto& full = w.bytes();
  PayloadReader r5(full.data(), full.size());
  EXPECT_EQ(std::get<KernelRecord>(decode(BlockType::kernel, r5)).warp_instructions, 157472.0);
  PayloadReader r4(full.data(), full.size() - 9);
  const auto v4 = std::get<KernelRecord>(decode(BlockType::kernel, r4));
  EXPECT_EQ(v4.warp_instructions, 0.0);
  EXPECT_EQ(v4.load_steps, 3u);
  k.warp_instructions = -1;
  PayloadWriter bad;
  encode(Record(k), bad);
  PayloadReader rb(bad.bytes().data(), bad.bytes().size());
  try {
    decode(BlockType::kernel, rb);
    FAIL() << "a negative instruction count was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("L3.topk_sort: warp_instructions"), std::string::npos) << e.what();
  }
}

TEST(TraceIo, AFlippedPayloadByteFailsTheCrcNamingBlockAndOffset) {
  const std::string p = write_sample();
  auto bytes = file_bytes(p);
  bytes[bytes.size() - 3] ^= 0x40;  // inside the last block (the CTA record)
  write_bytes(p, bytes);
  try {
    read_trace(p);
    FAIL() << "a corrupt block was accepted";
  } catch (const TraceError& e) {
    EXPECT_EQ(e.file, p);
    EXPECT_EQ(e.block, 4);  // blocks: tensor, kernel, 2 accesses, CTA
    EXPECT_EQ(e.offset, bytes.size() - 9 - 28);  // the CTA block: 9-byte block header + 28-byte payload
    EXPECT_NE(e.reason.find("CRC mismatch"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("block 4 at byte offset"), std::string::npos) << e.what();
  }
}

TEST(TraceIo, AFlippedHeaderByteFailsTheHeaderCrc) {
  const std::string p = write_sample();
  auto bytes = file_bytes(p);
  bytes[20] ^= 0x01;  // inside the JSON metadata
  write_bytes(p, bytes);
  EXPECT_NE(read_error(p).find("header CRC mismatch"), std::string::npos);
}

TEST(TraceIo, ATruncatedFileIsReportedAsTruncated) {
  const std::string p = write_sample();
  auto bytes = file_bytes(p);
  bytes.resize(bytes.size() - 5);
  write_bytes(p, bytes);
  const std::string msg = read_error(p);
  EXPECT_NE(msg.find("truncated block"), std::string::npos) << msg;
  EXPECT_NE(msg.find("block 4"), std::string::npos) << msg;
  bytes.resize(12);
  write_bytes(p, bytes);
  EXPECT_NE(read_error(p).find("truncated header"), std::string::npos);
}

TEST(TraceIo, AWrongMagicSaysItIsNotATrace) {
  const std::string p = write_sample();
  auto bytes = file_bytes(p);
  bytes[0] = 'X';
  write_bytes(p, bytes);
  const std::string msg = read_error(p);
  EXPECT_NE(msg.find("wrong magic"), std::string::npos) << msg;
  EXPECT_NE(msg.find("byte offset 0"), std::string::npos) << msg;
}

TEST(TraceIo, ANewerVersionNamesBothVersions) {
  const std::string p = write_sample();
  auto bytes = file_bytes(p);
  bytes[8] = static_cast<uint8_t>(kFormatVersion + 1);  // u32 little-endian version after the magic
  // Re-seal the header so that only the version is "wrong", as a genuine newer file would be.
  const uint32_t json_len = bytes[12] | bytes[13] << 8 | bytes[14] << 16 | uint32_t(bytes[15]) << 24;
  const uint32_t crc = crc32_of(bytes.data(), 16 + json_len);
  for (int i = 0; i < 4; ++i) bytes[16 + json_len + i] = static_cast<uint8_t>(crc >> (8 * i));
  write_bytes(p, bytes);
  const std::string msg = read_error(p);
  EXPECT_NE(msg.find("version " + std::to_string(kFormatVersion + 1)), std::string::npos) << msg;
  EXPECT_NE(msg.find("reader's version " + std::to_string(kFormatVersion)), std::string::npos) << msg;
}

TEST(TraceIo, MetadataWithoutSourceIsRefused) {
  EXPECT_THROW(Writer(temp_path("x.itr"), {{"device", "H200"}}), TraceError);
}

TEST(TraceIo, AnUnclosedWriterLeavesNoFile) {
  const std::string p = temp_path("partial.itr");
  {
    Writer w(p, {{"source", "emulated"}});
    w.write(sample_trace().tensors[0]);
  }
  EXPECT_FALSE(std::filesystem::exists(p));
  EXPECT_FALSE(std::filesystem::exists(p + ".tmp"));
}

// Memory bound: 8,000 gather records of 2,048 rows (≈ 25 MB of rows in memory if read whole) are
// streamed with the reader's buffer never larger than the largest single block.
TEST(TraceIo, TheReaderHoldsOneBlockWhateverTheFileSize) {
  const std::string p = temp_path("big.itr");
  AccessRecord g;
  g.kind = AccessRecord::Kind::gather;
  g.row_bytes = 656;
  g.row_pitch_bytes = 656;
  for (uint32_t i = 0; i < 2048; ++i) g.rows.push_back(i * 97);
  uint64_t largest = 0;
  {
    Writer w(p, {{"source", "emulated"}});
    PayloadWriter pw;
    encode(g, pw);
    largest = pw.bytes().size();
    for (int i = 0; i < 8000; ++i) w.write(g);
    w.close();
  }
  Reader r(p);
  uint64_t n = 0;
  while (r.next()) ++n;
  EXPECT_EQ(n, 8000u);
  EXPECT_EQ(r.max_block_bytes(), largest);
  EXPECT_GT(std::filesystem::file_size(p), 4000 * largest);
}

TEST(TraceIo, EveryKernelKindHasOneNameAndAnUnknownNameIsAnError) {
  // The names are what a trace stores: each parses back to its kind; a name outside the
  // enumeration (a corrupt or foreign trace) is refused with the name and the choices.
  for (KernelKind k : {KernelKind::gemm, KernelKind::indexer_score, KernelKind::topk, KernelKind::sparse_attn,
                       KernelKind::kv_prefetch, KernelKind::pool_gate, KernelKind::prune_proj, KernelKind::test})
    EXPECT_EQ(kernel_kind(to_string(k)), k);
  try {
    kernel_kind("sparse_atn");
    FAIL() << "a misspelt kind was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'sparse_atn'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("sparse_attn"), std::string::npos) << e.what();
  }
}

TEST(TraceCodec, AGatherRowDeltaThatLeavesTheRowRangeIsRefusedBeforeTheSum) {
  // Row indices are delta-coded (zigzag varints) and must stay in [0, 2^32). A corrupt delta of
  // +2^63-1 after a row near 2^32 used to overflow the signed running sum (undefined behaviour);
  // now the delta is checked against the room left: invalid_argument, for any delta.
  auto zigzag = [](int64_t v) { return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63); };
  for (const int64_t bad : {INT64_MAX, INT64_MIN, int64_t(20), int64_t(-4294967290)}) {
    PayloadWriter w;
    w.u32(0);      // kernel
    w.u32(0);      // cta_first
    w.u32(1);      // cta_count
    w.u8(1);       // gather
    w.u8(0);       // read
    w.u32(0);      // tensor
    w.u64(0);      // base
    w.i64(0);      // cta_stride_bytes
    w.u32(64);     // row_bytes
    w.u64(64);     // row_pitch_bytes
    w.u32(2);      // rows
    w.varint(zigzag(int64_t(UINT32_MAX) - 10));
    w.varint(zigzag(bad));
    PayloadReader r(w.bytes().data(), w.bytes().size());
    EXPECT_THROW(decode(BlockType::access, r), std::invalid_argument) << bad;
  }
  // A delta that stays in range decodes: 4294967285 then -4294967285 gives rows 4294967285 and 0.
  PayloadWriter w;
  for (uint32_t v : {0u, 0u, 1u}) w.u32(v);
  w.u8(1);
  w.u8(0);
  w.u32(0);
  w.u64(0);
  w.i64(0);
  w.u32(64);
  w.u64(64);
  w.u32(2);
  w.varint(zigzag(int64_t(UINT32_MAX) - 10));
  w.varint(zigzag(-(int64_t(UINT32_MAX) - 10)));
  PayloadReader r(w.bytes().data(), w.bytes().size());
  const auto rec = decode(BlockType::access, r);
  const auto& a = std::get<AccessRecord>(rec);
  ASSERT_EQ(a.rows.size(), 2u);
  EXPECT_EQ(a.rows[0], UINT32_MAX - 10);
  EXPECT_EQ(a.rows[1], 0u);
}

// A kernel block must describe a launch a replay can finish: at least one CTA of one thread, at
// most 2^32 CTAs (CTA ids are u32) and 65536 threads, finite non-negative FLOPs. Each violation was
// accepted before (a 300-byte trace declaring (2^32-1)^3 CTAs kept `run` warming for ever).
TEST(TraceCodec, AKernelBlockOutsideWhatALaunchCanBeIsRefused) {
  auto refused = [](KernelRecord k) {
    PayloadWriter w;
    encode(Record(k), w);
    PayloadReader r(w.bytes().data(), w.bytes().size());
    try {
      decode(BlockType::kernel, r);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  KernelRecord ok;
  ok.name = "k";
  ok.grid = {65536, 65536, 1};  // exactly 2^32 CTAs
  ok.block = {1024, 1, 1};
  EXPECT_EQ(refused(ok), "");
  KernelRecord k = ok;
  k.grid = {65536, 65536, 2};
  EXPECT_NE(refused(k).find("2^32 CTAs"), std::string::npos);
  k = ok;
  k.grid = {0xFFFFFFFFu, 0xFFFFFFFFu, 0xFFFFFFFFu};  // the product wraps in 64 bits
  EXPECT_NE(refused(k).find("2^32 CTAs"), std::string::npos);
  k = ok;
  k.grid[1] = 0;
  EXPECT_NE(refused(k).find("at least 1"), std::string::npos);
  k = ok;
  k.block = {1024, 1024, 1};
  EXPECT_NE(refused(k).find("65536 threads"), std::string::npos);
  k = ok;
  k.flops[0] = std::nan("");
  EXPECT_NE(refused(k).find("FLOPs"), std::string::npos);
  k.flops[0] = -1;
  EXPECT_NE(refused(k).find("FLOPs"), std::string::npos);
}

TEST(TraceCodec, AnAccessOfMoreThanATebibytePerCtaIsRefusedBeforeItWraps) {
  auto strided = [](uint64_t count, uint32_t elem) {
    PayloadWriter w;
    for (uint32_t v : {0u, 0u, 1u}) w.u32(v);  // kernel, cta_first, cta_count
    w.u8(0);                                    // strided
    w.u8(0);                                    // read
    w.u32(0);                                   // tensor
    w.u64(0);                                   // base
    w.i64(0);                                   // cta_stride_bytes
    w.u32(elem);
    w.u64(count);
    w.i64(elem);
    return w;
  };
  for (auto [count, elem] : {std::pair<uint64_t, uint32_t>{UINT64_MAX, 4}, {(uint64_t(1) << 38) + 1, 4}}) {
    const PayloadWriter w = strided(count, elem);
    PayloadReader r(w.bytes().data(), w.bytes().size());
    EXPECT_THROW(decode(BlockType::access, r), std::invalid_argument) << count;
  }
  const PayloadWriter w = strided(uint64_t(1) << 38, 4);  // exactly 2^40 bytes: allowed
  PayloadReader r(w.bytes().data(), w.bytes().size());
  EXPECT_NO_THROW(decode(BlockType::access, r));
}
