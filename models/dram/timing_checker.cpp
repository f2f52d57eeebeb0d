// SPDX-License-Identifier: Apache-2.0
#include "models/dram/timing_checker.hpp"

#include <algorithm>

namespace indexsim::model::dram {

const char* cmd_name(Cmd c) {
  switch (c) {
    case Cmd::kAct: return "ACT";
    case Cmd::kPre: return "PRE";
    case Cmd::kPreAll: return "PREA";
    case Cmd::kRd: return "RD";
    case Cmd::kWr: return "WR";
    case Cmd::kRef: return "REF";
    case Cmd::kRefSb: return "REFsb";
  }
  return "?";
}

TimingChecker::TimingChecker(const DramParams& p, bool keep_log) : p_(p), keep_log_(keep_log) {
  pcs_.resize(p.pseudo_channels());
  for (auto& pc : pcs_) {
    pc.banks.resize(p.banks_per_pc());
    pc.groups.resize(p.groups_per_pc());
  }
}

void TimingChecker::require(bool ok, const CommandRecord& c, const std::string& rule) {
  if (ok) return;
  if (violations_.size() < 1000)
    violations_.push_back(std::string(cmd_name(c.cmd)) + " at cycle " + std::to_string(c.at) +
                          " pc " + std::to_string(c.pc) + " bank " + std::to_string(c.bank) +
                          ": " + rule);
}

void TimingChecker::on_command(const CommandRecord& c) {
  ++checked_;
  if (keep_log_) log_.push_back(c);
  const Timing& T = p_.t;
  const auto t = static_cast<int64_t>(c.at);
  PcHist& pc = pcs_.at(c.pc);
  const bool row_cmd = c.cmd != Cmd::kRd && c.cmd != Cmd::kWr;

  // A command occupies its bus for its clocks (act_command_tCK, row_command_tCK, column_command_tCK).
  const int64_t clocks = int64_t(c.cmd == Cmd::kAct ? T.act_bus : row_cmd ? T.row_bus : T.col_bus);
  // The bus is the pseudo-channel's own, or its channel's (kept in the channel's first one).
  PcHist& bus = p_.command_bus_per_channel ? pcs_.at(c.pc - c.pc % p_.pseudo_channels_per_channel) : pc;
  if (p_.separate_row_column_buses) {
    require(t >= (row_cmd ? bus.row_cmd_free : bus.col_cmd_free), c, "command bus still busy with the previous command");
    (row_cmd ? bus.row_cmd_free : bus.col_cmd_free) = t + clocks;
  } else {
    require(t >= std::max(bus.row_cmd_free, bus.col_cmd_free), c, "command bus still busy with the previous command");
    bus.row_cmd_free = bus.col_cmd_free = t + clocks;
  }
  const int sid = int(c.bank / (p_.bank_groups * p_.banks_per_group));

  auto pre_ok = [&](const BankHist& b) {
    require(t >= b.act + int64_t(T.tRAS), c, "tRAS (ACT to PRE)");
    require(t >= b.rd + int64_t(T.tRTP), c, "tRTP (RD to PRE)");
    require(t >= b.wr + int64_t(T.tCWL + T.burst + T.tWR), c, "tWR (write recovery before PRE)");
  };
  auto closed_and_precharged = [&](const BankHist& b) {
    require(!b.open, c, "bank must be closed");
    require(t >= b.pre + int64_t(T.tRP), c, "tRP (PRE to next ACT/REF)");
    require(t >= b.ref_end, c, "bank still refreshing (tRFC)");
  };

  switch (c.cmd) {
    case Cmd::kAct: {
      BankHist& b = pc.banks.at(c.bank);
      GroupHist& g = pc.groups.at(c.bank / p_.banks_per_group);
      closed_and_precharged(b);
      require(t >= b.act + int64_t(T.tRC), c, "tRC (ACT to ACT, same bank)");
      require(t >= g.act + int64_t(T.tRRD_L), c, "tRRD_L (ACT to ACT, same bank group)");
      require(t >= pc.act + int64_t(T.tRRD_S), c, "tRRD_S (ACT to ACT)");
      if (pc.acts.size() == 4) require(t >= pc.acts.front() + int64_t(T.tFAW), c, "tFAW (five ACTs in the window)");
      require(t >= pc.refsb + int64_t(T.tRREFD), c, "tRREFD (REFsb to ACT of another bank)");
      b.open = true;
      b.row = c.row;
      b.act = g.act = pc.act = t;
      pc.acts.push_back(t);
      if (pc.acts.size() > 4) pc.acts.pop_front();
      break;
    }
    case Cmd::kPre: {
      BankHist& b = pc.banks.at(c.bank);
      require(b.open, c, "PRE to a closed bank");
      require(t >= pc.pre + int64_t(T.tPPD), c, "tPPD (PRE to PRE)");
      pre_ok(b);
      b.open = false;
      b.pre = pc.pre = t;
      break;
    }
    case Cmd::kPreAll:
      require(t >= pc.pre + int64_t(T.tPPD), c, "tPPD (PRE to PREA)");
      pc.pre = t;
      for (auto& b : pc.banks)
        if (b.open) {
          pre_ok(b);
          b.open = false;
          b.pre = t;
        }
      break;
    case Cmd::kRd:
    case Cmd::kWr: {
      const bool rd = c.cmd == Cmd::kRd;
      BankHist& b = pc.banks.at(c.bank);
      GroupHist& g = pc.groups.at(c.bank / p_.banks_per_group);
      require(b.open && b.row == c.row, c, "column access to a row that is not open");
      require(t >= b.act + int64_t(rd ? T.tRCDRD : T.tRCDWR), c, rd ? "tRCDRD (ACT to RD)" : "tRCDWR (ACT to WR)");
      if (rd) {
        if (pc.rd_sid >= 0 && sid != pc.rd_sid) require(t >= pc.rd + int64_t(T.tCCDR), c, "tCCDR (RD to RD, another stack ID)");
        require(t >= g.rd + int64_t(T.tCCD_L), c, "tCCD_L (RD to RD, same bank group)");
        require(t >= pc.rd + int64_t(T.tCCD_S), c, "tCCD_S (RD to RD)");
        require(t >= g.wr + int64_t(T.tCWL + T.burst + T.tWTR_L), c, "tWTR_L (write data to RD, same bank group)");
        require(t >= pc.wr + int64_t(T.tCWL + T.burst + T.tWTR_S), c, "tWTR_S (write data to RD)");
      } else {
        require(t >= g.wr + int64_t(T.tCCD_L), c, "tCCD_L (WR to WR, same bank group)");
        require(t >= pc.wr + int64_t(T.tCCD_S), c, "tCCD_S (WR to WR)");
      }
      const int64_t start = t + int64_t(rd ? T.tCL : T.tCWL);
      const int64_t gap = rd == pc.bus_was_read ? 0 : int64_t(T.turnaround);
      require(start >= pc.bus_end + gap, c, "data bus overlap (burst or read/write turnaround)");
      pc.bus_end = start + int64_t(T.burst);
      pc.bus_was_read = rd;
      (rd ? b.rd : b.wr) = t;
      (rd ? g.rd : g.wr) = t;
      (rd ? pc.rd : pc.wr) = t;
      if (rd) pc.rd_sid = sid;
      break;
    }
    case Cmd::kRef:
      for (auto& b : pc.banks) {
        closed_and_precharged(b);
        b.ref_end = t + int64_t(T.tRFC);
      }
      break;
    case Cmd::kRefSb: {
      BankHist& b = pc.banks.at(c.bank);
      closed_and_precharged(b);
      require(t >= pc.refsb + int64_t(T.tRREFD), c, "tRREFD (REFsb to REFsb)");
      pc.refsb = t;
      b.ref_end = t + int64_t(T.tRFCsb);
      break;
    }
  }
}

}  // namespace indexsim::model::dram
