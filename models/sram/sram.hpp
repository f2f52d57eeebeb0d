// SPDX-License-Identifier: Apache-2.0
// NPU on-chip SRAM: banks with a bandwidth each and a fixed access latency. As a software-managed
// scratchpad every address is a placement and never misses. As a cache (LRU or FIFO replacement,
// set-associative) a read miss fetches its line from the downstream device and merges with
// misses to the same line in flight; a write allocates without fetching and is written back when
// evicted. A request of several lines (a fast-mode chunk) looks up each, and each counts as an
// access. The lookup happens when the request arrives, so hits and misses follow arrival order.
#pragma once

#include <unordered_map>
#include <memory>
#include <string>
#include <vector>

#include "models/common/replacement.hpp"
#include "models/common/port.hpp"

namespace indexsim::model {

// "scratchpad" (placed explicitly, never misses) or a cache with a replacement policy by its
// ReplacementRegistry name (lru, fifo, srrip, ...), whose misses go to the backing region.
constexpr const char* kScratchpad = "scratchpad";

struct SramParams {
  double clock_MHz = 0;
  double capacity_KiB = 0;
  uint32_t banks = 0;
  uint32_t bank_interleave_B = 0;
  double bank_bandwidth_Bpc = 0;
  uint32_t access_latency_cycles = 0;
  uint32_t queue_depth_per_bank = 0;
  std::string policy = kScratchpad;
  uint32_t line_B = 0;  // cache modes: allocation unit
  uint32_t ways = 0;    // cache modes: associativity

  static SramParams from(const config::Node& n);
  uint64_t capacity_bytes() const { return static_cast<uint64_t>(capacity_KiB * 1024.0); }
};

class NpuSram : public FrontDevice {
 public:
  explicit NpuSram(const SramParams& p);
  void attach(std::unique_ptr<MemoryDevice> downstream) override { down_.reset(std::move(downstream)); }

  bool try_enqueue(const MemRequest& req, Tick now) override;
  Tick next_event() const override { return std::min(events_.top_time(), down_.next_event()); }
  void advance(Tick now, std::vector<MemCompletion>& done) override;
  double peak_bandwidth_GBps() const override;
  Tick idle_read_latency_ps() const override;
  // A scratchpad holds its own capacity; a cache is a window on the whole downstream device.
  uint64_t capacity_bytes() const override;
  void report(StatSink& sink, const std::string& component) const override;
  bool needs_downstream() const override { return is_cache(); }
  bool is_cache() const { return p_.policy != kScratchpad; }
  // Every dirty line goes to the one backing device: one account.
  uint64_t dirty_bytes(uint32_t account) const override { return account == 0 ? dirty_held_ : 0; }

 private:
  struct Way {
    uint64_t tag = 0;  // line + 1; 0 = invalid
    uint64_t repl = 0;   // the replacement policy's word
    bool dirty = false;
  };
  struct Wait {  // a request waiting for the fills of its missing lines
    uint64_t id = 0;
    uint32_t bytes = 0, bank = 0;
    uint32_t lines_left = 0;
    Tick ready = 0;  // the latest of its fills so far
  };
  uint32_t bank_of(uint64_t addr) const { return static_cast<uint32_t>((addr / p_.bank_interleave_B) % p_.banks); }
  Tick serve_bank(uint32_t bank, uint32_t bytes, Tick t);  // returns the completion time
  bool lookup(uint64_t line, bool write, Tick now);        // cache modes; true on hit

  SramParams p_;
  Clock clk_;
  uint32_t sets_ = 0;
  Downstream down_;
  EventHeap<uint64_t> events_;  // completions by request id
  std::vector<Tick> bank_free_;
  std::vector<uint32_t> bank_in_flight_;
  std::unordered_map<uint64_t, uint32_t> bank_of_id_;
  std::vector<Way> ways_;
  uint64_t dirty_held_ = 0;  // bytes of dirty lines
  std::unordered_map<uint64_t, std::vector<uint32_t>> pending_;  // line -> the waits (slots) for its fill
  std::vector<Wait> waits_;
  std::vector<uint32_t> free_waits_;
  std::vector<MemCompletion> buf_;
  std::unique_ptr<ReplacementPolicy> policy_;  // cache modes
  uint64_t wb_ids_ = 0;
  uint64_t hits_ = 0, misses_ = 0, merged_ = 0, evictions_ = 0, writebacks_ = 0, refused_ = 0;
  TagCounters by_tag_;  // reads by what they are: bytes asked for, bytes served from the SRAM
};

}  // namespace indexsim::model
