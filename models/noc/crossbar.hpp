// SPDX-License-Identifier: Apache-2.0
// The SM-to-L2 crossbar: fixed request and response latencies plus per-port bandwidth on both
// sides (SM ports and memory-side ports), each direction its own channel. A packet is stored and
// forwarded: it crosses its source port, the fixed latency, then its destination port. A port's
// channel is a reservation (the time it is next free) made when the packet reaches it, in time
// order, so a request costs O(1) events whatever the load. Idle read latency:
//   2 x header/bandwidth + request_latency + 2 x data/bandwidth + response_latency (whole cycles).
#pragma once

#include <unordered_map>
#include <vector>

#include "models/common/fast_div.hpp"
#include "models/common/port.hpp"

namespace indexsim::model {

struct CrossbarParams {
  double clock_MHz = 0;
  uint32_t sm_ports = 0;           // one per SM; a requester uses port (source % sm_ports)
  uint32_t memory_ports = 0;       // one per L2 slice; a line goes to port hash(line) % memory_ports
  double port_bandwidth_Bpc = 0;   // bytes per clock per port per direction
  uint32_t request_latency_cycles = 0;
  uint32_t response_latency_cycles = 0;
  uint32_t header_B = 0;           // a read request or a write acknowledgement on the wire
  uint32_t line_B = 0;             // address granule for memory-port selection
  uint32_t max_in_flight_per_port = 0;

  static CrossbarParams from(const config::Node& n);
};

class Crossbar : public FrontDevice {
 public:
  explicit Crossbar(const CrossbarParams& p);
  void attach(std::unique_ptr<MemoryDevice> downstream) override { down_.reset(std::move(downstream)); }

  bool try_enqueue(const MemRequest& req, Tick now) override;
  // A refusal is the SM port's in-flight limit: only that port's completions free it, which are
  // its source's own when no other source shares the port.
  bool refused_per_source() const override { return !port_shared_[last_refused_port_]; }
  Tick next_event() const override { return std::min(events_.top_time(), down_.next_event()); }
  void advance(Tick now, std::vector<MemCompletion>& done) override;
  double peak_bandwidth_GBps() const override;
  Tick idle_read_latency_ps() const override;
  uint64_t capacity_bytes() const override { return down_.connected() ? down_.get()->capacity_bytes() : 0; }
  void report(StatSink& sink, const std::string& component) const override;
  void warm(const MemRequest& req) override {
    if (down_.connected()) down_.get()->warm(req);
  }
  uint64_t warm_reach_bytes() const override { return down_.connected() ? down_.get()->warm_reach_bytes() : 0; }

 private:
  // 32 bytes, so that no flight straddles two host cache lines: a flight is read four times, each
  // long after the last, and those reads were a quarter of the crossbar's time.
  struct alignas(32) Flight {  // a slot in flights_; its index is the id the downstream sees
    uint64_t id;    // the requester's id
    uint64_t addr;
    uint32_t req_bytes;
    uint32_t down_bytes;  // through the SM port on the way back: read data, or acks for a write
    uint32_t source;      // the requester's source, passed on (the L2 picks near or far by it)
    uint16_t sm_port;     // < sm_ports <= 65536 (its rule)
    bool write;
    uint8_t tag;          // passed on
  };
  static_assert(sizeof(Flight) == 32, "a flight is half a host cache line");
  // A request of several lines (a fast-mode chunk) passes each line's memory port with that line's
  // share, as the same bytes in line-sized requests would: a chunk that every SM reads must not
  // funnel through one port. Returns when the last line's share has passed.
  Tick through_memory_ports(const Flight& f, Tick t, std::vector<Tick>& port_free, bool data);
  uint32_t lines_of(const Flight& f) const {
    return static_cast<uint32_t>(((f.addr + std::max<uint32_t>(f.req_bytes, 1) - 1) >> line_shift_) - (f.addr >> line_shift_) + 1);
  }
  enum class Kind : uint8_t { AtMemoryPort, Forward, AtSmPort, Complete };
  struct Event {  // eight bytes, kept in the event heap itself; the rest is in the flight
    Kind kind;
    uint32_t slot;
  };
  // A port's time for `bytes`: whole cycles at port_bandwidth_Bpc. Every packet asks it at least
  // twice, so the sizes of line and fast-mode requests are tabulated.
  Tick occupancy(uint32_t bytes) const { return bytes <= kTabulatedBytes ? occupancy_[bytes] : occupancy_of(bytes); }
  Tick occupancy_of(uint32_t bytes) const;
  static constexpr uint32_t kTabulatedBytes = 4096;
  std::vector<Tick> occupancy_;

  CrossbarParams p_;
  Clock clk_;
  FastDiv by_ports_;  // a line's memory port: its hash modulo memory_ports
  Downstream down_;
  EventHeap<Event> events_;
  std::vector<Flight> flights_;
  std::vector<uint32_t> free_flights_;
  std::vector<Tick> sm_up_free_, sm_down_free_, mem_up_free_, mem_down_free_;
  std::vector<uint32_t> in_flight_;
  static constexpr uint32_t kNoSource = ~0u;
  std::vector<uint32_t> port_source_;  // the first source seen on each SM port
  std::vector<bool> port_shared_;      // a second source came through it
  uint32_t last_refused_port_ = 0;
  uint32_t line_shift_;  // log2(line_B): line_B is a power of two (its rule)
  std::vector<MemCompletion> buf_;
  uint64_t requests_ = 0, bytes_up_ = 0, bytes_down_ = 0, refused_ = 0;
  Tick port_wait_ps_ = 0;
};

}  // namespace indexsim::model
