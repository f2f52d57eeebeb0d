// SPDX-License-Identifier: Apache-2.0
#include "models/dram/dram_params.hpp"

#include <cmath>
#include <string>

#include "models/common/time.hpp"
#include "models/dram/address_map.hpp"

namespace indexsim::model::dram {

using config::Rule;

namespace {

bool is_pow2(uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }

}  // namespace

const char* to_string(RefreshMode m) {
  switch (m) {
    case RefreshMode::kNone: return "none";
    case RefreshMode::kAllBankSimultaneous: return "all_bank_simultaneous";
    case RefreshMode::kAllBankStaggered: return "all_bank_staggered";
    case RefreshMode::kPerBank: return "per_bank";
  }
  return "?";
}

const NamedCycles kTimingFields[] = {
    {"tRCDRD", &Timing::tRCDRD}, {"tRCDWR", &Timing::tRCDWR}, {"tCL", &Timing::tCL},       {"tCWL", &Timing::tCWL},
    {"tRP", &Timing::tRP},       {"tRAS", &Timing::tRAS},     {"tRC", &Timing::tRC},       {"tRRD_S", &Timing::tRRD_S},
    {"tRRD_L", &Timing::tRRD_L}, {"tFAW", &Timing::tFAW},     {"tCCD_S", &Timing::tCCD_S}, {"tCCD_L", &Timing::tCCD_L},
    {"tCCDR", &Timing::tCCDR},   {"tWTR_S", &Timing::tWTR_S}, {"tWTR_L", &Timing::tWTR_L}, {"tRTP", &Timing::tRTP},
    {"tWR", &Timing::tWR},       {"tPPD", &Timing::tPPD},     {"tREFI", &Timing::tREFI},   {"tRFC", &Timing::tRFC},
    {"tREFIsb", &Timing::tREFIsb}, {"tRFCsb", &Timing::tRFCsb}, {"tRREFD", &Timing::tRREFD},
    {"act_command", &Timing::act_bus}, {"row_command", &Timing::row_bus}, {"column_command", &Timing::col_bus},
    {"burst", &Timing::burst},   {"bus_turnaround", &Timing::turnaround},
};
const size_t kTimingFieldCount = sizeof(kTimingFields) / sizeof(kTimingFields[0]);

DramParams load_dram_params(const config::Node& n) {
  DramParams p;
  p.stacks = n.req<uint32_t>("stacks", Rule::positive());
  p.channels_per_stack = n.req<uint32_t>("channels_per_stack", Rule::positive());
  p.pseudo_channels_per_channel = n.req<uint32_t>("pseudo_channels_per_channel", Rule::positive());
  p.sids = n.req<uint32_t>("sids", Rule::positive());
  p.bank_groups = n.req<uint32_t>("bank_groups", Rule::positive());
  p.banks_per_group = n.req<uint32_t>("banks_per_group", Rule::positive());
  p.rows = n.req<uint64_t>("rows_per_bank", Rule::range(1, 2147483647));   // the controller keeps a row in 31 bits
  p.columns = n.req<uint32_t>("columns_per_row", Rule::positive());
  p.bus_width_bits = n.req<uint32_t>("bus_width_bits", Rule::power_of_two());
  p.burst_length = n.req<uint32_t>("burst_length", Rule::power_of_two());
  p.data_rate_Gbps = n.req<double>("data_rate_Gbps", Rule::positive());
  p.clock_MHz = n.req<double>("clock_MHz", Rule::clock_MHz());
  p.address_mapping = n.req<std::string>("address_mapping", Rule::choice(AddressMap::mapping_names()));
  p.channel_interleave_bytes = n.req<uint32_t>("channel_interleave_bytes", Rule::power_of_two());
  p.channel_hash = n.opt<std::string>("channel_hash", "none", Rule::choice({"none", "rotate"})) == "rotate";
  p.bank_hash = n.opt<std::string>("bank_hash", "none", Rule::choice({"none", "rotate"})) == "rotate";

  // A queue position is kept in 15 bits (the controller's bank state fits one cache line).
  p.read_queue_entries = n.req<uint32_t>("read_queue_entries", Rule::range(1, 32767));
  p.write_queue_entries = n.req<uint32_t>("write_queue_entries", Rule::range(1, 32767));
  // Queues per pseudo-channel (DRAMSys) or shared by the pseudo-channels of a channel (Ramulator 2,
  // DRAMsim3 keep per-channel buffers).
  const auto scope = n.opt<std::string>("queue_scope", "pseudo_channel", Rule::choice({"pseudo_channel", "channel"}));
  p.queue_per_channel = scope == "channel";
  // Write drain between watermarks: counts, or fractions of the write queue (to the nearest entry).
  auto watermark = [&](const std::string& key) -> uint32_t {
    const std::string frac = key + "_fraction";
    if (n.has(key) && n.has(frac))
      n.fail(frac, std::to_string(n.req<double>(frac)), "give " + key + " as a count or as " + frac + ", not both");
    if (n.has(frac)) return uint32_t(std::lround(n.req<double>(frac, Rule::range(0, 1)) * p.write_queue_entries));
    return n.req<uint32_t>(key, Rule::non_negative());
  };
  p.write_high_watermark = watermark("write_high_watermark");
  p.write_low_watermark = watermark("write_low_watermark");
  if (p.write_high_watermark == 0)
    n.fail(n.has("write_high_watermark") ? "write_high_watermark" : "write_high_watermark_fraction", "0 entries",
           "the write drain must start at one entry or more");
  p.separate_row_column_buses = n.req<bool>("separate_row_column_buses");
  // Command buses per pseudo-channel, or one set per channel that its pseudo-channels share (HBM's
  // pseudo-channels take their commands over the channel's C/A pins; Ramulator 2 issues one command
  // a clock per channel).
  const auto bus_scope = n.opt<std::string>("command_bus_scope", "pseudo_channel", Rule::choice({"pseudo_channel", "channel"}));
  p.command_bus_per_channel = bus_scope == "channel";
  p.controller_latency_ns = n.req<double>("controller_latency_ns", Rule::non_negative());
  const auto refresh = n.req<std::string>(
      "refresh", Rule::choice({"all_bank_simultaneous", "all_bank_staggered", "per_bank", "none"}));
  for (RefreshMode m : {RefreshMode::kNone, RefreshMode::kAllBankSimultaneous, RefreshMode::kAllBankStaggered,
                        RefreshMode::kPerBank})
    if (refresh == to_string(m)) p.refresh = m;
  // JESD79-5 / JESD238: at most 8 refreshes postponed, at most 8 pulled in.
  p.refresh_postpone_max = n.opt<uint32_t>("refresh_postpone_max", 0, Rule::range(0, 8));
  p.refresh_pull_in_max = n.opt<uint32_t>("refresh_pull_in_max", 0, Rule::range(0, 8));
  p.check_timing = n.opt<bool>("check_timing", false);

  // Cross-field rules, each reported against the key that breaks it.
  if (p.channel_interleave_bytes < p.burst_bytes() ||
      p.channel_interleave_bytes > p.row_bytes())
    n.fail("channel_interleave_bytes", std::to_string(p.channel_interleave_bytes),
           "must lie between one burst (" + std::to_string(p.burst_bytes()) + " B) and one row (" +
               std::to_string(p.row_bytes()) + " B)");
  if (!is_pow2(p.columns))
    n.fail("columns_per_row", std::to_string(p.columns), "must be a power of two");
  if (p.banks_per_pc() > 64)
    n.fail("banks_per_group", std::to_string(p.banks_per_group),
           "sids x bank_groups x banks_per_group must be <= 64 per pseudo-channel");
  if (p.write_high_watermark > p.write_queue_entries)
    n.fail("write_high_watermark", std::to_string(p.write_high_watermark),
           "must be <= write_queue_entries (" + std::to_string(p.write_queue_entries) + ")");
  if (p.write_low_watermark >= p.write_high_watermark)
    n.fail("write_low_watermark", std::to_string(p.write_low_watermark),
           "must be < write_high_watermark (" + std::to_string(p.write_high_watermark) + ")");
  AddressMap::validate(p, n);

  const Clock clk(p.clock_MHz);
  p.clock_period_ps = clk.period_ps();
  // A burst must fill whole clocks, else the data bus and tCCD would disagree by a fraction.
  const double bits_per_clock = p.data_rate_Gbps * 1000.0 / p.clock_MHz;
  const double burst_clocks = p.burst_length / bits_per_clock;
  if (std::fabs(burst_clocks - std::round(burst_clocks)) > 0.02 || std::round(burst_clocks) < 1)
    n.fail("clock_MHz", std::to_string(p.clock_MHz),
           "burst_length / (data_rate_Gbps / clock) must be a whole number of clocks (it is " +
               std::to_string(burst_clocks) + ")");
  p.t.burst = static_cast<Cycle>(std::llround(burst_clocks));

  // A constraint in clocks (`<name>_tCK`) or in ns (`<name>_ns`, rounded up to the next clock: a
  // controller cannot issue between edges), never both. `fallback` < 0: one of the two is required.
  auto timing = [&](const std::string& name, int64_t fallback = -1) -> Cycle {
    const std::string tck = name + "_tCK", ns = name + "_ns";
    const bool has_tck = n.has(tck), has_ns = n.has(ns);
    if (has_tck && has_ns) n.fail(tck, std::to_string(n.req<uint64_t>(tck)), "give " + name + " once: in clocks (" + tck + ") or in ns (" + ns + "), not both");
    if (has_tck) return n.req<uint64_t>(tck, Rule::range(fallback < 0 ? 1 : 0, 1u << 30));
    if (has_ns) return clk.cycles_ceil(n.req<double>(ns, fallback < 0 ? Rule::positive() : Rule::non_negative()));
    if (fallback >= 0) return Cycle(fallback);
    n.fail(ns, "missing", "required: " + name + " in ns (" + ns + ") or in clocks (" + tck + ")");
    return 0;
  };
  // One tRCD, or tRCDRD and tRCDWR (HBM3) apart.
  const bool split_rcd = n.has("tRCDRD_ns") || n.has("tRCDRD_tCK") || n.has("tRCDWR_ns") || n.has("tRCDWR_tCK");
  if (split_rcd && (n.has("tRCD_ns") || n.has("tRCD_tCK")))
    n.fail(n.has("tRCD_ns") ? "tRCD_ns" : "tRCD_tCK", "given with tRCDRD/tRCDWR",
           "give tRCD (both directions) or tRCDRD and tRCDWR, not both");
  p.t.tRCDRD = timing(split_rcd ? "tRCDRD" : "tRCD");
  p.t.tRCDWR = split_rcd ? timing("tRCDWR") : p.t.tRCDRD;
  p.t.tCL = timing("tCL");
  p.t.tCWL = timing("tCWL");
  p.t.tRP = timing("tRP");
  p.t.tRAS = timing("tRAS");
  p.t.tRC = timing("tRC");
  p.t.tRRD_S = timing("tRRD_S");
  p.t.tRRD_L = timing("tRRD_L");
  p.t.tFAW = timing("tFAW");
  p.t.tCCD_S = timing("tCCD_S");
  p.t.tCCD_L = timing("tCCD_L");
  p.t.tWTR_S = timing("tWTR_S");
  p.t.tWTR_L = timing("tWTR_L");
  p.t.tRTP = timing("tRTP");
  p.t.tWR = timing("tWR");
  p.t.tREFI = timing("tREFI");
  p.t.tRFC = timing("tRFC");
  p.t.tREFIsb = timing("tREFIsb");
  p.t.tRFCsb = timing("tRFCsb");
  // Constraints some standards do not have: absent means no constraint.
  p.t.tCCDR = timing("tCCDR", 0);
  p.t.tPPD = timing("tPPD", 0);
  p.t.tRREFD = timing("tRREFD", 0);
  // Command-bus occupancy, in clocks only (a standard states it so).
  p.t.act_bus = n.opt<uint32_t>("act_command_tCK", 1, Rule::range(1, 8));
  p.t.row_bus = n.opt<uint32_t>("row_command_tCK", 1, Rule::range(1, 8));
  p.t.col_bus = n.opt<uint32_t>("column_command_tCK", 1, Rule::range(1, 8));
  p.t.turnaround = n.req<uint32_t>("bus_turnaround_tCK", Rule::non_negative());

  if (p.t.tCCD_S < p.t.burst)
    n.fail("tCCD_S_ns", std::to_string(p.t.tCCD_S) + " clocks",
           "must cover one burst (" + std::to_string(p.t.burst) + " clocks) on the data bus");
  if (p.t.col_bus > p.t.tCCD_S)
    n.fail("column_command_tCK", std::to_string(p.t.col_bus), "must not exceed tCCD_S (" + std::to_string(p.t.tCCD_S) + " clocks)");
  if (p.all_bank_refresh() && p.t.tRFC >= p.t.tREFI)
    n.fail("tRFC_ns", std::to_string(p.t.tRFC) + " clocks", "must be < tREFI");
  return p;
}

}  // namespace indexsim::model::dram
