// SPDX-License-Identifier: Apache-2.0
// One memory controller per pseudo-channel, in the style of DRAMSys: it keeps the bank state and the
// earliest cycle at which each command class may next issue, plans the one command that FR-FCFS
// picks among those, and sleeps until then. Nothing ticks: an idle controller plans nothing, and
// refresh owed during idle time is replayed when work arrives (it has no other visible effect).
//
// Scheduling, per decision:
//   - direction: reads, unless the write queue reached the high watermark (drain down to the low
//     one) or there are no reads;
//   - column bus: among banks whose open row has a queued request, the request whose column
//     command can issue first; ties go to the oldest (FR-FCFS: a ready row hit beats an older miss);
//   - row bus: for banks with no row hit, PRE (open bank) or ACT (closed bank) for the oldest
//     request of that bank, earliest first, ties to the oldest;
//   - refresh: all-bank (PREA, then REF; blocks the pseudo-channel for tRFC every tREFI, at the
//     same clock in every pseudo-channel or staggered) or per-bank (one bank every tREFIsb, round
//     robin; blocks that bank for tRFCsb). A due refresh may be postponed while requests are
//     queued (up to refresh_postpone_max owed; owed ones are made up as soon as the queues run dry,
//     or when one more would exceed the limit) and pulled in while idle (up to refresh_pull_in_max
//     ahead; each one pulled in cancels a later due one).
// An open row stays open until a request to another row of that bank needs the bank.
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <vector>

#include "models/dram/dram_params.hpp"
#include "models/dram/timing_checker.hpp"

namespace indexsim::model::dram {

constexpr Cycle kNoCycle = std::numeric_limits<Cycle>::max();

// A run of column accesses inside one row of one bank: the unit the controller queues.
struct Chunk {
  uint32_t parent;     // device-side request slot
  uint32_t bank;
  uint32_t row;
  uint32_t bursts;
  bool write;
};

struct ChunkDone {
  Cycle data_end;      // the clock at which the last beat of the chunk is on the bus
  uint32_t parent;
};

struct ControllerStats {
  uint64_t row_hits = 0, row_misses = 0, row_conflicts = 0;
  uint64_t activates = 0, precharges = 0, refreshes = 0;
  uint64_t read_bursts = 0, write_bursts = 0;
  uint64_t refreshes_postponed = 0, refreshes_pulled_in = 0;
  // Clocks requests waited for refresh: all-bank, from the refresh taking the pseudo-channel (its
  // PREA drain) to tRFC after REF; per-bank, the same for the bank, divided by the banks. Only
  // refreshes that began with requests queued count: an idle refresh delays nobody.
  uint64_t refresh_stall_cycles = 0;
  Cycle last_write_end = 0;           // data end of the last write burst issued
};

// When the command bus is free next: one per pseudo-channel, or one shared by a channel's
// pseudo-channels (command_bus_scope: channel), owned by the device.
struct CommandBus {
  Cycle row_free = 0, col_free = 0;
};

class Controller {
 public:
  // `shared_bus`: the channel's bus, which outlives the controller and which the other
  // pseudo-channels of the channel use too; nullptr: the pseudo-channel has its own.
  Controller(const DramParams& p, uint32_t index, TimingChecker* checker, CommandBus* shared_bus = nullptr);

  bool can_accept(bool write, uint32_t chunks) const {
    return count_[write] + chunks <= (write ? p_->write_queue_entries : p_->read_queue_entries);
  }
  uint32_t queued(bool write) const { return count_[write]; }
  // `now` must not precede any command already issued (the device advances before enqueueing).
  void enqueue(const Chunk& c, Cycle now);
  // The clock of the next command, or kNoCycle when nothing is queued.
  Cycle next_event() const { return queued() ? plan_.at : kNoCycle; }
  // Issues the planned command (at next_event()); finished read chunks are appended to `done`.
  void step(std::vector<ChunkDone>& done);

  uint32_t queued() const { return count_[0] + count_[1]; }
  const ControllerStats& stats() const { return stats_; }

 private:
  enum class Kind : uint8_t { kNone, kCol, kAct, kPre, kRefDue, kPreAll, kRef, kPreForRef, kRefSb };
  struct Plan {
    Cycle at = kNoCycle;
    Kind kind = Kind::kNone;
    uint32_t bank = 0;     // kCol issues the bank's hit entry, kAct opens the row of its oldest
  };
  struct Entry {
    uint64_t seq;
    uint32_t parent;
    uint32_t row;
    uint32_t bursts_left;
    uint8_t cls;           // 0 row hit, 1 miss (closed bank), 2 conflict (another row was open)
    bool started;
  };
  // One bank's entries of one direction, oldest first. The entry served is nearly always the oldest,
  // so taking the front only moves a head index: shifting the rest down touched every younger entry,
  // lines last seen when they were enqueued (a fifth of the stream bench's last-level misses).
  class BankQueue {
   public:
    size_t size() const { return v_.size() - head_; }
    bool empty() const { return v_.size() == head_; }
    Entry& operator[](size_t i) { return v_[head_ + i]; }
    const Entry& operator[](size_t i) const { return v_[head_ + i]; }
    Entry& front() { return v_[head_]; }
    Entry& back() { return v_.back(); }
    void push_back(const Entry& e) { v_.push_back(e); }
    void erase(size_t i) {
      if (i == 0) {
        ++head_;
      } else {
        v_.erase(v_.begin() + std::ptrdiff_t(head_ + i));
      }
      if (head_ == v_.size()) {
        v_.clear();
        head_ = 0;
      } else if (head_ >= 16 && 2 * head_ >= v_.size()) {   // keep the dead prefix under half
        v_.erase(v_.begin(), v_.begin() + std::ptrdiff_t(head_));
        head_ = 0;
      }
    }

