// SPDX-License-Identifier: Apache-2.0
// An independent witness of the controller: it sees every command as issued and checks it against
// the JEDEC rules from its own history (last command times per bank, bank group and
// pseudo-channel), not from the controller's bookkeeping, so a scheduling bug shows up as a
// violation rather than being agreed with.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "models/dram/dram_params.hpp"

namespace indexsim::model::dram {

enum class Cmd : uint8_t { kAct, kPre, kPreAll, kRd, kWr, kRef, kRefSb };
const char* cmd_name(Cmd c);

struct CommandRecord {
  Cycle at;
  uint32_t pc;
  Cmd cmd;
  uint32_t bank;   // within the pseudo-channel (unused for kPreAll and kRef)
  uint32_t row;    // kAct, kRd and kWr
};

class TimingChecker {
 public:
  explicit TimingChecker(const DramParams& p, bool keep_log = true);
  void on_command(const CommandRecord& c);

  const std::vector<std::string>& violations() const { return violations_; }
  const std::vector<CommandRecord>& log() const { return log_; }
  uint64_t commands_checked() const { return checked_; }

 private:
  static constexpr int64_t kLongAgo = -(int64_t(1) << 40);
  struct BankHist {
    bool open = false;
    uint32_t row = 0;
    int64_t act = kLongAgo, pre = kLongAgo, rd = kLongAgo, wr = kLongAgo, ref_end = kLongAgo;
  };
  struct GroupHist {
    int64_t act = kLongAgo, rd = kLongAgo, wr = kLongAgo;
  };
  struct PcHist {
    std::vector<BankHist> banks;
    std::vector<GroupHist> groups;
    std::deque<int64_t> acts;   // the last four activates, for tFAW
    int64_t act = kLongAgo, rd = kLongAgo, wr = kLongAgo;
    int64_t row_cmd_free = kLongAgo, col_cmd_free = kLongAgo;   // first clock each command bus is free
    int64_t pre = kLongAgo, refsb = kLongAgo;                   // the last PRE/PREA and REFsb
    int rd_sid = -1;                                             // stack ID of the last RD
    int64_t bus_end = kLongAgo;
    bool bus_was_read = true;
  };
  void require(bool ok, const CommandRecord& c, const std::string& rule);

  DramParams p_;
  bool keep_log_;
  std::vector<PcHist> pcs_;
  std::vector<std::string> violations_;
  std::vector<CommandRecord> log_;
  uint64_t checked_ = 0;
};

}  // namespace indexsim::model::dram
