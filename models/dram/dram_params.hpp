// SPDX-License-Identifier: Apache-2.0
// Parameters of the DRAM timing core (HBM2e, HBM3, HBM3E and DDR5 share one model; presets differ
// only in these values). Every constraint is given either in clocks (`<name>_tCK`, as a standard
// states most of them) or in ns (`<name>_ns`, rounded up to whole command clocks once, here), so
// the controller works in integer cycles; the device reports the clocks it used.
#pragma once

#include <cstdint>
#include <string>

#include "models/common/params.hpp"

namespace indexsim::model::dram {

using Cycle = uint64_t;

// all_bank_simultaneous: every pseudo-channel refreshes at the same clock (Ramulator 2);
// all_bank_staggered: pseudo-channel i starts i/N of tREFI later (DRAMSys, real controllers);
// per_bank: one bank at a time, every tREFIsb, round robin, staggered like all_bank_staggered.
enum class RefreshMode { kNone, kAllBankSimultaneous, kAllBankStaggered, kPerBank };
const char* to_string(RefreshMode m);

// Timing constraints in command-clock cycles (JEDEC names).
struct Timing {
  Cycle tRCDRD, tRCDWR;  // ACT to RD, ACT to WR (one tRCD where the standard has one)
  Cycle tCL, tCWL, tRP, tRAS, tRC, tRRD_S, tRRD_L, tFAW, tCCD_S, tCCD_L, tWTR_S, tWTR_L,
      tRTP, tWR, tREFI, tRFC, tREFIsb, tRFCsb;
  Cycle tCCDR;        // RD to RD of another stack ID (HBM3); 0: no constraint beyond tCCD_S
  Cycle tPPD;         // PRE to PRE (or PREA) in one pseudo-channel; 0: none
  Cycle tRREFD;       // REFsb to REFsb or ACT of another bank; 0: none
  Cycle act_bus;      // row-bus clocks an ACT occupies (HBM sends ACT over two clocks)
  Cycle row_bus;      // row-bus clocks of PRE, PREA, REF, REFsb
  Cycle col_bus;      // column-bus clocks of RD, WR
  Cycle burst;        // data-bus cycles of one column access (burst_length / bits per pin per clock)
  Cycle turnaround;   // dead cycles between read data and write data on the shared bus
};

// Every constraint by name with the clocks the run used, for reports and tests.
struct NamedCycles {
  const char* name;
  Cycle Timing::*field;
};
extern const NamedCycles kTimingFields[];
extern const size_t kTimingFieldCount;

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
  // Rotate the pseudo-channel index by a hash of the address bits above it, as GPUs hash addresses
  // over their channels so that no stride camps on one: see address_map.hpp.
  bool channel_hash = false;
  // Rotate the bank index (bank group, bank, SID together) by a hash of the row, so that rows
  // which a plain map puts in one bank (strides of a multiple of the bank field's period) spread
  // over the banks: permutation-based interleaving, see address_map.hpp.
  bool bank_hash = false;
  uint32_t channel_interleave_bytes = 0;   // contiguous bytes kept in one row before the next channel

  // Controller.
  uint32_t read_queue_entries = 0;
  uint32_t write_queue_entries = 0;
  uint32_t write_high_watermark = 0;
  uint32_t write_low_watermark = 0;
  bool queue_per_channel = false;          // the queue sizes hold for a channel's pseudo-channels together
  bool separate_row_column_buses = true;   // HBM has separate row and column command buses
  bool command_bus_per_channel = false;    // the pseudo-channels of a channel share its command bus(es)
  double controller_latency_ns = 0;        // front-end + PHY pipeline added to every read
  RefreshMode refresh = RefreshMode::kAllBankStaggered;
  // JEDEC lets a controller postpone up to 8 refreshes while it is busy and pull up to 8 in while
  // it is idle; 0 and 0 refresh exactly on schedule.
  uint32_t refresh_postpone_max = 0;
  uint32_t refresh_pull_in_max = 0;
  bool check_timing = false;               // record every command and verify the JEDEC rules

  Timing t{};
  uint64_t clock_period_ps = 0;

  // Derived sizes.
  uint32_t burst_bytes() const { return bus_width_bits * burst_length / 8; }
  uint32_t pseudo_channels() const { return stacks * channels_per_stack * pseudo_channels_per_channel; }
  uint32_t banks_per_pc() const { return sids * bank_groups * banks_per_group; }
  uint32_t groups_per_pc() const { return sids * bank_groups; }
  bool all_bank_refresh() const {
    return refresh == RefreshMode::kAllBankSimultaneous || refresh == RefreshMode::kAllBankStaggered;
  }
  Cycle refresh_interval() const { return refresh == RefreshMode::kPerBank ? t.tREFIsb : t.tREFI; }
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
