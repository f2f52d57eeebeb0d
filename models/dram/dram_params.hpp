// SPDX-License-Identifier: Apache-2.0
// Parameters of the DRAM timing core (HBM2e, HBM3, HBM3E and DDR5 share one model; presets differ
// only in these values). Every constraint is read in ns from YAML and rounded up to whole command
// clocks once, here, so the controller works in integer cycles.
#pragma once

#include <cstdint>
#include <string>

#include "models/common/params.hpp"

namespace indexsim::model::dram {

using Cycle = uint64_t;

enum class RefreshMode { kNone, kAllBank, kPerBank };

// Timing constraints in command-clock cycles (JEDEC names).
struct Timing {
  Cycle tRCD, tCL, tCWL, tRP, tRAS, tRC, tRRD_S, tRRD_L, tFAW, tCCD_S, tCCD_L, tWTR_S, tWTR_L,
      tRTP, tWR, tREFI, tRFC, tREFIsb, tRFCsb;
  Cycle burst;        // data-bus cycles of one column access (burst_length / bits per pin per clock)
  Cycle turnaround;   // dead cycles between read data and write data on the shared bus
};

struct DramParams {
  // Organisation: stacks -> channels -> pseudo-channels -> SIDs -> bank groups -> banks -> rows.
  uint32_t stacks = 0;
  uint32_t channels_per_stack = 0;
  uint32_t pseudo_channels_per_channel = 0;
  uint32_t sids = 0;                 // stack IDs (HBM) or ranks (DDR5) sharing one pseudo-channel bus
  uint32_t bank_groups = 0;          // per SID
  uint32_t banks_per_group = 0;
  uint64_t rows = 0;                 // per bank
  uint32_t columns = 0;              // column accesses (bursts) per row
  uint32_t bus_width_bits = 0;       // per pseudo-channel
  uint32_t burst_length = 0;
  double data_rate_Gbps = 0;         // per pin
  double clock_MHz = 0;              // command clock
  std::string address_mapping;
  uint32_t channel_interleave_bytes = 0;   // contiguous bytes kept in one row before the next channel

  // Controller.
  uint32_t read_queue_entries = 0;
  uint32_t write_queue_entries = 0;
  uint32_t write_high_watermark = 0;
  uint32_t write_low_watermark = 0;
  bool separate_row_column_buses = true;   // HBM has separate row and column command buses
  double controller_latency_ns = 0;        // front-end + PHY pipeline added to every read
  RefreshMode refresh = RefreshMode::kAllBank;
  bool check_timing = false;               // record every command and verify the JEDEC rules

  Timing t{};
  uint64_t clock_period_ps = 0;

  // Derived sizes.
  uint32_t burst_bytes() const { return bus_width_bits * burst_length / 8; }
  uint32_t pseudo_channels() const { return stacks * channels_per_stack * pseudo_channels_per_channel; }
  uint32_t banks_per_pc() const { return sids * bank_groups * banks_per_group; }
  uint32_t groups_per_pc() const { return sids * bank_groups; }
  uint64_t row_bytes() const { return uint64_t(columns) * burst_bytes(); }
  uint64_t capacity_bytes() const { return uint64_t(pseudo_channels()) * banks_per_pc() * rows * row_bytes(); }
  // Pins x data rate: the figure a datasheet quotes.
  double peak_bandwidth_GBps() const {
    return double(pseudo_channels()) * bus_width_bits * data_rate_Gbps / 8.0;
  }
};

// Reads and validates a `memory.hbm`-style section (the `impl` key is read by the registry).
DramParams load_dram_params(const config::Node& node);

}  // namespace indexsim::model::dram
