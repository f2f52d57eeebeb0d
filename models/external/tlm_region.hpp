// SPDX-License-Identifier: Apache-2.0
// A region of the address map served by a TLM-2.0 target that someone else writes: a user's
// accelerator memory, a new memory device, a model from another simulator. `impl: tlm_target`.
//
// The device is the region's side of the binding: an initiator socket (made when the SystemC
// engine elaborates, sim/engine/systemc.hpp) that the user's target binds to. Requests reach it
// from the interconnect with window-local addresses, a RequesterExtension (unit, tensor class) and
// no data (timing only: the data pointer is null). Two coding styles, chosen in the config:
//  - loosely_timed: b_transport at the request's time; the request completes at the time the call
//    returns plus the delay the target annotated. The target takes requests one by one and cannot
//    refuse one (it may only delay it). A target that waits inside b_transport holds the replay's
//    thread, and the time it waited is part of the latency.
//  - approximately_timed: the base protocol's four phases. BEGIN_REQ goes out when the region holds
//    no request still waiting for its END_REQ (the request exclusion rule), so a target that delays
//    END_REQ pushes back: the region refuses the next request, the interconnect holds it and the
//    SMs stall. The request completes at BEGIN_RESP (plus its delay); the region answers it
//    TLM_COMPLETED. A target that returns TLM_COMPLETED at BEGIN_REQ completes it then.
// What the target does between the phases happens in its own processes; the region tells the
// engine (a "news" callback) when an answer arrives outside a call, so the replay wakes for it.
// The capacity and peak bandwidth in the config describe the target for placement and rooflines;
// the timing is all the target's.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <tlm>

#include "models/common/port.hpp"
#include "models/common/tlm_target.hpp"
#include "models/common/memory_device.hpp"
#include "models/common/params.hpp"

namespace indexsim::model {

struct TlmRegionParams {
  enum class Style { loosely_timed, approximately_timed };
  double capacity_GiB = 0;          // what placement may put there
  double peak_bandwidth_GBps = 0;   // the target's best rate: rooflines and placement, not timing
  double idle_read_latency_ns = 0;  // one read with nothing else in flight: reports, not timing
  Style style = Style::loosely_timed;
  static TlmRegionParams from(const config::Node& n);
};

class TlmRegion : public MemoryDevice {
 public:
  TlmRegion(const TlmRegionParams& p, std::string name);
  ~TlmRegion() override;

  // The socket the user's target binds to, made on the first call: call it while the run's SystemC
  // context elaborates. `name` is the section's path (e.g. memory.sram).
  tlm::tlm_initiator_socket<>& socket();
  const std::string& name() const { return name_; }
  bool bound() const;
  // Called when the target answers outside a call of this device (END_REQ, BEGIN_RESP): the engine
  // then looks at next_event()/next_retry() again.
  void on_news(std::function<void()> f) { news_ = std::move(f); }

  bool try_enqueue(const MemRequest& req, Tick now) override;
  Tick next_event() const override;
  Tick next_retry() const override;
  void advance(Tick now, std::vector<MemCompletion>& done) override;
  double peak_bandwidth_GBps() const override { return p_.peak_bandwidth_GBps; }
  Tick idle_read_latency_ps() const override { return ns_to_ps(p_.idle_read_latency_ns); }
  uint64_t capacity_bytes() const override;
  void report(StatSink& sink, const std::string& component) const override;

 private:
  class Face;
  struct Payload;
  Payload& take(const MemRequest& req);
  void give_back(Payload& p) { pool_.give_back(p); }
  void completed(Payload& p, Tick at);
  void end_req(Payload& p);
  void tell() { if (news_) news_(); }  // an answer came on the backward path, outside our calls
  friend class Face;

  TlmRegionParams p_;
  std::string name_;
  std::unique_ptr<Face> face_;
  std::function<void()> news_;
  PayloadPool<Payload> pool_;
  Payload* waiting_end_req_ = nullptr;   // approximately timed: the request whose END_REQ has not come
  Tick retry_at_ = kNever;                // when an END_REQ came: a refused request may go then
  EventHeap<uint64_t> done_;              // completion time -> the requester's id
  uint64_t reads_ = 0, writes_ = 0, bytes_read_ = 0, bytes_written_ = 0, refused_ = 0;
  double latency_ps_sum_ = 0;
};

}  // namespace indexsim::model
