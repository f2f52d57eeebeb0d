// SPDX-License-Identifier: Apache-2.0
// High-bandwidth flash: NAND planes behind HBM-like channels. A read whose page is not in its
// plane's page buffer costs the array read time (tR, microseconds) on that plane; the data then
// crosses the channel at its share of the read bandwidth. Pages interleave across channels, then
// planes, so a stream keeps every plane busy and reaches the channel bandwidth while a random
// small read pays tR each time. A write crosses the channel at the write bandwidth and occupies
// its plane for the program time of its share of a page: writes are slow.
#pragma once

#include <vector>

#include "models/common/port.hpp"

namespace indexsim::model {

struct HbfParams {
  double capacity_GiB = 0;
  uint32_t channels = 0;
  uint32_t planes_per_channel = 0;
  uint32_t page_KiB = 0;
  double read_bandwidth_GBps = 0;   // all channels together
  double write_bandwidth_GBps = 0;  // channel transfer for writes, all channels together
  double read_latency_us = 0;       // tR: array read of one page into the plane's page buffer
  double program_latency_us = 0;    // tPROG: one page
  double interface_latency_ns = 0;  // base die and I/O, each access
  uint32_t queue_depth_per_channel = 0;

  static HbfParams from(const config::Node& n);
};

class Hbf : public MemoryDevice {
 public:
  explicit Hbf(const HbfParams& p);
  bool try_enqueue(const MemRequest& req, Tick now) override;
  Tick next_event() const override { return events_.top_time(); }
  void advance(Tick now, std::vector<MemCompletion>& done) override;
  double peak_bandwidth_GBps() const override { return p_.read_bandwidth_GBps; }
  Tick idle_read_latency_ps() const override;
  uint64_t capacity_bytes() const override {
    return static_cast<uint64_t>(p_.capacity_GiB * 1024.0 * 1024.0 * 1024.0);
  }
  void report(StatSink& sink, const std::string& component) const override;

 private:
  struct Plane {
    Tick free_at = 0;
    uint64_t page = ~0ull;  // page held in the page buffer
    Tick page_ready = 0;
  };
  struct Done {
    uint64_t id;
    uint32_t channel;
  };
  Tick transfer_ps(uint32_t bytes, double channel_GBps) const {
    return static_cast<Tick>(std::ceil(bytes / channel_GBps * 1000.0));  // GB/s = bytes per ns
  }

  HbfParams p_;
  uint64_t page_B_;
  EventHeap<Done> events_;
  std::vector<Tick> channel_free_;
  std::vector<uint32_t> in_flight_;
  std::vector<Plane> planes_;
  uint64_t reads_ = 0, writes_ = 0, buffer_hits_ = 0, array_reads_ = 0, refused_ = 0;
  uint64_t bytes_read_ = 0, bytes_written_ = 0;
};

}  // namespace indexsim::model
