// SPDX-License-Identifier: Apache-2.0
#include "models/l2/l2.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace indexsim::model {

using config::Rule;

L2Params L2Params::from(const config::Node& n) {
  L2Params p;
  p.clock_MHz = n.req<double>("clock_MHz", Rule::clock_MHz());
  p.capacity_MiB = n.req<double>("capacity_MiB", Rule::positive());
  p.line_B = n.req<uint32_t>("line_B", Rule::power_of_two());
  p.sector_B = n.req<uint32_t>("sector_B", Rule::power_of_two());
  p.ways = n.req<uint32_t>("ways", Rule::positive());
  p.slices = n.req<uint32_t>("slices", Rule::positive());
  p.partitions = n.req<uint32_t>("partitions", Rule::positive());
  p.hit_latency_near_cycles = n.req<uint32_t>("hit_latency_near_cycles", Rule::positive());
  p.hit_latency_far_cycles = n.req<uint32_t>("hit_latency_far_cycles", Rule::positive());
  p.miss_latency_cycles = n.req<uint32_t>("miss_latency_cycles", Rule::non_negative());
  p.replicate_far_reads = n.req<bool>("replicate_far_reads");
  p.slice_bandwidth_Bpc = n.req<double>("slice_bandwidth_Bpc", Rule::positive());
  p.mshrs_per_slice = n.req<uint32_t>("mshrs_per_slice", Rule::positive());
  p.queue_depth_per_slice = n.req<uint32_t>("queue_depth_per_slice", Rule::positive());
  // Optional: a file without it lets writebacks wait below without bound (the model before it).
  p.writeback_buffers_per_slice = n.opt<uint32_t>("writeback_buffers_per_slice", 0, Rule::range(0, 65535));
  p.replacement = n.req<std::string>("replacement", Rule::choice(ReplacementRegistry::instance().names()));
  p.set_index = n.req<std::string>("set_index", Rule::choice({"hashed", "block_permutation"}));
  if (p.ways > kMaxReplacementWays) n.fail("ways", std::to_string(p.ways), "must be <= " + std::to_string(kMaxReplacementWays));
  if (p.sector_B > p.line_B || p.line_B / p.sector_B > 8)
    n.fail("sector_B", std::to_string(p.sector_B), "must divide line_B into 1 to 8 sectors");
  if (p.partitions > p.slices) n.fail("partitions", std::to_string(p.partitions), "must be <= slices");
  if (p.replicate_far_reads && p.slices % p.partitions != 0)
    n.fail("partitions", std::to_string(p.partitions),
           "must divide slices (" + std::to_string(p.slices) + ") when replicate_far_reads is true");
  const uint64_t per_set_slice = uint64_t{p.line_B} * p.ways * p.slices;
  if (p.capacity_bytes() % per_set_slice != 0 || p.capacity_bytes() < per_set_slice)
    n.fail("capacity_MiB", std::to_string(p.capacity_MiB),
           "must be a whole number of sets: a multiple of line_B x ways x slices = " +
               std::to_string(per_set_slice) + " bytes");
  return p;
}

L2Cache::L2Cache(const L2Params& p)
    : p_(p), clk_(p.clock_MHz), sectors_per_line_(p.line_B / p.sector_B),
      index_(p.slices, p.sets_per_slice(), p.ways, p.set_index == "block_permutation"), by_slices_(p.slices),
      lines_(static_cast<size_t>(p.slices) * p.sets_per_slice() * p.ways), tags_(lines_.size(), 0), slices_(p.slices),
      mshrs_(static_cast<size_t>(p.slices) * p.mshrs_per_slice),
      policy_(ReplacementRegistry::instance().make(p.replacement, 1)),
      first_smallest_(policy_->evicts_first_smallest()) {
  slice_lines_.assign(p_.slices, 0);
  for (uint32_t s = 0; s < p_.slices; ++s) slice_partition_.push_back(static_cast<uint32_t>(uint64_t{s} * p_.partitions / p_.slices));
  for (uint32_t s = 0; s < p_.slices; ++s)
    for (uint32_t m = p_.mshrs_per_slice; m-- > 0;) slices_[s].free_mshrs.push_back(s * p_.mshrs_per_slice + m);
}

