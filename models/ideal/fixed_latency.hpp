// SPDX-License-Identifier: Apache-2.0
// An ideal memory: every request completes a fixed latency after it arrives, with no queue, no
// bandwidth limit and no state. `impl: fixed_latency`. For limit studies (what a region would give
// if only its latency counted) and as the native twin of an external target of the same latency
// (models/external/tlm_region.hpp): a loosely-timed target that annotates `latency_ns` gives the
// same completions, so the two runs agree bit for bit (tests/cpp/test_systemc_engine.cpp).
#pragma once

#include <cstdint>
#include <vector>

#include "models/common/memory_device.hpp"
#include "models/common/params.hpp"
#include "models/common/port.hpp"

namespace indexsim::model {

struct FixedLatencyParams {
  double capacity_GiB = 0;          // what placement may put there
  double latency_ns = 0;            // every request's, arrival to completion
  double peak_bandwidth_GBps = 0;   // for rooflines and placement only: the timing has no limit
  static FixedLatencyParams from(const config::Node& n);
};

class FixedLatency : public MemoryDevice {
 public:
  explicit FixedLatency(const FixedLatencyParams& p) : p_(p), latency_ps_(ns_to_ps(p.latency_ns)) {}
  bool try_enqueue(const MemRequest& req, Tick now) override;
  Tick next_event() const override { return done_.top_time(); }
  void advance(Tick now, std::vector<MemCompletion>& done) override;
  double peak_bandwidth_GBps() const override { return p_.peak_bandwidth_GBps; }
  Tick idle_read_latency_ps() const override { return latency_ps_; }
  uint64_t capacity_bytes() const override { return static_cast<uint64_t>(p_.capacity_GiB * double(1ull << 30)); }
  void report(StatSink& sink, const std::string& component) const override;

 private:
  FixedLatencyParams p_;
  Tick latency_ps_;
  EventHeap<uint64_t> done_;  // completion time -> id
  uint64_t reads_ = 0, writes_ = 0, bytes_read_ = 0, bytes_written_ = 0;
};

}  // namespace indexsim::model
