// SPDX-License-Identifier: Apache-2.0
// The GPU L2: address-hashed slices, each a set-associative array of 128 B lines of 32 B sectors,
// LRU, write-back with write-allocate at sector granularity (a write never fetches), MSHRs that
// merge misses to a line in flight, and a per-slice bandwidth. A slice serves its queue in order;
// a miss that finds no free MSHR (or no evictable way) stalls its slice until a fill returns.
// Hit latency depends on whether the requester's partition is the slice's (near) or not (far).
// With replicate_far_reads, a read from another partition than the line's home slice first looks
// for a clean copy in its own partition (the same set of the slice at the same place in that
// partition's range), as it arrives: a hit is served there (its bandwidth, the far hit latency:
// measured, a copy does not shorten the hit); a miss goes to the home slice, and the data it
// returns leaves a copy behind, which takes a way like any line. A write drops the copies. So data
// read from both partitions holds up to two ways per line: an L2 of C bytes keeps about 2C/3 of a
// buffer read by SMs of both partitions (measured: docs/validation-captured.md, "The L2 keeps copies").
#pragma once

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "models/common/fast_div.hpp"
#include "models/common/replacement.hpp"
#include "models/common/port.hpp"
#include "models/l2/set_index.hpp"
#include "models/l2/waiting_table.hpp"

namespace indexsim::model {

struct L2Params {
  double clock_MHz = 0;
  double capacity_MiB = 0;
  uint32_t line_B = 0;
  uint32_t sector_B = 0;
  uint32_t ways = 0;
  uint32_t slices = 0;
  uint32_t partitions = 0;           // a requester's partition is source % partitions
  uint32_t hit_latency_near_cycles = 0;
  uint32_t hit_latency_far_cycles = 0;
  uint32_t miss_latency_cycles = 0;  // added to a fill: L2 to memory-controller fabric, both ways
  bool replicate_far_reads = false;  // a far read leaves a clean copy in the reader's partition
  double slice_bandwidth_Bpc = 0;
  uint32_t mshrs_per_slice = 0;
  uint32_t queue_depth_per_slice = 0;
  // A slice's writebacks sent to the memory and not yet taken by it: a slice whose buffers are all
  // taken cannot evict a dirty line, and stalls until the memory takes one. 0: no bound.
  uint32_t writeback_buffers_per_slice = 0;
  std::string replacement = "lru";   // a ReplacementRegistry name (models/replacement/)
  // How a line finds its slice and set (models/l2/set_index.hpp): hashed (lines land independently,
  // a set can overflow before the cache is full) or block_permutation (a contiguous buffer fills
  // the cache before any set overflows).
  std::string set_index = "hashed";

  static L2Params from(const config::Node& n);
  uint64_t capacity_bytes() const { return static_cast<uint64_t>(capacity_MiB * 1024.0 * 1024.0); }
  uint32_t sets_per_slice() const {
    return static_cast<uint32_t>(capacity_bytes() / (uint64_t{line_B} * ways * slices));
  }
};

class L2Cache : public FrontDevice {
 public:
  explicit L2Cache(const L2Params& p);
  void attach(std::unique_ptr<MemoryDevice> downstream) override { down_.reset(std::move(downstream)); }

  bool try_enqueue(const MemRequest& req, Tick now) override;  // l2_admit.cpp
  Tick next_event() const override { return std::min(events_.top_time(), down_.next_event()); }
  void advance(Tick now, std::vector<MemCompletion>& done) override;
  double peak_bandwidth_GBps() const override;
  Tick idle_read_latency_ps() const override;
  uint64_t capacity_bytes() const override { return p_.capacity_bytes(); }
  void report(StatSink& sink, const std::string& component) const override;
  void warm(const MemRequest& req) override;  // l2_warm.cpp
  // LRU and FIFO keep a set's latest lines: what older accesses left is gone once every set has had
  // its ways' worth since (the fast mode's margin over the capacity sees to that). Other policies
  // may keep an old line through any scan.
  uint64_t warm_reach_bytes() const override { return first_smallest_ ? p_.capacity_bytes() : UINT64_MAX; }
  void set_write_accounts(WriteAccounts account_of, uint32_t accounts) override;
  uint64_t dirty_bytes(uint32_t account) const override {
    return account < dirty_held_.size() ? dirty_held_[account] : 0;
  }