   private:
    std::vector<Entry> v_;
    size_t head_ = 0;
  };
  static constexpr int32_t kClosed = -1;
  // Everything planning reads about a bank is in this one cache line (the queues live apart): a busy
  // device touches each controller about once per clock, so the cost of a command is mostly its
  // cold lines.
  struct alignas(64) Bank {
    Cycle act_ready = 0, pre_ready = 0;
    Cycle act_at = 0;                      // the last ACT: column commands wait tRCDRD/tRCDWR after it
    // [write]: age (seq) of the oldest entry and of the hit entry: the oldest entry for the open row.
    // Kept up to date where rows open and close and entries come and go, so planning never scans a
    // queue.
    std::array<uint64_t, 2> head_seq{0, 0}, hit_seq{0, 0};
    int32_t open_row = kClosed;
    std::array<int16_t, 2> hit{-1, -1};   // [write]: the hit entry's position in its queue, -1 if none
  };
  static_assert(sizeof(Bank) == 64, "a bank's planning state is one cache line");
  struct Group {
    Cycle act_ready = 0;
    std::array<Cycle, 2> col_ready{0, 0};
    uint64_t banks = 0;                    // mask of the group's banks
    // [write]: of the group's banks in hit_mask_, the one with the oldest hit entry. Within a group
    // every bank waits for the same group readiness, so that bank wins the group unless its own
    // tRCD is still running: planning looks at one bank per group, not at every bank.
    std::array<uint8_t, 2> oldest{0, 0};
  };

  void replan();
  void find_hit(int w, uint32_t bank, size_t from);
  void hit_changed(int w, uint32_t bank);              // keeps Group::oldest of the bank's group
  BankQueue& queue(uint32_t bank, int w) { return queues_[2 * bank + w]; }
  void issue(Cmd cmd, Cycle at, uint32_t bank, uint32_t row);
  void catch_up_idle(Cycle now);
  Cycle faw_ready() const { return acts_seen_ >= 4 ? faw_[faw_head_] + p_->t.tFAW : 0; }
  void use_row_bus(Cycle at, Cycle clocks);
  void use_col_bus(Cycle at);
  void start_refresh(bool pull_in);
  void refresh_if_owed();
  void finish_refresh(Cycle at, Cycle blocked_until, uint32_t share);

  const DramParams* p_;
  uint32_t index_;
  TimingChecker* checker_;
  std::vector<Bank> banks_;
  std::vector<BankQueue> queues_;                       // [2 * bank + write]
  std::vector<uint8_t> group_of_;                       // bank -> bank group
  std::vector<Group> groups_;
  uint64_t closed_for_conflict_ = 0;                    // banks whose last PRE made way for another row
  std::array<uint64_t, 2> mask_{0, 0};                 // banks with queued entries
  std::array<uint64_t, 2> hit_mask_{0, 0};             // banks whose hit[write] >= 0 (an open row with a hit)
  std::array<uint32_t, 2> count_{0, 0};
  uint64_t seq_ = 0;
  bool write_mode_ = false;

  Cycle cur_ = 0;
  Cycle act_ready_ = 0;
  std::array<Cycle, 2> col_ready_{0, 0};
  // When the command buses are next free: the pseudo-channel's own, or a shared bus as of this
  // controller's last replan or command (planning reads these, not the shared copy).
  Cycle row_bus_free_ = 0, col_bus_free_ = 0;
  CommandBus* shared_bus_;
  Cycle pre_ready_ = 0;                                 // tPPD after the last PRE/PREA
  Cycle refsb_ready_ = 0;                               // tRREFD after the last REFsb
  std::array<Cycle, 2> tRCD_{0, 0};                     // [write]: tRCDRD, tRCDWR
  std::array<Cycle, 4> faw_{0, 0, 0, 0};
  uint32_t faw_head_ = 0;
  uint64_t acts_seen_ = 0;

  bool ref_pending_ = false;      // a refresh has the pseudo-channel (all-bank) or its bank (per-bank)
  bool ref_pull_in_ = false;      // ... ahead of schedule
  bool ref_busy_ = false;         // ... and requests were queued when it began
  Cycle ref_since_ = 0;
  Cycle ref_due_ = kNoCycle;      // the next scheduled refresh
  uint32_t ref_owed_ = 0;         // due, not yet issued (postponed)
  uint32_t ref_credit_ = 0;       // pulled in, not yet due
  uint32_t ref_bank_ = 0;

  Plan plan_;
  ControllerStats stats_;
};

}  // namespace indexsim::model::dram
