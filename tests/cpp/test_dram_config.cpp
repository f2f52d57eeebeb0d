// SPDX-License-Identifier: Apache-2.0
// The DRAM presets load, match the figures they were written from, and bad values are reported
// with file, key path, value and rule.
#include <gtest/gtest.h>

#include <set>
#include <tuple>

#include "models/dram/address_map.hpp"
#include "test_dram_util.hpp"

using indexsim::config::ConfigError;
using indexsim::config::Document;
using indexsim::model::MemoryRegistry;
using indexsim::model::dram::AddressMap;
using indexsim::model::dram::DramAddress;
using indexsim::test::load_dram;
using indexsim::test::load_hbm;
using indexsim::test::repo_path;

namespace {

// Builds the device from memory.hbm and marks every other section read, so that check_unused()
// speaks about memory.hbm alone.
void load_hbm_section(const std::shared_ptr<Document>& doc) {
  auto root = doc->root();
  for (const auto& k : root.keys())
    if (k != "memory") root.note(k);
  auto mem = root.child("memory");
  for (const auto& k : mem.keys())
    if (k != "hbm") mem.note(k);
  indexsim::model::make_memory_device(mem.child("hbm"));
}

void load_strictly(const std::string& gpu) {
  auto doc = Document::load_file(repo_path("configs/hardware/" + gpu + ".yaml"));
  load_hbm_section(doc);
  doc->check_unused();
}

}  // namespace

TEST(DramConfig, EveryNameIsRegistered) {
  for (const char* n : {"hbm2e", "hbm3", "hbm3e", "ddr5"}) EXPECT_TRUE(MemoryRegistry::instance().has(n)) << n;
}

TEST(DramConfig, ShippedPresetsLoadWithoutUnknownKeys) {
  for (const char* g : {"a100", "h100", "h200", "b200"}) EXPECT_NO_THROW(load_strictly(g)) << g;
}

TEST(DramConfig, PeakIsStacksTimes1024PinsTimesDataRate) {
  // Peak = stacks x 1024 pins x Gb/s / 8; capacity = stacks x GB per stack (reference §1.1).
  struct Row { const char* gpu; double stacks, gbps, gib; };
  for (const Row& r : {Row{"a100", 5, 3.2, 80}, Row{"h100", 5, 5.24, 80}, Row{"h200", 6, 6.25, 144},
                       Row{"b200", 8, 7.8, 192}}) {
    auto d = load_hbm(r.gpu);
    EXPECT_NEAR(d->peak_bandwidth_GBps(), r.stacks * 1024 * r.gbps / 8, 1e-6) << r.gpu;
    EXPECT_EQ(d->capacity_bytes(), uint64_t(r.gib) << 30) << r.gpu;
    EXPECT_EQ(d->params().burst_bytes(), 32u) << r.gpu;   // §1.5: 32 B per column access
  }
  EXPECT_NEAR(load_hbm("h200")->peak_bandwidth_GBps(), 4800, 1e-6);
}

TEST(DramConfig, Ddr5PresetIsADimmAt38GBps) {
  auto d = load_dram("configs/hardware/dram/ddr5-4800.yaml", "dram");
  EXPECT_NEAR(d->peak_bandwidth_GBps(), 38.4, 1e-9);      // §1.6: DDR5-4800 RDIMM at 38.4 GB/s
  EXPECT_EQ(d->params().burst_bytes(), 64u);
  EXPECT_EQ(d->params().t.burst, 8u);                     // BL16 at 2 bits per clock
}

TEST(DramConfig, MisspeltKeyIsAnError) {
  auto doc = Document::load_file(repo_path("configs/hardware/h200.yaml"));
  doc->set("memory.hbm.tRDC_ns=14");
  load_hbm_section(doc);
  try {
    doc->check_unused();
    FAIL() << "unknown key accepted";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.path, "memory.hbm.tRDC_ns");
  }
}

TEST(DramConfig, BadValuesNameKeyValueAndRule) {
  auto expect_error = [](const std::string& set, const std::string& key) {
    try {
      load_hbm("h200", {set});
      ADD_FAILURE() << set << " accepted";
    } catch (const ConfigError& e) {
      EXPECT_EQ(e.path, "memory.hbm." + key) << set;
      EXPECT_NE(e.file.find("h200.yaml"), std::string::npos);
      EXPECT_FALSE(e.rule.empty());
    }
  };
  expect_error("channel_interleave_bytes=16", "channel_interleave_bytes");   // below one burst
  expect_error("clock_MHz=1500", "clock_MHz");          // 6.25 Gb/s / 1.5 GHz: a burst is not whole clocks
  expect_error("write_low_watermark=200", "write_low_watermark");
  expect_error("refresh=sometimes", "refresh");
  expect_error("address_mapping=diagonal", "address_mapping");
  expect_error("tCCD_S_ns=0.64", "tCCD_S_ns");          // one clock cannot carry a two-clock burst
  expect_error("stacks=0", "stacks");
}

