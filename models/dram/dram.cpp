// SPDX-License-Identifier: Apache-2.0
#include "models/dram/dram.hpp"

#include <algorithm>
#include <functional>
#include <stdexcept>
#include <string>

namespace indexsim::model::dram {

namespace {

constexpr size_t kLatencyBuckets = 16384;   // 1 ns each: covers 16 us before the tail bucket
constexpr uint32_t kNoParent = ~uint32_t(0);


}  // namespace

DramDevice::DramDevice(DramParams p)
    : p_(std::move(p)),
      map_(p_),
      period_ps_(p_.clock_period_ps),
      controller_latency_ps_(ns_to_ps(p_.controller_latency_ns)),
      lookahead_ps_((p_.t.tCL + p_.t.burst) * p_.clock_period_ps + controller_latency_ps_) {
  if (p_.check_timing) checker_ = std::make_unique<TimingChecker>(p_, /*keep_log=*/true);
  const uint32_t n = p_.pseudo_channels(), per_channel = p_.pseudo_channels_per_channel;
  // Sized once: the controllers keep pointers into it.
  if (p_.command_bus_per_channel) buses_.resize(n / per_channel);
  ctrls_.reserve(n);
  for (uint32_t i = 0; i < n; ++i)
    ctrls_.emplace_back(p_, i, checker_.get(), p_.command_bus_per_channel ? &buses_[i / per_channel] : nullptr);
  if (n >= (1u << kPcBits)) throw std::invalid_argument("dram: more than 65535 pseudo-channels");
  next_at_.assign(n, kNoCycle);
  need_.assign(n, 0);
  latency_hist_.assign(kLatencyBuckets, 0);
}

void DramDevice::schedule(uint32_t pc) {
  const Cycle old = next_at_[pc], t = ctrls_[pc].next_event();
  next_at_[pc] = t;
  if (t < earliest_) {
    earliest_ = t;
  } else if (old == earliest_ && t > old) {
    earliest_ = *std::min_element(next_at_.begin(), next_at_.end());
  }
}

void DramDevice::process_until(Tick now, bool inclusive) {
  // Commands at exactly `now` wait when a request arrives at `now`: they must see it.
  const Cycle limit = inclusive ? now / period_ps_ : (now + period_ps_ - 1) / period_ps_;
  auto due = [&](Cycle at) { return inclusive ? at <= limit : at < limit; };
  if (!due(earliest_)) return;
  batch_.clear();
  Cycle earliest = kNoCycle;
  auto take = [&](uint32_t pc) {
    for (const ChunkDone& d : step_out_) batch_.push_back({d.data_end << kPcBits | pc, d.parent});
    step_out_.clear();
    next_at_[pc] = ctrls_[pc].next_event();
  };
  if (!p_.command_bus_per_channel) {
    for (uint32_t pc = 0; pc < ctrls_.size(); ++pc) {
      if (due(next_at_[pc])) {
        Controller& c = ctrls_[pc];
        const uint32_t queued = c.queued();
        while (due(c.next_event())) c.step(step_out_);
        freed_ += c.queued() < queued;
        take(pc);
      }
      earliest = std::min(earliest, next_at_[pc]);
    }
  } else {
    // A channel's pseudo-channels share its command bus: their commands go in time order (ties to
    // the lower one), each seeing the bus as the others left it.
    const uint32_t k = p_.pseudo_channels_per_channel;
    for (uint32_t first = 0; first < ctrls_.size(); first += k) {
      for (;;) {
        uint32_t pc = first;
        for (uint32_t i = first + 1; i < first + k; ++i)
          if (next_at_[i] < next_at_[pc]) pc = i;
        if (!due(next_at_[pc])) break;
        const uint32_t queued = ctrls_[pc].queued();
        ctrls_[pc].step(step_out_);
        freed_ += ctrls_[pc].queued() < queued;
        take(pc);
      }
      for (uint32_t i = first; i < first + k; ++i) earliest = std::min(earliest, next_at_[i]);
    }
  }
  earliest_ = earliest;
  // Each pseudo-channel's reads finish in order and at most one per clock, so sorting by (clock,
  // pseudo-channel) gives the order a command-by-command walk over all of them would have given.
  // Every read of this batch ends after every read of earlier batches (constant read latency).
  if (batch_.empty()) return;
  // Usually sorted already: the controllers are visited in order and most issue at the same clock.
  auto by_key = [](const Done& a, const Done& b) { return a.key < b.key; };
  if (!std::is_sorted(batch_.begin(), batch_.end(), by_key)) std::sort(batch_.begin(), batch_.end(), by_key);
  for (const Done& d : batch_) finished_.push_back({d.key >> kPcBits, d.parent});
}

uint32_t DramDevice::new_parent(const MemRequest& req, Tick now, uint32_t chunks) {
  uint32_t slot;
  if (!free_parents_.empty()) {
    slot = free_parents_.back();
    free_parents_.pop_back();
  } else {
    slot = static_cast<uint32_t>(parents_.size());
    parents_.emplace_back();
  }
  parents_[slot] = {req.id, now, chunks, req.write};
  return slot;
}

bool DramDevice::try_enqueue(const MemRequest& req, Tick now) {
  if (req.bytes == 0) throw std::invalid_argument("dram: request " + std::to_string(req.id) + " has 0 bytes");
  if (req.addr + req.bytes > p_.capacity_bytes())
    throw std::out_of_range("dram: request " + std::to_string(req.id) + " at address " +
                            std::to_string(req.addr) + " + " + std::to_string(req.bytes) +
                            " B lies beyond the capacity of " + std::to_string(p_.capacity_bytes()) + " B");
  process_until(now, /*inclusive=*/false);

  // One chunk per interleave block: inside a block the bytes share a row of one pseudo-channel.
  pieces_.clear();
  const uint64_t block = map_.interleave_bytes(), burst = p_.burst_bytes();
  for (uint64_t a = req.addr, end = req.addr + req.bytes; a < end;) {
    const uint64_t b = a / block, e = std::min(end, (b + 1) * block);
    if (b != last_block_) {   // a stream asks for one block several times in a row
      last_block_ = b;
      last_ = map_.decode(a);
    }
    const DramAddress& d = last_;
    const auto bursts = static_cast<uint32_t>((e - 1) / burst - a / burst + 1);
    pieces_.push_back({d.pc, Chunk{kNoParent, d.bank, d.row, bursts, req.write}});
    a = e;
  }
  // All or nothing: every pseudo-channel (or channel) touched must have room for its chunks.
  if (pieces_.size() == 1) {
    if (!has_room(pieces_[0].pc, req.write, 1)) {
      ++rejected_;
      refused_queue_ = uint64_t{queue_of(pieces_[0].pc)} * 2 + req.write;
      return false;
    }
  } else {
    for (const Piece& pc : pieces_) ++need_[queue_of(pc.pc)];
    bool room = true;
    for (const Piece& pc : pieces_) room = room && has_room(queue_of(pc.pc), req.write, need_[queue_of(pc.pc)]);
    for (const Piece& pc : pieces_) need_[queue_of(pc.pc)] = 0;
    if (!room) {
      ++rejected_;
      refused_queue_ = uint64_t{queue_of(pieces_[0].pc)} * 2 + req.write;
      return false;
    }
  }

  const uint32_t parent = req.write ? kNoParent : new_parent(req, now, uint32_t(pieces_.size()));
  const Cycle at = (now + period_ps_ - 1) / period_ps_;
  for (Piece& pc : pieces_) {
    pc.chunk.parent = parent;
    ctrls_[pc.pc].enqueue(pc.chunk, at);
    schedule(pc.pc);
  }
  first_arrival_ = std::min(first_arrival_, now);
  if (req.write) {
    ++writes_;
    bytes_written_ += req.bytes;
    posted_.push_back({req.id, now});
    last_done_ = std::max(last_done_, now);
  } else {
    bytes_read_ += req.bytes;
  }
  return true;
}

bool DramDevice::has_room(uint32_t pc, bool write, uint32_t chunks) const {
  if (!p_.queue_per_channel) return ctrls_[pc].can_accept(write, chunks);
  // One buffer for the channel's pseudo-channels: their queued chunks together.
  uint32_t used = 0;
  for (uint32_t i = queue_of(pc), e = i + p_.pseudo_channels_per_channel; i < e; ++i) used += ctrls_[i].queued(write);
  return used + chunks <= (write ? p_.write_queue_entries : p_.read_queue_entries);
}

Tick DramDevice::last_write_issued_ps() const { return totals().last_write_end * period_ps_; }

Tick DramDevice::next_command_ps() const {
  return earliest_ == kNoCycle ? kNever : earliest_ * period_ps_;
}

Tick DramDevice::next_event() const {
  Tick t = next_command_ps();
  if (t != kNever) t += lookahead_ps_;
  if (!finished_.empty()) t = std::min(t, finished_.front().data_end * period_ps_ + controller_latency_ps_);
  if (!posted_.empty()) t = std::min(t, posted_.front().done);
  return t;
}

void DramDevice::record_latency(Tick latency) {
  latency_sum_ps_ += double(latency);
  latency_hist_[std::min<size_t>(latency / kPsPerNs, kLatencyBuckets - 1)]++;
}

void DramDevice::advance(Tick now, std::vector<MemCompletion>& done) {
  process_until(now, /*inclusive=*/true);
  for (const MemCompletion& c : posted_) done.push_back(c);
  posted_.clear();
  // The parents completing now were last touched when they were enqueued, thousands of requests
  // ago: ask for all their lines at once rather than one miss after another.
  for (const ChunkDone& d : finished_) {
    if (d.data_end * period_ps_ + controller_latency_ps_ > now) break;
    __builtin_prefetch(&parents_[d.parent]);
  }
  while (!finished_.empty()) {
    const Tick t = finished_.front().data_end * period_ps_ + controller_latency_ps_;
    if (t > now) break;
    const uint32_t slot = finished_.front().parent;
    finished_.pop_front();
    Parent& par = parents_[slot];
    if (--par.remaining != 0) continue;
    done.push_back({par.id, t});
    ++reads_;
    record_latency(t - par.arrival);
    last_done_ = std::max(last_done_, t);
    free_parents_.push_back(slot);
  }
}

Tick DramDevice::idle_read_latency_ps() const {
  // A closed bank (the state refresh leaves it in): ACT, then RD, then the burst.
  return (p_.t.tRCDRD + p_.t.tCL + p_.t.burst) * period_ps_ + controller_latency_ps_;
}

ControllerStats DramDevice::totals() const {
  ControllerStats s;
  for (const Controller& c : ctrls_) {
    const ControllerStats& x = c.stats();
    s.row_hits += x.row_hits;
    s.row_misses += x.row_misses;
    s.row_conflicts += x.row_conflicts;
    s.activates += x.activates;
    s.precharges += x.precharges;
    s.refreshes += x.refreshes;
    s.read_bursts += x.read_bursts;
    s.write_bursts += x.write_bursts;
    s.refreshes_postponed += x.refreshes_postponed;
    s.refreshes_pulled_in += x.refreshes_pulled_in;
    s.refresh_stall_cycles += x.refresh_stall_cycles;
    s.last_write_end = std::max(s.last_write_end, x.last_write_end);
  }
  return s;
}

void DramDevice::report(StatSink& sink, const std::string& component) const {
  const ControllerStats s = totals();
  // Writes are posted: the run lasts until the last write burst is on the bus, not until it was
  // accepted.
  const Tick end = std::max(last_done_, s.write_bursts ? s.last_write_end * period_ps_ : Tick(0));
  const double elapsed_ps = end > first_arrival_ && first_arrival_ != kNever ? double(end - first_arrival_) : 0.0;
  auto percentile = [&](double q) {
    uint64_t total = 0;
    for (uint64_t c : latency_hist_) total += c;
    if (total == 0) return 0.0;
    const auto target = static_cast<uint64_t>(std::ceil(q * double(total)));
    uint64_t seen = 0;
    for (size_t i = 0; i < latency_hist_.size(); ++i) {
      seen += latency_hist_[i];
      if (seen >= target) return double(i);
    }
    return double(latency_hist_.size() - 1);
  };
  const double busy_ps = double(s.read_bursts + s.write_bursts) * double(p_.t.burst * period_ps_);
  sink.add(component, "reads", double(reads_), "count", "read requests completed");
  sink.add(component, "writes", double(writes_), "count", "write requests accepted (posted)");
  sink.add(component, "write_bursts_issued", double(s.write_bursts), "count",
           "write bursts issued to the DRAM (accepted writes still queued are not)");
  sink.add(component, "bytes_read", double(bytes_read_), "bytes", "bytes of read requests accepted");
  sink.add(component, "bytes_written", double(bytes_written_), "bytes", "bytes of write requests accepted");
  sink.add(component, "row_hits", double(s.row_hits), "count", "chunks served from an open row");
  sink.add(component, "row_misses", double(s.row_misses), "count", "chunks that activated a closed bank");
  sink.add(component, "row_conflicts", double(s.row_conflicts), "count", "chunks that closed another row first");
  sink.ratio(component, "row_hit_rate", {"row_hits"}, {"row_hits", "row_misses", "row_conflicts"},
             "row hits / (hits + misses + conflicts)");
  sink.add(component, "activates", double(s.activates), "count", "ACT commands");
  sink.add(component, "precharges", double(s.precharges), "count", "banks closed by PRE or PREA");
  sink.add(component, "refreshes", double(s.refreshes), "count", "REF (all-bank) or REFsb (per-bank) commands");
  sink.add(component, "refreshes_postponed", double(s.refreshes_postponed), "count",
           "due refreshes deferred while requests were queued (refresh_postpone_max)");
  sink.add(component, "refreshes_pulled_in", double(s.refreshes_pulled_in), "count",
           "refreshes issued ahead of schedule while idle (refresh_pull_in_max)");
  sink.add(component, "refresh_stall_ns", double(s.refresh_stall_cycles) * double(period_ps_) / 1000.0 / p_.pseudo_channels(),
           "ns", "per pseudo-channel: time requests waited for refresh (all-bank: drain + tRFC; per-bank: its bank's share)");
  // A mean of nothing is not zero: without reads there is no read latency row (n/a), not 0 ns.
  if (reads_) {
    sink.add(component, "read_latency_mean_ns", latency_sum_ps_ / double(reads_) / 1000.0, "ns", "arrival to last byte, mean");
    sink.add(component, "read_latency_p50_ns", percentile(0.50), "ns", "median, 1 ns resolution");
    sink.add(component, "read_latency_p99_ns", percentile(0.99), "ns", "99th percentile, 1 ns resolution");
  }
  sink.add(component, "bus_utilisation", elapsed_ps > 0 ? busy_ps / (elapsed_ps * p_.pseudo_channels()) : 0.0,
           "fraction", "data-bus busy time / (pseudo-channels x elapsed)");
  sink.add(component, "bandwidth_GBps",
           elapsed_ps > 0 ? double(bytes_read_ + bytes_written_) / elapsed_ps * 1000.0 : 0.0, "GB/s",
           "bytes accepted / (last read completion or write burst - first arrival)");
  for (size_t i = 0; i < kTimingFieldCount; ++i)
    sink.add(component, std::string("clocks.") + kTimingFields[i].name, double(p_.t.*kTimingFields[i].field), "tCK",
             "clocks the run used (a value in ns rounded up to the next clock)");
  sink.add(component, "peak_bandwidth_GBps", peak_bandwidth_GBps(), "GB/s", "pins x data rate");
  sink.add(component, "rejected", double(rejected_), "count", "requests refused by a full queue");
  if (checker_)
    sink.add(component, "timing_violations", double(checker_->violations().size()), "count",
             "commands that broke a JEDEC constraint (timing checker)");
}

namespace {

std::unique_ptr<MemoryDevice> make_dram(const config::Node& node) {
  return std::make_unique<DramDevice>(load_dram_params(node));
}

}  // namespace

// One implementation; the names say which preset family a config was written for.
INDEXSIM_REGISTER(MemoryRegistry, "memory", "hbm2e", make_dram);
INDEXSIM_REGISTER(MemoryRegistry, "memory", "hbm3", make_dram);
INDEXSIM_REGISTER(MemoryRegistry, "memory", "hbm3e", make_dram);
INDEXSIM_REGISTER(MemoryRegistry, "memory", "ddr5", make_dram);

}  // namespace indexsim::model::dram