uint32_t L2Cache::find(uint32_t base, uint64_t line) const {
  for (uint32_t w = 0; w < p_.ways; ++w)
    if (tags_[base + w] == line + 1) return base + w;
  return kNone;
}

uint8_t L2Cache::sector_mask(const MemRequest& req, uint64_t line) const {
  const uint64_t lo = std::max<uint64_t>(req.addr, line * p_.line_B);
  const uint64_t hi = std::min<uint64_t>(req.addr + std::max<uint32_t>(req.bytes, 1), (line + 1) * p_.line_B);
  const auto s0 = static_cast<uint32_t>((lo - line * p_.line_B) / p_.sector_B);
  const auto s1 = static_cast<uint32_t>((hi - 1 - line * p_.line_B) / p_.sector_B);
  return static_cast<uint8_t>(((1u << (s1 + 1)) - 1) & ~((1u << s0) - 1));
}

Tick L2Cache::hit_latency(uint32_t slice, uint32_t partition) const {
  return clk_.cycles(partition_of(slice) == partition ? p_.hit_latency_near_cycles : p_.hit_latency_far_cycles);
}

void L2Cache::schedule(uint32_t s, Tick t) {
  Slice& sl = slices_[s];
  if (sl.scheduled || sl.blocked || sl.queue.empty()) return;
  sl.scheduled = true;
  events_.push(std::max(t, sl.free_at), {true, s});
}

void L2Cache::serve(uint32_t s, Tick t) {
  Slice& sl = slices_[s];
  sl.scheduled = false;
  if (sl.blocked || sl.queue.empty()) return;
  const uint32_t piece = sl.queue.front();
  const bool at_copy = pieces_[piece].at_copy;
  if (!at_copy && !lookup(s, piece, t)) {
    sl.blocked = true;
    ++stalls_;
    return;
  }
  sl.queue.pop_front();
  if (at_copy && !copy_lookup(s, piece, t)) {  // the copy is gone: sent home, no data moved here
    schedule(s, t);
    return;
  }
  const uint32_t bytes = static_cast<uint32_t>(__builtin_popcount(pieces_[piece].mask)) * p_.sector_B;
  sl.free_at = t + clk_.cycles(static_cast<uint64_t>(std::ceil(bytes / p_.slice_bandwidth_Bpc - 1e-9)));
  schedule(s, sl.free_at);
}

bool L2Cache::copy_lookup(uint32_t s, uint32_t pi, Tick t) {
  Piece& pc = pieces_[pi];
  const uint32_t found = find(pc.base, pc.line);  // a copy never has a fill in flight: leave_copy makes it whole
  if (found != kNone && (pc.mask & ~lines_[found].valid) == 0) {
    const uint64_t bytes = uint64_t(__builtin_popcount(pc.mask)) * p_.sector_B;
    by_tag_.read(pc.tag, bytes, bytes);
    policy_->touch(lines_[found].repl);
    ++read_hits_;
    ++copy_hits_;
    ++near_;
    // A copy keeps the line's traffic in the reader's partition but does not shorten the hit: a warm
    // chase on one SM still splits about evenly between the near and far latencies (measured,
    // traces/captured/membench_h200_chase_l2_dist.tsv).
    piece_done(pi, t + clk_.cycles(p_.hit_latency_far_cycles));
    return true;
  }
  // The copy was there when the request arrived and has been evicted since: on to the home slice.
  ++copy_misses_;
  const SetRef home = set_of(pc.line);
  pc.at_copy = false;
  pc.base = home.base;
  slices_[home.slice].queue.push_back(pi);
  schedule(home.slice, t);
  return false;
}

