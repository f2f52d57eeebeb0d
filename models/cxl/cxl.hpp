// SPDX-License-Identifier: Apache-2.0
// A CXL.mem Type-3 memory expander: host port and link, the device's controller, and its own
// DRAM (any registered DRAM core, built from the nested `dram:` section, normally a DDR5 preset).
//
// The link carries flits of fixed-size slots. A 64 B line takes line_B / slot_B data slots plus
// header slots (a request or a response header), and every flit adds its own framing (CRC,
// protocol id, FEC), so the data rate per direction is
//   raw_GBps x flit efficiency,  raw_GBps = lanes x lane_rate_GTps x encoding_efficiency / 8,
//   efficiency = line_B / ((line_B / slot_B + header_slots_per_line) x flit_B / slots_per_flit).
// Each direction is one channel (host-to-device M2S, device-to-host S2M). Idle read latency:
//   serialize(request) + port_latency + controller_latency + DRAM idle read
//   + serialize(response) + port_latency.
// The controller holds at most queue_depth requests; beyond that the expander refuses.
#pragma once

#include <vector>

#include "models/common/port.hpp"

namespace indexsim::model {

struct CxlParams {
  uint32_t lanes = 0;
  double lane_rate_GTps = 0;
  double encoding_efficiency = 0;
  uint32_t flit_B = 0;
  uint32_t slots_per_flit = 0;
  uint32_t slot_B = 0;
  double header_slots_per_line = 0;
  uint32_t line_B = 0;
  double port_latency_ns = 0;        // one way: host port, link and device port
  double controller_latency_ns = 0;  // device controller, request path and response path together
  uint32_t queue_depth = 0;

  static CxlParams from(const config::Node& n);
  double raw_GBps() const { return lanes * lane_rate_GTps * encoding_efficiency / 8.0; }
  double slot_wire_B() const { return static_cast<double>(flit_B) / slots_per_flit; }
  double flit_efficiency() const {
    return line_B / ((static_cast<double>(line_B) / slot_B + header_slots_per_line) * slot_wire_B());
  }
};

class CxlExpander : public MemoryDevice {
 public:
  CxlExpander(const CxlParams& p, std::unique_ptr<MemoryDevice> dram);

  bool try_enqueue(const MemRequest& req, Tick now) override;
  Tick next_event() const override { return std::min(events_.top_time(), dram_.next_event()); }
  void advance(Tick now, std::vector<MemCompletion>& done) override;
  double peak_bandwidth_GBps() const override;
  Tick idle_read_latency_ps() const override;
  uint64_t capacity_bytes() const override { return dram_.get()->capacity_bytes(); }
  void report(StatSink& sink, const std::string& component) const override;
  const CxlParams& params() const { return p_; }
  const MemoryDevice& dram() const { return *dram_.get(); }

 private:
  // A request in the expander. Requesters may reuse an id while an earlier request with it is in
  // flight (an L2 MSHR fetches several sector runs of one line), so the DRAM sees the slot index.
  struct Flight {
    uint64_t id;
    uint32_t bytes;
    bool write;
  };
  struct Event {
    bool to_dram;  // true: the controller hands the request to the DRAM; false: the host has the response
    MemRequest req;
  };
  Tick wire_ps(double wire_bytes) const;
  double data_wire_B(uint32_t bytes) const;    // a request or response carrying `bytes` of data
  double header_wire_B(uint32_t bytes) const;  // a request or response without data

  CxlParams p_;
  Downstream dram_;
  EventHeap<Event> events_;
  std::vector<Flight> flights_;
  std::vector<uint32_t> free_slots_;
  uint32_t in_flight_ = 0;
  Tick m2s_free_ = 0, s2m_free_ = 0;
  std::vector<MemCompletion> buf_;
  uint64_t reads_ = 0, writes_ = 0, refused_ = 0;
  double m2s_wire_B_ = 0, s2m_wire_B_ = 0;
  uint64_t data_read_B_ = 0, data_written_B_ = 0;
};

}  // namespace indexsim::model