 private:
  static constexpr uint32_t kNone = ~0u;
  struct Line {  // its tag is in tags_
    uint64_t repl = 0;  // the replacement policy's word
    uint32_t mshr = kNone;
    uint8_t valid = 0, dirty = 0;
  };
  struct Piece {  // the part of a request that falls in one line
    uint32_t parent;
    uint64_t line;
    uint8_t mask;
    bool write;
    uint8_t tag;  // the request's MemRequest::tag
    uint32_t partition;
    uint32_t base;  // set_of(line).base, hashed once when queued; the copy's set while at_copy
    bool at_copy;   // queued at the copy's slice in the requester's partition, not yet at home
  };
  struct Parent {
    uint64_t id;
    uint32_t remaining;
    Tick done;
  };
  struct Mshr {
    uint32_t line_index = kNone;
    uint32_t fills = 0;  // downstream reads outstanding
    uint8_t mask = 0;    // sectors in flight
    // Pieces waiting for the fill, in arrival order. Nearly every fill has one: it sits here,
    // in the MSHR's own cache line; merged misses go to `more`.
    uint32_t first_waiter = kNone;
    std::vector<uint32_t> more;
    void wait(uint32_t piece) {
      if (first_waiter == kNone) first_waiter = piece;
      else more.push_back(piece);
    }
  };
  // A slice's queue of pieces, first in first out: a ring of piece indices whose capacity (a power
  // of two) doubles when full. Its size is asked for each slice a request touches at every try of
  // it, and a std::deque's size() is a dozen instructions over four of its pointers.
  class PieceQueue {
   public:
    size_t size() const { return size_t(tail_ - head_); }
    bool empty() const { return tail_ == head_; }
    uint32_t front() const { return ring_[head_ & mask_]; }
    void pop_front() { ++head_; }
    void push_back(uint32_t piece) {
      if (size() == ring_.size()) grow();
      ring_[tail_++ & mask_] = piece;
    }

   private:
    void grow() {
      const size_t n = size();
      std::vector<uint32_t> ring(std::max<size_t>(16, 2 * ring_.size()));
      for (size_t i = 0; i < n; ++i) ring[i] = ring_[(head_ + i) & mask_];
      ring_.swap(ring);
      mask_ = ring_.size() - 1;
      head_ = 0;
      tail_ = n;
    }
    std::vector<uint32_t> ring_;
    uint64_t head_ = 0, tail_ = 0, mask_ = 0;  // pieces head_ .. tail_ - 1 at ring_[i & mask_]
  };
  struct Slice {
    PieceQueue queue;
    Tick free_at = 0;
    bool blocked = false, scheduled = false;
    uint32_t writebacks_out = 0;  // writebacks sent below whose acceptance has not come back
    bool waits_writeback = false; // blocked on a dirty victim with every writeback buffer taken
    std::vector<uint32_t> free_mshrs;
  };
  struct Event {
    bool service;  // true: a slice serves its queue head; false: a request completes
    uint32_t index;
  };

  using SetRef = SetIndex::Ref;  // base: the set's first way in lines_
  SetRef set_of(uint64_t line) const { return index_.of(line); }
  uint32_t partition_of(uint32_t slice) const { return slice_partition_[slice]; }
  SetRef copy_set(SetRef home, uint32_t partition) const {  // where `partition` keeps copies of home's lines
    return index_.in_partition(home, partition, p_.partitions);
  }
  bool copy_lookup(uint32_t slice, uint32_t piece, Tick t);  // served at the copy's slice; false: sent home (evicted)
  void leave_copy(uint32_t piece, uint32_t home_slice, Tick t);  // a far read served at home
  uint32_t drop_copies(uint64_t line, SetRef home);              // a write: copies elsewhere go; how many
  uint32_t warm_way(uint32_t base, uint64_t line);  // warm(): the way holding `line` now, kNone if it waits on a fill
  uint32_t find(uint32_t base, uint64_t line) const;                // the way holding `line`, or kNone
  uint8_t sector_mask(const MemRequest& req, uint64_t line) const;  // sectors of `line` that `req` touches
  Tick hit_latency(uint32_t slice, uint32_t partition) const;
  void schedule(uint32_t slice, Tick t);
  void serve(uint32_t slice, Tick t);
  bool lookup(uint32_t slice, uint32_t piece, Tick t);  // false: stall (no MSHR or way)
  uint32_t victim(uint32_t base);                  // kNone when every way is pending
  void writeback_taken(uint64_t id, Tick t);       // the memory took writeback `id`: its slice's buffer frees
  uint32_t allocate(uint32_t base, uint64_t line, uint32_t slice, Tick t);  // victim evicted, `line` in; kNone as victim
  void evict(uint32_t way, uint32_t slice, Tick t);  // writes a dirty line back; empties the way
  void fetch(uint32_t mshr, uint64_t line, uint8_t need, uint32_t slice, Tick t);
  void piece_done(uint32_t piece, Tick t);
  void fill_done(uint32_t mshr, Tick t);
  // `line`'s dirty sectors go from `before` to `after`: what is held dirty follows.
  void redirty(uint64_t line, uint8_t before, uint8_t after) {
    const auto runs = [](uint8_t m) { return __builtin_popcount(m & ~(m << 1) & 0xff); };
    const int64_t sectors = __builtin_popcount(after) - __builtin_popcount(before);
    dirty_held_[account_of_ ? account_of_(line * p_.line_B) : 0] += uint64_t(sectors * int64_t{p_.sector_B});
    runs_held_ += uint64_t(int64_t{runs(after)} - runs(before));
  }
  template <class T> static uint32_t take(std::vector<T>& pool, std::vector<uint32_t>& free, const T& v);

