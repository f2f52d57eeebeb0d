// SPDX-License-Identifier: Apache-2.0
#include "models/dram/controller.hpp"

#include <algorithm>

namespace indexsim::model::dram {

namespace {

// a + b - c, floored at zero: read-to-write spacing can be negative when tCWL is long.
Cycle plus_minus(Cycle a, Cycle b, Cycle c) { return a + b > c ? a + b - c : 0; }

}  // namespace

Controller::Controller(const DramParams& p, uint32_t index, TimingChecker* checker, CommandBus* shared_bus)
    : p_(&p), index_(index), checker_(checker), shared_bus_(shared_bus) {
  banks_.resize(p.banks_per_pc());
  queues_.resize(2 * size_t(p.banks_per_pc()));
  groups_.resize(p.groups_per_pc());
  group_of_.resize(p.banks_per_pc());
  for (uint32_t b = 0; b < p.banks_per_pc(); ++b) group_of_[b] = static_cast<uint8_t>(b / p.banks_per_group);
  for (uint32_t b = 0; b < p.banks_per_pc(); ++b) groups_[group_of_[b]].banks |= uint64_t(1) << b;
  tRCD_ = {p.t.tRCDRD, p.t.tRCDWR};
  refresh_if_owed();   // an idle controller may pull refreshes in from the start
  // Staggered: pseudo-channel i starts i/N of an interval late, as real controllers do, so that an
  // all-bank refresh never stalls the whole device at once. Simultaneous: all at once.
  const Cycle interval = p.refresh_interval();
  if (p.refresh != RefreshMode::kNone)
    ref_due_ = interval + (p.refresh == RefreshMode::kAllBankSimultaneous
                               ? 0
                               : Cycle(index) * interval / std::max<uint32_t>(1, p.pseudo_channels()));
  replan();
}

void Controller::find_hit(int w, uint32_t bank, size_t from) {
  Bank& b = banks_[bank];
  const auto& q = queue(bank, w);
  b.hit[w] = -1;
  hit_mask_[w] &= ~(uint64_t(1) << bank);
  if (b.open_row != kClosed) {
    for (size_t i = from; i < q.size(); ++i)
      if (int32_t(q[i].row) == b.open_row) {
        b.hit[w] = int16_t(i);
        hit_mask_[w] |= uint64_t(1) << bank;
        b.hit_seq[w] = q[i].seq;
        break;
      }
  }
  hit_changed(w, bank);
}

void Controller::hit_changed(int w, uint32_t bank) {
  Group& g = groups_[group_of_[bank]];
  uint64_t oldest_seq = ~uint64_t(0);
  for (uint64_t m = hit_mask_[w] & g.banks; m != 0; m &= m - 1) {
    const auto b = static_cast<uint32_t>(__builtin_ctzll(m));
    if (banks_[b].hit_seq[w] < oldest_seq) {
      oldest_seq = banks_[b].hit_seq[w];
      g.oldest[w] = static_cast<uint8_t>(b);
    }
  }
}

void Controller::use_row_bus(Cycle at, Cycle clocks) {
  row_bus_free_ = at + clocks;
  if (!p_->separate_row_column_buses) col_bus_free_ = row_bus_free_;
  if (shared_bus_) {   // only the bus this command took: the other may have moved since the plan
    shared_bus_->row_free = row_bus_free_;
    if (!p_->separate_row_column_buses) shared_bus_->col_free = col_bus_free_;
  }
}

void Controller::use_col_bus(Cycle at) {
  col_bus_free_ = at + p_->t.col_bus;
  if (!p_->separate_row_column_buses) row_bus_free_ = col_bus_free_;
  if (shared_bus_) {
    shared_bus_->col_free = col_bus_free_;
    if (!p_->separate_row_column_buses) shared_bus_->row_free = row_bus_free_;
  }
}

void Controller::issue(Cmd cmd, Cycle at, uint32_t bank, uint32_t row) {
  if (checker_) checker_->on_command({at, index_, cmd, bank, row});
}

void Controller::start_refresh(bool pull_in) {
  ref_pending_ = true;
  ref_pull_in_ = pull_in;
  ref_busy_ = queued() > 0;
  ref_since_ = cur_;
}

void Controller::refresh_if_owed() {
  // Postponed refreshes are made up when the queues run dry, or when one more would be too many;
  // an idle controller pulls refreshes in. Only a refresh, a due one or an emptied queue changes
  // the answer, so only they ask.
  if (ref_pending_ || p_->refresh == RefreshMode::kNone) return;
  const bool idle = queued() == 0;
  if (ref_owed_ > 0 && (idle || ref_owed_ > p_->refresh_postpone_max)) start_refresh(false);
  else if (idle && ref_owed_ == 0 && ref_credit_ < p_->refresh_pull_in_max) start_refresh(true);
}

void Controller::finish_refresh(Cycle at, Cycle blocked_until, uint32_t share) {
  ref_pending_ = false;
  ++stats_.refreshes;
  if (ref_pull_in_) {
    ++ref_credit_;
    ++stats_.refreshes_pulled_in;
  } else {
    --ref_owed_;
  }
  if (ref_busy_) stats_.refresh_stall_cycles += (blocked_until - std::min(ref_since_, at)) / share;
  refresh_if_owed();
}

void Controller::catch_up_idle(Cycle now) {
  // Refresh owed while idle: replay it exactly, after skipping whole intervals that leave no trace
  // (every bank closed and refreshed long before now).
  while (plan_.kind != Kind::kNone && plan_.at < now && ref_pending_) {
    std::vector<ChunkDone> none;
    step(none);
  }
  if (p_->refresh != RefreshMode::kNone && ref_due_ < now) {
    const bool all = p_->all_bank_refresh();
    const Cycle interval = p_->refresh_interval();
    const Cycle keep = all ? 2 : p_->banks_per_pc() + 2;
    const Cycle behind = (now - ref_due_) / interval;
    if (behind > keep) {
      const Cycle skip = behind - keep;
      ref_due_ += skip * interval;
      stats_.refreshes += skip;
      if (!all) ref_bank_ = uint32_t((ref_bank_ + skip) % p_->banks_per_pc());
      replan();
    }
  }
  while (plan_.kind != Kind::kNone && plan_.at < now) {
    std::vector<ChunkDone> none;
    step(none);
  }
}

void Controller::enqueue(const Chunk& c, Cycle now) {
  const bool was_idle = queued() == 0;
  if (was_idle) {
    catch_up_idle(now);
    // A refresh pulled in but not yet issued gives way to the work that arrived.
    if (ref_pending_ && ref_pull_in_) ref_pending_ = false;
  }
  cur_ = std::max(cur_, now);
  const int w = c.write ? 1 : 0;
  Bank& bk = banks_[c.bank];
  auto& q = queue(c.bank, w);
  // The youngest entry changes the plan only if it is its bank's first entry or first row hit,
  // or if it moves the read/write mode: otherwise skip the replan (the common case in a stream).
  bool same_plan = !was_idle && !ref_pending_ && !q.empty();
  const bool hits_open_row = bk.open_row != kClosed && int32_t(c.row) == bk.open_row;
  if (same_plan && w == (write_mode_ ? 1 : 0) && hits_open_row) same_plan = bk.hit[w] >= 0;
  q.push_back({seq_++, c.parent, c.row, c.bursts, 0, false});
  if (q.size() == 1) bk.head_seq[w] = q.back().seq;
  if (hits_open_row && bk.hit[w] < 0) {
    bk.hit[w] = int16_t(q.size() - 1);
    hit_mask_[w] |= uint64_t(1) << c.bank;
    bk.hit_seq[w] = q.back().seq;
    hit_changed(w, c.bank);
  }
  mask_[w] |= uint64_t(1) << c.bank;
  ++count_[w];
  if (same_plan) {
    const bool switch_to_write = !write_mode_ && count_[1] >= p_->write_high_watermark;
    const bool switch_to_read = write_mode_ && count_[1] <= p_->write_low_watermark && count_[0] > 0;
    if (!switch_to_write && !switch_to_read) return;
  }
  replan();
}

void Controller::replan() {
  const Cycle cur = cur_;
  if (shared_bus_) row_bus_free_ = shared_bus_->row_free, col_bus_free_ = shared_bus_->col_free;
  if (ref_pending_ && p_->all_bank_refresh()) {
    // Everything waits for the refresh: close all banks, then REF once tRP has passed everywhere.
    bool any_open = false;
    Cycle pre_at = std::max({cur, row_bus_free_, pre_ready_}), ref_at = std::max(cur, row_bus_free_);
    for (const Bank& b : banks_) {
      if (b.open_row != kClosed) {
        any_open = true;
        pre_at = std::max(pre_at, b.pre_ready);
      }
      ref_at = std::max(ref_at, b.act_ready);
    }
    plan_ = any_open ? Plan{pre_at, Kind::kPreAll, 0} : Plan{ref_at, Kind::kRef, 0};
    return;
  }

  // Write drain between watermarks; reads otherwise.
  if (!write_mode_) {
    if (count_[1] >= p_->write_high_watermark || (count_[0] == 0 && count_[1] > 0)) write_mode_ = true;
  } else if (count_[1] == 0 || (count_[1] <= p_->write_low_watermark && count_[0] > 0)) {
    write_mode_ = false;
  }
  const int w = write_mode_ ? 1 : 0;
  const bool per_bank_ref = ref_pending_ && p_->refresh == RefreshMode::kPerBank;

  // A command's clock is the latest of its bank's, its group's and the pseudo-channel's readiness;
  // the pseudo-channel's part is the same for every bank, so it is taken once.
  const Cycle col_pc = std::max({cur, col_ready_[w], col_bus_free_});
  const Cycle row_pc = std::max(cur, row_bus_free_);
  const Cycle act_pc = std::max({row_pc, act_ready_, faw_ready()});
  const Cycle pre_pc = std::max(row_pc, pre_ready_);
  const Cycle rcd = tRCD_[w];
  Cycle col_at = kNoCycle, row_at = kNoCycle;
  uint64_t col_seq = ~uint64_t(0), row_seq = ~uint64_t(0);
  uint32_t col_bank = 0, row_bank = 0;
  Kind row_kind = Kind::kNone;
  const uint64_t queued = mask_[w] & ~(per_bank_ref ? uint64_t(1) << ref_bank_ : 0);
  // The selections are branch-free: which bank wins is data, not a pattern a predictor learns.
  auto take_col = [&](Cycle at, uint64_t seq, uint32_t b) {
    const bool better = (at < col_at) | ((at == col_at) & (seq < col_seq));
    col_at = better ? at : col_at;
    col_seq = better ? seq : col_seq;
    col_bank = better ? b : col_bank;
  };
  // Only the groups that hold a hit are visited: a stream keeps hits in two or three of them.
  for (uint64_t rest = queued & hit_mask_[w]; rest != 0;) {
    // FR-FCFS column bus: the row hit that can go first, ties to the oldest. In a group every bank
    // is ready by `ready` but for its own tRCD; the group's oldest hit wins unless that runs on.
    const Group& g = groups_[group_of_[__builtin_ctzll(rest)]];
    const uint64_t in_group = rest & g.banks;
    rest &= ~g.banks;
    const Cycle ready = std::max(col_pc, g.col_ready[w]);
    const uint32_t o = g.oldest[w];
    if ((in_group >> o & 1) && banks_[o].act_at + rcd <= ready) {
      take_col(ready, banks_[o].hit_seq[w], o);
      continue;
    }
    for (uint64_t m = in_group; m != 0; m &= m - 1) {
      const auto b = static_cast<uint32_t>(__builtin_ctzll(m));
      take_col(std::max(ready, banks_[b].act_at + rcd), banks_[b].hit_seq[w], b);
    }
  }
  bool row_open = false;
  for (uint64_t m = queued & ~hit_mask_[w]; m != 0; m &= m - 1) {
    // Row bus: PRE for an open bank without a hit, ACT for a closed one; earliest, ties to the oldest.
    const auto b = static_cast<uint32_t>(__builtin_ctzll(m));
    const Bank& bk = banks_[b];
    const bool open = bk.open_row != kClosed;
    const Cycle pre = std::max(pre_pc, bk.pre_ready);
    const Cycle act = std::max({act_pc, bk.act_ready, groups_[group_of_[b]].act_ready});
    const Cycle at = open ? pre : act;
    const uint64_t seq = bk.head_seq[w];
    const bool better = (at < row_at) | ((at == row_at) & (seq < row_seq));
    row_at = better ? at : row_at;
    row_seq = better ? seq : row_seq;
    row_bank = better ? b : row_bank;
    row_open = better ? open : row_open;
  }
  if (row_at != kNoCycle) row_kind = row_open ? Kind::kPre : Kind::kAct;
  if (per_bank_ref) {
    // The bank under refresh goes before any other row command that is ready no earlier.
    const Bank& bk = banks_[ref_bank_];
    const bool open = bk.open_row != kClosed;
    const Cycle at = open ? std::max(pre_pc, bk.pre_ready)
                          : std::max({row_pc, bk.act_ready, refsb_ready_});
    if (at <= row_at) row_at = at, row_bank = ref_bank_, row_kind = open ? Kind::kPreForRef : Kind::kRefSb;
  }
  plan_ = col_at <= row_at ? Plan{col_at, col_at == kNoCycle ? Kind::kNone : Kind::kCol, col_bank}
                           : Plan{row_at, row_kind, row_bank};
  if (!ref_pending_ && ref_due_ <= plan_.at) plan_ = {ref_due_, Kind::kRefDue, 0};
}

void Controller::step(std::vector<ChunkDone>& done) {
  const Timing& T = p_->t;
  const Plan pl = plan_;
  // A due refresh planned while one was pending may lie behind: time never runs back.
  const Cycle t = std::max(pl.at, cur_);
  cur_ = t;
  if (shared_bus_ && pl.kind != Kind::kNone && pl.kind != Kind::kRefDue &&
      (pl.kind == Kind::kCol ? shared_bus_->col_free : shared_bus_->row_free) > t) {
    // Another pseudo-channel of the channel took the bus since this plan was made.
    replan();
    return;
  }
  switch (pl.kind) {
    case Kind::kNone:
      return;
    case Kind::kRefDue:
      ref_due_ += p_->refresh_interval();
      if (ref_credit_ > 0) {   // pulled in already
        --ref_credit_;
      } else {
        ++ref_owed_;
        if (queued() > 0 && ref_owed_ <= p_->refresh_postpone_max) ++stats_.refreshes_postponed;
      }
      refresh_if_owed();
      break;
    case Kind::kPreAll:
      for (uint32_t i = 0; i < banks_.size(); ++i) {
        Bank& b = banks_[i];
        if (b.open_row == kClosed) continue;
        b.open_row = kClosed;
        b.hit = {-1, -1};
        b.act_ready = std::max(b.act_ready, t + T.tRP);
        closed_for_conflict_ &= ~(uint64_t(1) << i);
        hit_mask_[0] &= ~(uint64_t(1) << i);
        hit_mask_[1] &= ~(uint64_t(1) << i);
        hit_changed(0, i);
        hit_changed(1, i);
        ++stats_.precharges;
      }
      pre_ready_ = t + T.tPPD;
      use_row_bus(t, T.row_bus);
      issue(Cmd::kPreAll, t, 0, 0);
      break;
    case Kind::kRef:
      for (Bank& b : banks_) b.act_ready = std::max(b.act_ready, t + T.tRFC);
      use_row_bus(t, T.row_bus);
      issue(Cmd::kRef, t, 0, 0);
      finish_refresh(t, t + T.tRFC, 1);
      break;
    case Kind::kPreForRef:
    case Kind::kPre: {
      Bank& b = banks_[pl.bank];
      b.open_row = kClosed;
      b.hit = {-1, -1};
      b.act_ready = std::max(b.act_ready, t + T.tRP);
      const uint64_t bit = uint64_t(1) << pl.bank;
      hit_mask_[0] &= ~bit;
      hit_mask_[1] &= ~bit;
      hit_changed(0, pl.bank);
      hit_changed(1, pl.bank);
      closed_for_conflict_ = pl.kind == Kind::kPre ? closed_for_conflict_ | bit : closed_for_conflict_ & ~bit;
      ++stats_.precharges;
      pre_ready_ = t + T.tPPD;
      use_row_bus(t, T.row_bus);
      issue(Cmd::kPre, t, pl.bank, 0);
      break;
    }
    case Kind::kRefSb: {
      Bank& b = banks_[pl.bank];
      b.act_ready = std::max(b.act_ready, t + T.tRFCsb);
      refsb_ready_ = t + T.tRREFD;
      act_ready_ = std::max(act_ready_, t + T.tRREFD);
      use_row_bus(t, T.row_bus);
      issue(Cmd::kRefSb, t, pl.bank, 0);
      finish_refresh(t, t + T.tRFCsb, p_->banks_per_pc());
      ref_bank_ = (ref_bank_ + 1) % p_->banks_per_pc();
      break;
    }
    case Kind::kAct: {
      const int w = write_mode_ ? 1 : 0;
      Bank& b = banks_[pl.bank];
      Entry& e = queue(pl.bank, w).front();   // the oldest entry of the bank opens its row
      Group& g = groups_[group_of_[pl.bank]];
      const uint64_t bit = uint64_t(1) << pl.bank;
      b.open_row = int32_t(e.row);
      if (!e.started) e.cls = closed_for_conflict_ & bit ? 2 : 1;
      closed_for_conflict_ &= ~bit;
      b.act_at = t;
      b.pre_ready = std::max(b.pre_ready, t + T.tRAS);
      b.act_ready = std::max(b.act_ready, t + T.tRC);
      g.act_ready = std::max(g.act_ready, t + T.tRRD_L);
      act_ready_ = std::max(act_ready_, t + T.tRRD_S);
      faw_[faw_head_] = t;
      faw_head_ = (faw_head_ + 1) % 4;
      ++acts_seen_;
      ++stats_.activates;
      use_row_bus(t, T.act_bus);
      issue(Cmd::kAct, t, pl.bank, e.row);
      find_hit(0, pl.bank, 0);
      find_hit(1, pl.bank, 0);
      break;
    }
    case Kind::kCol: {
      const int w = write_mode_ ? 1 : 0;
      Bank& b = banks_[pl.bank];
      auto& q = queue(pl.bank, w);
      const auto index = static_cast<size_t>(b.hit[w]);   // planning picked this bank's hit entry
      Entry& e = q[index];
      Group& g = groups_[group_of_[pl.bank]];
      if (!e.started) {
        e.started = true;
        (e.cls == 0 ? stats_.row_hits : e.cls == 1 ? stats_.row_misses : stats_.row_conflicts)++;
      }
      const Cycle same_dir = std::max(T.tCCD_S, T.burst);
      if (w == 0) {
        b.pre_ready = std::max(b.pre_ready, t + T.tRTP);
        g.col_ready[0] = std::max(g.col_ready[0], t + T.tCCD_L);
        col_ready_[0] = std::max(col_ready_[0], t + same_dir);
        // Write data may start only after the read burst and the bus turnaround.
        const Cycle to_write = plus_minus(t, T.tCL + T.burst + T.turnaround, T.tCWL);
        g.col_ready[1] = std::max(g.col_ready[1], to_write);
        col_ready_[1] = std::max(col_ready_[1], to_write);
        if (T.tCCDR) {   // the next read to another stack ID; kept in the groups, so planning pays nothing
          const uint32_t sid = group_of_[pl.bank] / p_->bank_groups;
          for (uint32_t gi = 0; gi < groups_.size(); ++gi)
            if (gi / p_->bank_groups != sid) groups_[gi].col_ready[0] = std::max(groups_[gi].col_ready[0], t + T.tCCDR);
        }
        ++stats_.read_bursts;
      } else {
        b.pre_ready = std::max(b.pre_ready, t + T.tCWL + T.burst + T.tWR);
        g.col_ready[1] = std::max(g.col_ready[1], t + T.tCCD_L);
        col_ready_[1] = std::max(col_ready_[1], t + same_dir);
        g.col_ready[0] = std::max(g.col_ready[0], t + T.tCWL + T.burst + T.tWTR_L);
        const Cycle bus = plus_minus(t, T.tCWL + T.burst + T.turnaround, T.tCL);
        col_ready_[0] = std::max({col_ready_[0], t + T.tCWL + T.burst + T.tWTR_S, bus});
        ++stats_.write_bursts;
        stats_.last_write_end = std::max(stats_.last_write_end, t + T.tCWL + T.burst);
      }
      use_col_bus(t);
      issue(w == 0 ? Cmd::kRd : Cmd::kWr, t, pl.bank, e.row);
      if (--e.bursts_left == 0) {
        if (w == 0) done.push_back({t + T.tCL + T.burst, e.parent});
        q.erase(index);
        find_hit(w, pl.bank, index);  // the erased entry was the oldest hit
        if (!q.empty()) b.head_seq[w] = q.front().seq;
        if (q.empty()) mask_[w] &= ~(uint64_t(1) << pl.bank);
        if (--count_[w] == 0 && queued() == 0) refresh_if_owed();
      }
      break;
    }
  }
  replan();
}

}  // namespace indexsim::model::dram
