// SPDX-License-Identifier: Apache-2.0
// The DRAM device: HBM2e, HBM3, HBM3E or DDR5, one model whose presets differ only in config values.
// It maps each request to pseudo-channels, splits it into column accesses within a row (a chunk
// per row touched), and drives one Controller per pseudo-channel. A min-heap of controllers by
// next command time makes the device event-driven: advance(now) touches only controllers that have
// a command due, in time order.
//
// Reads complete when the last byte of the last chunk leaves the data bus (plus the configured
// controller latency). Writes are posted: they complete when the write queue accepts them, and the
// queue's capacity is the back-pressure.
#pragma once

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
  void advance(Tick now, std::vector<MemCompletion>& done) override;
  double peak_bandwidth_GBps() const override { return p_.peak_bandwidth_GBps(); }
  Tick idle_read_latency_ps() const override;
  uint64_t capacity_bytes() const override { return p_.capacity_bytes(); }
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
  void record_latency(Tick latency);

  DramParams p_;
  AddressMap map_;
  Tick period_ps_;
  Tick controller_latency_ps_;
  std::unique_ptr<TimingChecker> checker_;
  std::vector<Controller> ctrls_;

  // Controllers by next command clock, as one key (clock << 16 | pseudo-channel) so that ties
  // resolve by index, deterministically; an entry is live while its clock matches heap_at_[pc].
  struct Later {
    bool operator()(uint64_t a, uint64_t b) const { return a > b; }
  };
  static constexpr uint32_t kPcBits = 16;
  mutable std::vector<uint64_t> heap_;
  std::vector<Cycle> heap_at_;

  std::vector<Parent> parents_;
  std::vector<uint32_t> free_parents_;
  // Read chunks finish in issue order plus a constant latency, so this queue is sorted by time.
  std::deque<ChunkDone> finished_;
  std::vector<MemCompletion> posted_;      // accepted writes, reported at the next advance
  std::vector<ChunkDone> step_out_;
  struct Piece { uint32_t pc; Chunk chunk; };
  std::vector<Piece> pieces_;
  std::vector<uint32_t> need_;            // chunks per pseudo-channel of the request being split

  // Statistics.
  uint64_t reads_ = 0, writes_ = 0, bytes_read_ = 0, bytes_written_ = 0, rejected_ = 0;
  Tick first_arrival_ = kNever, last_done_ = 0;
  double latency_sum_ps_ = 0;
  std::vector<uint64_t> latency_hist_;    // 1 ns buckets; the last one collects the tail
};

}  // namespace indexsim::model::dram