  L2Params p_;
  Clock clk_;
  uint32_t sectors_per_line_;
  SetIndex index_;
  FastDiv by_slices_;  // writeback_taken(): a writeback's slice from its id (evict() numbers them), without a 64-bit div
  Downstream down_;
  EventHeap<Event> events_;
  std::vector<Line> lines_;
  // Each way's line address + 1 (0: invalid), apart from the rest of the line: a lookup scans only
  // the set's tags, 128 bytes for 16 ways, and that scan was most of a gather-heavy prefill's time.
  std::vector<uint64_t> tags_;
  std::vector<Slice> slices_;
  std::vector<Mshr> mshrs_;
  std::vector<Piece> pieces_;
  std::vector<uint32_t> free_pieces_;
  std::vector<Parent> parents_;
  std::vector<uint32_t> free_parents_;
  std::vector<MemCompletion> buf_;
  std::vector<SetRef> line_sets_;   // try_enqueue: the slice and set of each line of the request
  enum : uint8_t { kHome, kCopyHit, kCopyMiss };
  std::vector<uint8_t> line_copy_;  // try_enqueue: whether each line goes home, or to its copy, or missed it
  // A refused request is retried at every event here (its sender waits on this device), tens of
  // times an acceptance in a memory-bound kernel: what a try needs that is a pure function of the
  // request is kept from its first refusal until it is taken (waiting_ finds it by id). A
  // direct-mapped table of 4096 lost most of them: a GEMM keeps thousands of requests waiting.
  struct Blocked {
    std::vector<SetRef> homes;   // each line's home slice and set
    std::vector<uint8_t> kinds;  // kHome, or kCopyMiss for a far read (its copy looked up at each try)
    std::vector<std::pair<uint32_t, uint32_t>> home_counts;  // (slice, lines that go home there whatever the copies hold)
    std::vector<SetRef> copies;  // a far read's copy set in the reader's partition (the home for the others)
    uint32_t far_lines = 0;      // lines of kind kCopyMiss
  };
  static constexpr size_t kMaxWaiting = size_t{1} << 20;
  WaitingTable waiting_;
  std::vector<Blocked> blocked_;                   // the kept lines of waiting requests, and free entries
  std::vector<uint32_t> blocked_free_;
  Blocked fresh_;                                  // try_enqueue: a first try's, kept if it is refused
  std::vector<uint32_t> slice_partition_;          // each slice's partition
  std::vector<uint32_t> slice_lines_;              // overflowing_slice(): lines counted at each slice (0 between calls)
  std::vector<uint32_t> copy_found_;  // try_enqueue: the way holding each far line's copy, or kNone
  // Asks for a set's tags (every host line they span) ahead of a lookup: a prefetch changes no state.
  void prefetch_tags(uint32_t base) const {
    const char* tags = reinterpret_cast<const char*>(&tags_[base]);
    const size_t bytes = size_t{p_.ways} * sizeof(uint64_t);
    for (size_t o = 0; o < bytes; o += 64) __builtin_prefetch(tags + o);
    __builtin_prefetch(tags + bytes - 1);
  }
  // A slice whose queue cannot take the lines at the slices `sets` names, kNone if every one can.
  uint32_t overflowing_slice(const std::vector<SetRef>& sets);
  // A request refused for the first time: fresh_ is kept for it in the pool; its table entry.
  WaitingRequest* keep_waiting(const MemRequest& req, WaitingRequest* w);
  std::unique_ptr<ReplacementPolicy> policy_;
  bool first_smallest_ = false;  // policy_->evicts_first_smallest()
  uint64_t wb_ids_ = 0;
  uint64_t read_hits_ = 0, read_misses_ = 0, merged_ = 0, write_hits_ = 0, write_misses_ = 0;
  uint64_t writebacks_ = 0, dirtied_ = 0, fills_ = 0, near_ = 0, far_ = 0, stalls_ = 0, refused_ = 0;
  uint64_t copy_hits_ = 0, copy_misses_ = 0, copies_made_ = 0, copies_dropped_ = 0, writeback_stalls_ = 0;
  TagCounters by_tag_;  // reads by what they are: bytes asked for, bytes hit
  WriteAccounts account_of_;  // which region each line's dirty bytes go to; none: one account
  std::vector<uint64_t> dirty_held_ = std::vector<uint64_t>(1, 0);
  uint64_t runs_held_ = 0;  // dirty sector runs: the writebacks that evicting every line would make
};

}  // namespace indexsim::model