void L2Cache::leave_copy(uint32_t pi, uint32_t home_slice, Tick t) {
  const Piece& pc = pieces_[pi];
  if (!p_.replicate_far_reads || pc.write || partition_of(home_slice) == pc.partition) return;
  const SetRef c = copy_set({home_slice, pc.base}, pc.partition);
  uint32_t found = find(c.base, pc.line);
  if (found == kNone) {
    found = allocate(c.base, pc.line, c.slice, t);
    if (found == kNone) return;  // every way waits on a fill: no copy this time
    ++copies_made_;
  } else {
    policy_->touch(lines_[found].repl);
  }
  lines_[found].valid |= pc.mask;
}

uint32_t L2Cache::drop_copies(uint64_t line, SetRef home) {
  uint32_t dropped = 0;
  for (uint32_t p = 0; p < p_.partitions; ++p) {
    if (p == partition_of(home.slice)) continue;
    const uint32_t found = find(copy_set(home, p).base, line);
    if (found == kNone) continue;
    lines_[found] = Line{};  // a copy is clean: nothing to write back
    tags_[found] = 0;
    ++dropped;
  }
  return dropped;
}

uint32_t L2Cache::allocate(uint32_t base, uint64_t line, uint32_t s, Tick t) {
  const uint32_t w = victim(base);
  if (w == kNone) return kNone;
  // A dirty victim needs a writeback buffer: with all of them waiting on the memory, the slice
  // waits too, as it does for an MSHR. Without this bound a write stream's evictions piled up below
  // (two million at once on a 1 GiB fill) and the stream ran faster than the memory can write.
  if (p_.writeback_buffers_per_slice != 0 && tags_[w] != 0 && lines_[w].dirty != 0 &&
      slices_[s].writebacks_out >= p_.writeback_buffers_per_slice) {
    slices_[s].waits_writeback = true;
    ++writeback_stalls_;
    return kNone;
  }
  evict(w, s, t);
  tags_[w] = line + 1;
  policy_->insert(lines_[w].repl);
  return w;
}

uint32_t L2Cache::victim(uint32_t base) {
  // An invalid way first; a way with a fill in flight never; among the rest, the policy's choice.
  // Every miss runs this: for a policy whose victim is the first smallest word, one pass finds it.
  if (first_smallest_) {
    uint32_t best = kNone;
    for (uint32_t w = 0; w < p_.ways; ++w) {
      const Line& l = lines_[base + w];
      if (l.mshr != kNone) continue;
      if (tags_[base + w] == 0) return base + w;
      if (best == kNone || l.repl < lines_[best].repl) best = base + w;
    }
    return best;
  }
  uint64_t eligible = 0;
  for (uint32_t w = 0; w < p_.ways; ++w) {
    const Line& l = lines_[base + w];
    if (l.mshr != kNone) continue;
    if (tags_[base + w] == 0) return base + w;
    eligible |= uint64_t{1} << w;
  }
  return eligible == 0 ? kNone : base + policy_->victim(&lines_[base].repl, sizeof(Line), eligible);
}

void L2Cache::evict(uint32_t way, uint32_t s, Tick t) {
  Line& l = lines_[way];
  if (tags_[way] != 0 && l.dirty) {
    const uint64_t line = tags_[way] - 1;
    for (uint32_t i = 0; i < sectors_per_line_;) {
      if (!(l.dirty >> i & 1)) { ++i; continue; }
      uint32_t j = i;
      while (j < sectors_per_line_ && (l.dirty >> j & 1)) ++j;
      MemRequest w;
      // Odd ids: writebacks, numbered so that their slice is the number modulo the slices; their
      // completion (a posted write's acceptance) frees that slice's buffer.
      w.id = ((wb_ids_++ * p_.slices + s) << 1) | 1;
      w.addr = line * p_.line_B + uint64_t{i} * p_.sector_B;
      w.bytes = (j - i) * p_.sector_B;
      w.write = true;
      w.source = s;
      ++slices_[s].writebacks_out;
      down_.send(w, t);
      ++writebacks_;
      i = j;
    }
    redirty(line, l.dirty, 0);
  }
  l = Line{};
  tags_[way] = 0;
}