TEST(DramAddressMap, EveryMappingIsABijectionAndAStreamCoversEveryPseudoChannel) {
  for (const auto& m : AddressMap::mapping_names()) {
    // The channel rotation composes with the maps whose channel digits sit above column_lo.
    const bool rotates = m != "row_bank_rank_column_channel" && m != "row_bank_column_channel_xor";
    // The bank rotation composes with every map but the XOR one (which hashes banks itself).
    auto d = load_hbm("h200", {"address_mapping=" + m, rotates ? "channel_hash=rotate" : "channel_hash=none",
                               m == "row_bank_column_channel_xor" ? "bank_hash=none" : "bank_hash=rotate"});
    const auto& map = d->address_map();
    const uint32_t pcs = d->params().pseudo_channels();
    // One interleave block per pseudo-channel: a stream of pcs x 256 B touches each exactly once.
    // Ramulator's order keeps the pseudo-channel above the column, so there a stream reaches every
    // pseudo-channel only after a row's worth of bytes in each.
    const uint64_t per_pc = m == "row_bank_rank_column_channel" ? d->params().row_bytes() : map.interleave_bytes();
    std::set<uint32_t> seen;
    for (uint64_t a = 0; a < pcs * per_pc; a += map.interleave_bytes()) seen.insert(map.decode(a).pc);
    EXPECT_EQ(seen.size(), pcs) << m;
    // Distinct bursts map to distinct locations (checked over 8 rows' worth of every bank).
    std::set<std::tuple<uint32_t, uint32_t, uint32_t, uint32_t>> where;
    const uint64_t bursts = uint64_t(pcs) * d->params().banks_per_pc() * d->params().columns * 8;
    for (uint64_t b = 0; b < bursts; b += 7) {
      const DramAddress a = map.decode(b * 32);
      EXPECT_TRUE(where.insert({a.pc, a.bank, a.row, a.column}).second) << m << " burst " << b;
      EXPECT_LT(a.bank, d->params().banks_per_pc());
      EXPECT_LT(a.column, d->params().columns);
    }
  }
}

TEST(DramAddressMap, XorMappingSpreadsRowsThatShareABankAcrossBanks) {
  // Addresses one "row-round" apart (all pseudo-channels x all banks x 1 KB) land in the same bank
  // under row_bank_column_channel, and in different banks or channels once XOR-hashed.
  auto plain = load_hbm("h200", {"address_mapping=row_bank_column_channel", "channel_hash=none", "bank_hash=none"});
  auto hashed = load_hbm("h200", {"address_mapping=row_bank_column_channel_xor", "channel_hash=none", "bank_hash=none"});
  const auto& p = plain->params();
  const uint64_t stride = uint64_t(p.pseudo_channels()) * p.banks_per_pc() * p.row_bytes();
  std::set<std::pair<uint32_t, uint32_t>> a, b;
  for (uint64_t k = 0; k < 16; ++k) {
    const auto x = plain->address_map().decode(k * stride), y = hashed->address_map().decode(k * stride);
    a.insert({x.pc, x.bank});
    b.insert({y.pc, y.bank});
  }
  EXPECT_EQ(a.size(), 1u);
  EXPECT_EQ(b.size(), 16u);
}

TEST(DramAddressMap, BankRotationSpreadsAddressesOneBankPeriodApartOverTheBanks) {
  // H200, row_bank_column_channel: column_lo 256 B, 192 pseudo-channels, column_hi 4 -> the bank
  // field advances every 192 KiB, and 32 banks (4 groups x 4 banks x 2 SIDs) make its period
  // 6 MiB. Addresses 3 MiB apart (16 bank steps: the FP32 score rows of a 786,432-token context)
  // keep bank group and bank and alternate the SID: 2 of 32 banks. Rotated by a hash of the row
  // (bank_hash: rotate) they reach most banks; the decode stays a bijection (test above).
  for (const bool hash : {false, true}) {
    auto d = load_hbm("h200", {"address_mapping=row_bank_column_channel", "channel_hash=rotate",
                               hash ? "bank_hash=rotate" : "bank_hash=none"});
    std::set<uint32_t> banks;
    for (uint64_t k = 0; k < 64; ++k) banks.insert(d->address_map().decode(k * (3ull << 20)).bank);
    if (hash) {
      EXPECT_GE(banks.size(), 20u);
    } else {
      EXPECT_EQ(banks.size(), 2u);
    }
  }
}
