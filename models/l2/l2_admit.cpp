// SPDX-License-Identifier: Apache-2.0
// The L2's admission of a request (MemoryDevice::try_enqueue): all of its lines' pieces go into
// their slices' queues or none does; a refused request waits in the table of waiting requests
// (waiting_table.hpp) with the lines, copy sets and slice counts built for it, so that its retries
// do not build them again.
#include "models/l2/l2.hpp"

#include <algorithm>

namespace indexsim::model {

template <class T>
uint32_t L2Cache::take(std::vector<T>& pool, std::vector<uint32_t>& free, const T& v) {
  if (free.empty()) {
    pool.push_back(v);
    return static_cast<uint32_t>(pool.size() - 1);
  }
  const uint32_t i = free.back();
  free.pop_back();
  pool[i] = v;
  return i;
}

bool L2Cache::try_enqueue(const MemRequest& req, Tick now) {
  const uint64_t first = req.addr / p_.line_B;
  const uint64_t last = (req.addr + std::max<uint32_t>(req.bytes, 1) - 1) / p_.line_B;
  // Admit all pieces or none: count what each slice would take. Each line is hashed once, for its
  // slice and its set: a 2 KiB request has 16 lines, and hashing inside the pairwise count was a
  // twentieth of a run.
  const uint32_t partition = req.source % p_.partitions;
  // A sender that retries under a new id leaves its old entries behind: past a bound (far more
  // than a machine keeps in flight) they are all dropped, which costs only their rebuilding.
  if (waiting_.size() >= kMaxWaiting) {
    waiting_.clear();
    blocked_.clear();
    blocked_free_.clear();
  }
  WaitingRequest* w = waiting_.find(req.id);
  const bool known = w != nullptr && w->addr == req.addr && w->bytes == req.bytes;
  // A queue shrinks only when its slice serves: while the witness's is as full, the answer is the
  // same refusal (retries are most of a memory-bound run's calls here).
  if (known && w->witness_lines != 0 &&
      slices_[w->witness_slice].queue.size() + w->witness_lines > p_.queue_depth_per_slice) {
    ++refused_;
    return false;
  }
  // What a try needs that is a pure function of the request (its lines' home sets, which of them
  // are far reads, how many lines go home to each slice whatever the copies hold) is built at its
  // first try and kept while it waits.
  Blocked& b = known ? blocked_[w->entry] : fresh_;
  if (!known) {
    b.homes.clear();
    index_.of_run(first, last, b.homes);
    b.kinds.clear();
    b.home_counts.clear();
    b.copies.clear();
    b.far_lines = 0;
    for (const SetRef& home : b.homes) {  // a far read's copy is looked up below
      const bool far = p_.replicate_far_reads && !req.write && partition_of(home.slice) != partition;
      b.kinds.push_back(far ? kCopyMiss : kHome);
      // Where the copy would be is a pure function of the line and the reader's partition: placed
      // once here, not at every retry (two divisions a line).
      b.copies.push_back(far ? copy_set(home, partition) : home);
      b.far_lines += far;
      if (far) continue;
      auto it = std::find_if(b.home_counts.begin(), b.home_counts.end(), [&](const auto& c) { return c.first == home.slice; });
      if (it == b.home_counts.end()) b.home_counts.emplace_back(home.slice, 1);
      else ++it->second;
    }
  }
  const auto refuse = [&](uint32_t slice, uint32_t lines) {
    ++refused_;
    if (!known) w = keep_waiting(req, w);
    w->witness_slice = slice;
    w->witness_lines = lines;
    return false;
  };
  // The lines that go home whatever the copies hold may be enough to refuse, before any lookup.
  if (known && w->inline_slices != WaitingRequest::kNotInline) {
    for (uint32_t i = 0; i < w->inline_slices; ++i)
      if (slices_[w->home_slice[i]].queue.size() + w->home_lines[i] > p_.queue_depth_per_slice)
        return refuse(w->home_slice[i], w->home_lines[i]);
  } else {
    for (const auto& [slice, lines] : b.home_counts)
      if (slices_[slice].queue.size() + lines > p_.queue_depth_per_slice) return refuse(slice, lines);
  }
  // Without far reads every line goes home: the kept lines serve as they are, with no copy.
  const std::vector<SetRef>* sets = &b.homes;
  const std::vector<uint8_t>* kinds = &b.kinds;
  if (b.far_lines != 0) {
    // A far read asks its own partition's copy set first. The tags are looked up as the request
    // arrives, apart from the slice's data pipeline: only a read the copy serves waits in that
    // slice's queue; a miss goes on to the home slice without a second wait (measured: a far hit
    // costs hit_latency_far_cycles, whichever way it went).
    // Each lookup is a miss in a table of several MiB, and a memory-bound kernel repeats them at
    // every retry: every copy set's tags are asked for first, then every found line, so that the
    // misses overlap instead of following one another. Lookups change nothing: same answers.
    line_sets_ = b.homes;
    line_copy_ = b.kinds;
    const size_t n = b.homes.size();
    copy_found_.resize(n);
    for (size_t i = 0; i < n; ++i)
      if (b.kinds[i] != kHome) prefetch_tags(b.copies[i].base);
    for (size_t i = 0; i < n; ++i) {
      if (b.kinds[i] == kHome) continue;
      copy_found_[i] = find(b.copies[i].base, first + i);
      if (copy_found_[i] != kNone) __builtin_prefetch(&lines_[copy_found_[i]]);
    }
    for (size_t i = 0; i < n; ++i) {
      if (b.kinds[i] == kHome) continue;
      const uint32_t found = copy_found_[i];
      if (found != kNone && (sector_mask(req, first + i) & ~lines_[found].valid) == 0) {
        line_copy_[i] = kCopyHit;
        line_sets_[i] = b.copies[i];
      }
    }
    sets = &line_sets_;
    kinds = &line_copy_;
  }
  if (overflowing_slice(*sets) != kNone) return refuse(0, 0);
  if (w != nullptr) {
    blocked_free_.push_back(w->entry);
    waiting_.erase(w);
  }
  const uint32_t parent = take(parents_, free_parents_, Parent{req.id, static_cast<uint32_t>(last - first + 1), 0});
  for (uint64_t l = first; l <= last; ++l) {
    const uint8_t mask = sector_mask(req, l);
    const auto [s, base] = (*sets)[l - first];
    // The set's ways are looked up when the slice serves this piece, after the queue ahead of it: ask
    // for them now, so that the lookup does not wait on memory (it was nearly all of find()'s time).
    const char* set = reinterpret_cast<const char*>(&lines_[base]);
    for (size_t b = 0; b < size_t{p_.ways} * sizeof(Line); b += 64) __builtin_prefetch(set + b);
    prefetch_tags(base);
    const uint8_t kind = (*kinds)[l - first];
    copy_misses_ += kind == kCopyMiss;
    const uint32_t piece = take(pieces_, free_pieces_,
                                Piece{parent, l, mask, req.write, req.tag, partition, base, kind == kCopyHit});
    slices_[s].queue.push_back(piece);
    schedule(s, now);
  }
  return true;
}

WaitingRequest* L2Cache::keep_waiting(const MemRequest& req, WaitingRequest* w) {
  // A first refusal (or one under an id that a request of other lines had): the lines built for it
  // (fresh_) stay in the pool, and its table entry points at them until it is taken.
  if (w == nullptr) {
    w = &waiting_.insert(req.id);
    if (blocked_free_.empty()) {
      blocked_free_.push_back(static_cast<uint32_t>(blocked_.size()));
      blocked_.emplace_back();
    }
    w->entry = blocked_free_.back();
    blocked_free_.pop_back();
  }
  const auto& counts = fresh_.home_counts;
  const bool fits = counts.size() <= WaitingRequest::kInline &&
                    std::all_of(counts.begin(), counts.end(), [](const auto& c) { return c.first <= 0xffff && c.second <= 0xffff; });
  w->inline_slices = fits ? static_cast<uint8_t>(counts.size()) : WaitingRequest::kNotInline;
  for (size_t i = 0; fits && i < counts.size(); ++i) {
    w->home_slice[i] = static_cast<uint16_t>(counts[i].first);
    w->home_lines[i] = static_cast<uint16_t>(counts[i].second);
  }
  std::swap(blocked_[w->entry], fresh_);
  w->addr = req.addr;
  w->bytes = req.bytes;
  return w;
}

uint32_t L2Cache::overflowing_slice(const std::vector<SetRef>& sets) {
  // Refused when some slice X has queue(X) + (lines at X) > depth.
  uint32_t full = kNone;
  for (size_t i = 0; i < sets.size() && full == kNone; ++i) {
    const uint32_t s = sets[i].slice;
    if (slices_[s].queue.size() + ++slice_lines_[s] > p_.queue_depth_per_slice) full = s;
  }
  for (const SetRef& at : sets) slice_lines_[at.slice] = 0;
  return full;
}

}  // namespace indexsim::model