void L2Cache::fetch(uint32_t m, uint64_t line, uint8_t need, uint32_t s, Tick t) {
  for (uint32_t i = 0; i < sectors_per_line_;) {
    if (!(need >> i & 1)) { ++i; continue; }
    uint32_t j = i;
    while (j < sectors_per_line_ && (need >> j & 1)) ++j;
    MemRequest r;
    r.id = uint64_t{m} << 1;
    r.addr = line * p_.line_B + uint64_t{i} * p_.sector_B;
    r.bytes = (j - i) * p_.sector_B;
    r.source = s;
    down_.send(r, t);
    ++mshrs_[m].fills;
    ++fills_;
    i = j;
  }
  mshrs_[m].mask |= need;
}

bool L2Cache::lookup(uint32_t s, uint32_t pi, Tick t) {
  const Piece pc = pieces_[pi];
  const uint32_t base = pc.base;
  uint32_t found = find(base, pc.line);
  Slice& sl = slices_[s];
  const Tick lat = hit_latency(s, pc.partition);
  const bool near = lat == clk_.cycles(p_.hit_latency_near_cycles);

  if (pc.write) {  // write-allocate at sector granularity: the written sectors become valid, no fetch
    if (found == kNone) {
      found = allocate(base, pc.line, s, t);
      if (found == kNone) return false;
      ++write_misses_;
    } else {
      policy_->touch(lines_[found].repl);
      ++write_hits_;
    }
    if (p_.replicate_far_reads) copies_dropped_ += drop_copies(pc.line, {s, base});
    Line& l = lines_[found];
    dirtied_ += uint64_t(__builtin_popcount(pc.mask & ~l.dirty)) * p_.sector_B;
    redirty(pc.line, l.dirty, l.dirty | pc.mask);
    l.valid |= pc.mask;
    l.dirty |= pc.mask;
    (near ? near_ : far_)++;
    piece_done(pi, t + lat);
    return true;
  }

  // Bytes of this read served from what the line holds (its valid sectors), by the request's tag;
  // counted where the read is taken, not when it stalls and will be looked up again.
  const uint8_t held = found == kNone ? 0 : pc.mask & lines_[found].valid;
  const auto count_read = [&] {
    by_tag_.read(pc.tag, uint64_t(__builtin_popcount(pc.mask)) * p_.sector_B,
                 uint64_t(__builtin_popcount(held)) * p_.sector_B);
  };
  if (found != kNone && (pc.mask & ~lines_[found].valid) == 0) {
    count_read();
    policy_->touch(lines_[found].repl);
    ++read_hits_;
    (near ? near_ : far_)++;
    leave_copy(pi, s, t);
    piece_done(pi, t + lat);
    return true;
  }
  if (found != kNone && lines_[found].mshr != kNone) {
    Mshr& m = mshrs_[lines_[found].mshr];
    const uint8_t need = pc.mask & ~lines_[found].valid & ~m.mask;
    if (need == 0) ++merged_; else ++read_misses_;
    if (need) fetch(lines_[found].mshr, pc.line, need, s, t);
    m.wait(pi);
    policy_->touch(lines_[found].repl);
    (near ? near_ : far_)++;
    count_read();
    return true;
  }
  if (sl.free_mshrs.empty()) return false;
  if (found == kNone) {
    found = allocate(base, pc.line, s, t);
    if (found == kNone) return false;
  } else {
    policy_->touch(lines_[found].repl);  // resident with sectors missing
  }
  const uint32_t mi = sl.free_mshrs.back();
  sl.free_mshrs.pop_back();
  Line& l = lines_[found];
  l.mshr = mi;
  mshrs_[mi].line_index = found;
  mshrs_[mi].wait(pi);
  ++read_misses_;
  (near ? near_ : far_)++;
  count_read();
  fetch(mi, pc.line, pc.mask & ~l.valid, s, t);
  return true;
}

