// SPDX-License-Identifier: Apache-2.0
// The DRAM device: HBM2e, HBM3, HBM3E or DDR5, one model whose presets differ only in config values.
// It maps each request to pseudo-channels, splits it into column accesses within a row (a chunk
// per row touched), and drives one Controller per pseudo-channel. Nothing ticks: advance(now) runs
// each controller that has a command due up to `now` in one go (pseudo-channels are independent).
//
// next_event() is the earliest time at which the device can have something to report, not its next
// command: a command issued at cycle c completes no read before c + tCL + burst (plus the
// controller latency), so nobody upstream needs waking before then. This lookahead keeps a whole
// GPU model from stepping through every DRAM command. A sender holding a refused request asks
// next_retry() instead: a queue slot can free at any command.
//
// Reads complete when the last byte of the last chunk leaves the data bus (plus the configured
// controller latency). Writes are posted: they complete when the write queue accepts them, and the
// queue's capacity is the back-pressure; last_write_issued_ps() says when the last one reached the
// DRAM, and the report counts the write bursts issued.
#pragma once

#include <algorithm>
#include <deque>
#include <memory>
#include <vector>

#include "models/common/memory_device.hpp"
#include "models/dram/address_map.hpp"
#include "models/dram/controller.hpp"
#include "models/dram/dram_params.hpp"
#include "models/dram/timing_checker.hpp"

namespace indexsim::model::dram {

class DramDevice : public MemoryDevice {
 public:
  explicit DramDevice(DramParams p);

  bool try_enqueue(const MemRequest& req, Tick now) override;
  Tick next_event() const override;
  Tick next_retry() const override { return std::min(next_command_ps(), next_event()); }
  // The clock of the next DRAM command (ps), kNever when idle: for tests that step command by command.
  Tick next_command_ps() const;
  void advance(Tick now, std::vector<MemCompletion>& done) override;
  double peak_bandwidth_GBps() const override { return p_.peak_bandwidth_GBps(); }
  Tick idle_read_latency_ps() const override;
  Tick last_write_issued_ps() const override;
  uint64_t capacity_bytes() const override { return p_.capacity_bytes(); }
  // The read or write queue of the refused request's (first) pseudo-channel, or of its channel.
  uint64_t refused_queue() const override { return refused_queue_; }
  bool may_take(uint64_t key) const override { return has_room(uint32_t(key / 2), key & 1, 1); }
  uint64_t slots_freed() const override { return freed_; }
  void report(StatSink& sink, const std::string& component) const override;

  const DramParams& params() const { return p_; }
  const AddressMap& address_map() const { return map_; }
  // Null unless check_timing is on.
  const TimingChecker* checker() const { return checker_.get(); }
  ControllerStats totals() const;

 private:
  struct Parent {
    uint64_t id;
    Tick arrival;
    uint32_t remaining;
    bool write;
  };
  void process_until(Tick now, bool inclusive);
  void schedule(uint32_t pc);
  uint32_t new_parent(const MemRequest& req, Tick now, uint32_t chunks);
  // The queue a pseudo-channel's requests count against: its own, or its channel's first one.
  uint32_t queue_of(uint32_t pc) const { return p_.queue_per_channel ? pc - pc % p_.pseudo_channels_per_channel : pc; }
  bool has_room(uint32_t pc, bool write, uint32_t chunks) const;
  void record_latency(Tick latency);

  DramParams p_;
  AddressMap map_;
  Tick period_ps_;
  Tick controller_latency_ps_;
  std::unique_ptr<TimingChecker> checker_;
  std::vector<CommandBus> buses_;          // one per channel when its pseudo-channels share one
  std::vector<Controller> ctrls_;

  // Each controller's next command clock, and the earliest of them (exact). Pseudo-channels with
  // their own command buses are independent, so process_until runs every due controller to the
  // limit in any order; those sharing a channel's bus take their commands in time order. A flat
  // scan of this array beats a heap (most controllers are busy whenever one is).
  std::vector<Cycle> next_at_;
  Cycle earliest_ = kNoCycle;
  static constexpr uint32_t kPcBits = 16;   // completion sort key: data_end << kPcBits | pc

  std::vector<Parent> parents_;
  std::vector<uint32_t> free_parents_;
  // Read chunks finish in issue order plus a constant latency, so this queue is sorted by time.
  std::deque<ChunkDone> finished_;
  std::vector<MemCompletion> posted_;      // accepted writes, reported at the next advance
  std::vector<ChunkDone> step_out_;
  struct Done { uint64_t key; uint32_t parent; };   // key: data_end << kPcBits | pc
  std::vector<Done> batch_;                // reads issued in one process_until
  Tick lookahead_ps_;                      // command to earliest read completion: tCL + burst + controller
  struct Piece { uint32_t pc; Chunk chunk; };
  std::vector<Piece> pieces_;
  std::vector<uint32_t> need_;            // chunks per pseudo-channel of the request being split
  // The last interleave block decoded: every byte of a block shares its pseudo-channel, bank and row.
  uint64_t last_block_ = ~uint64_t(0);
  DramAddress last_;

  // Statistics.
  uint64_t reads_ = 0, writes_ = 0, bytes_read_ = 0, bytes_written_ = 0, rejected_ = 0;
  uint64_t freed_ = 0;  // controller steps that left a queue shorter (slots_freed)
  uint64_t refused_queue_ = kAnyQueue;  // refused_queue(); may_take() takes the same key
  Tick first_arrival_ = kNever, last_done_ = 0;
  double latency_sum_ps_ = 0;
  std::vector<uint64_t> latency_hist_;    // 1 ns buckets; the last one collects the tail
};

}  // namespace indexsim::model::dram
