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
  p.clock_MHz = n.req<double>("clock_MHz", Rule::positive());
  p.address_mapping = n.req<std::string>("address_mapping", Rule::choice(AddressMap::mapping_names()));
  p.channel_interleave_bytes = n.req<uint32_t>("channel_interleave_bytes", Rule::power_of_two());

  // A queue position is kept in 15 bits (the controller's bank state fits one cache line).
  p.read_queue_entries = n.req<uint32_t>("read_queue_entries", Rule::range(1, 32767));
  p.write_queue_entries = n.req<uint32_t>("write_queue_entries", Rule::range(1, 32767));
  p.write_high_watermark = n.req<uint32_t>("write_high_watermark", Rule::positive());
  p.write_low_watermark = n.req<uint32_t>("write_low_watermark", Rule::non_negative());
  p.separate_row_column_buses = n.req<bool>("separate_row_column_buses");
  p.controller_latency_ns = n.req<double>("controller_latency_ns", Rule::non_negative());
  const auto refresh = n.req<std::string>("refresh", Rule::choice({"all_bank", "per_bank", "none"}));
  p.refresh = refresh == "all_bank" ? RefreshMode::kAllBank
            : refresh == "per_bank" ? RefreshMode::kPerBank
                                    : RefreshMode::kNone;
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

  auto ns = [&](const char* key) { return clk.cycles_ceil(n.req<double>(key, Rule::positive())); };
  p.t.tRCD = ns("tRCD_ns");
  p.t.tCL = ns("tCL_ns");
  p.t.tCWL = ns("tCWL_ns");
  p.t.tRP = ns("tRP_ns");
  p.t.tRAS = ns("tRAS_ns");
  p.t.tRC = ns("tRC_ns");
  p.t.tRRD_S = ns("tRRD_S_ns");
  p.t.tRRD_L = ns("tRRD_L_ns");
  p.t.tFAW = ns("tFAW_ns");
  p.t.tCCD_S = ns("tCCD_S_ns");
  p.t.tCCD_L = ns("tCCD_L_ns");
  p.t.tWTR_S = ns("tWTR_S_ns");
  p.t.tWTR_L = ns("tWTR_L_ns");
  p.t.tRTP = ns("tRTP_ns");
  p.t.tWR = ns("tWR_ns");
  p.t.tREFI = ns("tREFI_ns");
  p.t.tRFC = ns("tRFC_ns");
  p.t.tREFIsb = ns("tREFIsb_ns");
  p.t.tRFCsb = ns("tRFCsb_ns");
  p.t.turnaround = n.req<uint32_t>("bus_turnaround_tCK", Rule::non_negative());

  if (p.t.tCCD_S < p.t.burst)
    n.fail("tCCD_S_ns", std::to_string(p.t.tCCD_S) + " clocks",
           "must cover one burst (" + std::to_string(p.t.burst) + " clocks) on the data bus");
  if (p.refresh == RefreshMode::kAllBank && p.t.tRFC >= p.t.tREFI)
    n.fail("tRFC_ns", std::to_string(p.t.tRFC) + " clocks", "must be < tREFI");
  return p;
}

}  // namespace indexsim::model::dram