void L2Cache::piece_done(uint32_t pi, Tick t) {
  Parent& par = parents_[pieces_[pi].parent];
  par.done = std::max(par.done, t);
  if (--par.remaining == 0) events_.push(par.done, {false, pieces_[pi].parent});
  free_pieces_.push_back(pi);
}

void L2Cache::fill_done(uint32_t mi, Tick t) {
  Mshr& m = mshrs_[mi];
  if (--m.fills != 0) return;  // waiters are answered when every sector in flight has arrived
  Line& l = lines_[m.line_index];
  l.valid |= m.mask;
  l.mshr = kNone;
  const uint32_t s = mi / p_.mshrs_per_slice;
  auto answer = [&](uint32_t pi) {
    leave_copy(pi, s, t);
    piece_done(pi, t + hit_latency(s, pieces_[pi].partition) + clk_.cycles(p_.miss_latency_cycles));
  };
  if (m.first_waiter != kNone) answer(m.first_waiter);
  for (uint32_t pi : m.more) answer(pi);
  m.first_waiter = kNone;
  m.more.clear();
  m.mask = 0;
  m.line_index = kNone;
  Slice& sl = slices_[s];
  sl.free_mshrs.push_back(mi);
  if (sl.blocked) {
    sl.blocked = false;
    schedule(s, t);
  }
}

void L2Cache::writeback_taken(uint64_t id, Tick t) {
  const uint32_t s = static_cast<uint32_t>(by_slices_.mod(id >> 1));
  Slice& sl = slices_[s];
  --sl.writebacks_out;
  if (sl.blocked && sl.waits_writeback) {
    sl.blocked = false;
    sl.waits_writeback = false;
    schedule(s, t);
  }
}

void L2Cache::advance(Tick now, std::vector<MemCompletion>& done) {
  run_until(
      now, down_, events_, buf_,
      [&](const std::vector<MemCompletion>& batch) {
        // A full memory returns dozens of fills at once, each for an MSHR and a line last touched when
        // the miss went out: ask for all of those lines first, so that the misses overlap.
        for (const auto& c : batch)
          if (!(c.id & 1)) __builtin_prefetch(&mshrs_[c.id >> 1]);
        for (const auto& c : batch)
          if (!(c.id & 1)) __builtin_prefetch(&lines_[mshrs_[c.id >> 1].line_index]);
        for (const auto& c : batch) {
          if (!(c.id & 1)) fill_done(static_cast<uint32_t>(c.id >> 1), c.done);
          else writeback_taken(c.id, c.done);
        }
      },
      [&](Tick te) {
        const Event e = events_.pop();
        if (e.service) {
          serve(e.index, te);
        } else {
          done.push_back({parents_[e.index].id, te});
          free_parents_.push_back(e.index);
        }
      });
}

void L2Cache::set_write_accounts(WriteAccounts account_of, uint32_t accounts) {
  for (uint64_t b : dirty_held_)
    if (b != 0) throw std::logic_error("L2Cache::set_write_accounts: the cache already holds dirty data");
  account_of_ = std::move(account_of);
  dirty_held_.assign(std::max(1u, accounts), 0);
}

double L2Cache::peak_bandwidth_GBps() const {
  return p_.slices * p_.slice_bandwidth_Bpc * p_.clock_MHz * 1e6 / 1e9;
}

Tick L2Cache::idle_read_latency_ps() const {
  // Requesters spread over the partitions see near and far slices alike.
  const double near = 1.0 / p_.partitions;
  return static_cast<Tick>(std::llround(near * clk_.cycles(p_.hit_latency_near_cycles) +
                                        (1 - near) * clk_.cycles(p_.hit_latency_far_cycles)));
}

void L2Cache::report(StatSink& sink, const std::string& c) const {
  sink.add(c, "read_hits", static_cast<double>(read_hits_), "count", "reads whose sectors were all valid");
  sink.add(c, "read_misses", static_cast<double>(read_misses_), "count", "reads that fetched at least one sector");
  sink.add(c, "merged_misses", static_cast<double>(merged_), "count", "reads whose missing sectors were already in flight");
  sink.add(c, "write_hits", static_cast<double>(write_hits_), "count", "writes to a present line");
  sink.add(c, "write_misses", static_cast<double>(write_misses_), "count", "writes that allocated a line");
  sink.ratio(c, "hit_rate", {"read_hits", "write_hits"},
             {"read_hits", "read_misses", "merged_misses", "write_hits", "write_misses"},
             "line accesses served without a fetch (merged misses count as misses)");
  sink.ratio(c, "read_hit_rate", {"read_hits"}, {"read_hits", "read_misses", "merged_misses"},
             "read line accesses that hit");
  sink.add(c, "writebacks", static_cast<double>(writebacks_), "count", "dirty sector runs written downstream");
  // A peak, not a counter: not added to for work that was not simulated.
  sink.add(c, "downstream_waiting_max", static_cast<double>(down_.blocked_max()), "entries",
           "most fills and writebacks that waited at once for the memory to take them (simulated kernels)");
  // Every sector made dirty is written downstream once, now or later (in a later step if it is still
  // dirty when the step ends): the step's write traffic in steady state, whatever the L2 held before.
  sink.add(c, "bytes_dirtied", static_cast<double>(dirtied_), "bytes",
           "bytes of clean or absent sectors that writes made dirty: written back sooner or later");
  sink.pending(c, "dirty_runs", static_cast<double>(runs_held_), "count", c, "writebacks",
               "dirty sector runs held at the end: their growth counts in writebacks, so that a write counts "
               "when it is made (docs/metrics.md)");
  sink.add(c, "fills", static_cast<double>(fills_), "count", "sector runs read downstream");
  sink.add(c, "near_accesses", static_cast<double>(near_), "count", "accesses to a slice in the requester's partition");
  sink.add(c, "far_accesses", static_cast<double>(far_), "count", "accesses to a slice in another partition");
  if (p_.replicate_far_reads) {
    sink.add(c, "copy_hits", static_cast<double>(copy_hits_), "count", "far reads served by a copy in the reader's partition");
    sink.add(c, "copy_misses", static_cast<double>(copy_misses_), "count", "far reads that found no copy and went on to the home slice");
    sink.add(c, "copies_made", static_cast<double>(copies_made_), "count", "copies left in a reader's partition (each takes a way)");
    sink.add(c, "copies_dropped", static_cast<double>(copies_dropped_), "count", "copies dropped by a write to their line");
  }
  sink.add(c, "slice_stalls", static_cast<double>(stalls_), "count", "times a slice stalled: no MSHR or evictable way");
  sink.add(c, "writeback_stalls", static_cast<double>(writeback_stalls_), "count",
           "of those, times a dirty victim found its slice's writeback buffers all waiting on the memory");
  sink.add(c, "refused", static_cast<double>(refused_), "count", "requests refused: slice queue full");
  by_tag_.report(sink, c);
  sink.add(c, "downstream_waits", static_cast<double>(down_.refusals()), "count",
           "fills and writebacks the downstream refused at first (they wait and are retried)");
}

INDEXSIM_REGISTER(MemoryRegistry, "memory", "sectored_l2",
                  [](const config::Node& n) -> std::unique_ptr<MemoryDevice> {
                    return std::make_unique<L2Cache>(L2Params::from(n));
                  });

}  // namespace indexsim::model
