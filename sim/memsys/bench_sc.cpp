// SPDX-License-Identifier: Apache-2.0
#include "sim/memsys/bench_sc.hpp"

#include <cmath>
#include <deque>
#include <memory>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>

#include "models/common/tlm_link.hpp"
#include "models/common/tlm_target.hpp"
#include "models/dram/dram_sc.hpp"
#include "sim/memsys/bench_internal.hpp"

namespace indexsim::sim {

namespace {

using namespace bench_detail;

// requesters x outstanding slots, each with its own payload. One thread sends BEGIN_REQ for the
// first ready slot and waits for its END_REQ (the base protocol's request exclusion rule) before
// the next; a slot is ready again when its BEGIN_RESP arrives.
class Initiator : public sc_core::sc_module {
 public:
  tlm_utils::simple_initiator_socket<Initiator> socket;

  SC_HAS_PROCESS(Initiator);
  Initiator(sc_core::sc_module_name name, const BenchSpec& s)
      : sc_core::sc_module(name), socket("socket"), tally(s.requests, 0), s_(s), gen_(s),
        slots_(s.requesters * s.outstanding), payloads_(slots_), who_(slots_), issued_at_(slots_, 0), is_write_(slots_, 0) {
    socket.register_nb_transport_bw(this, &Initiator::nb_transport_bw);
    for (uint32_t i = 0; i < slots_; ++i) {
      ready_.push_back(i);
      payloads_[i].set_extension(&who_[i]);
    }
    SC_THREAD(run);
  }
  ~Initiator() override {
    for (auto& gp : payloads_) gp.clear_extension<model::RequesterExtension>();  // ours, not the payload's to free
  }

  Tally tally;
  uint64_t writes = 0;

 private:
  void run() {
    for (uint64_t issued = 0; issued < s_.requests; ++issued) {
      while (ready_.empty()) sc_core::wait(ready_event_);
      const uint32_t slot = ready_.front();
      ready_.pop_front();
      const model::MemRequest req = gen_.next(issued * slots_ + slot, slot % s_.requesters);
      tlm::tlm_generic_payload& gp = payloads_[slot];
      gp.set_command(req.write ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND);
      gp.set_address(req.addr);
      gp.set_data_ptr(nullptr);  // timing only: no data moves
      gp.set_data_length(req.bytes);
      gp.set_streaming_width(req.bytes);
      gp.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
      who_[slot].source = req.source;  // the crossbar of a `system` target routes by it
      is_write_[slot] = req.write;
      writes += req.write;
      waiting_end_req_ = true;
      tlm::tlm_phase phase = tlm::BEGIN_REQ;
      sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
      socket->nb_transport_fw(gp, phase, delay);  // the target answers END_REQ on the backward path
      while (waiting_end_req_) sc_core::wait(end_req_event_);
    }
  }

  tlm::tlm_sync_enum nb_transport_bw(tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase, sc_core::sc_time&) {
    const auto slot = static_cast<uint32_t>(&gp - payloads_.data());
    const Tick now = model::sc_now_ps();
    if (phase == tlm::END_REQ) {
      issued_at_[slot] = now;  // accepted: where the native loop's latency starts
      waiting_end_req_ = false;
      end_req_event_.notify(sc_core::SC_ZERO_TIME);
      return tlm::TLM_ACCEPTED;
    }
    if (phase == tlm::BEGIN_RESP) {
      tally.completed_one(issued_at_[slot], now, is_write_[slot]);
      ready_.push_back(slot);
      ready_event_.notify(sc_core::SC_ZERO_TIME);
      return tlm::TLM_COMPLETED;  // no END_RESP follows
    }
    SC_REPORT_ERROR("bench", "nb_transport_bw: only END_REQ and BEGIN_RESP come back");
    return tlm::TLM_COMPLETED;
  }

  BenchSpec s_;
  PatternRequests gen_;
  uint32_t slots_;
  std::vector<tlm::tlm_generic_payload> payloads_;
  std::vector<model::RequesterExtension> who_;  // each payload's, owned here (cleared before they go)
  std::vector<Tick> issued_at_;
  std::vector<uint8_t> is_write_;
  std::deque<uint32_t> ready_;
  sc_core::sc_event ready_event_, end_req_event_;
  bool waiting_end_req_ = false;
};

}  // namespace

BenchResult run_memory_bench_systemc(model::MemoryDevice& dev, const BenchSpec& s0) {
  const BenchSpec s = pattern_spec(s0);
  if (s.start_ps != 0) throw std::invalid_argument("bench memory --engine systemc starts at time 0");
  // A fresh context: SystemC elaborates once per context, and a process may run several benches.
  model::fresh_sc_context();
  const auto wall0 = std::chrono::steady_clock::now();
  BenchResult r;
  {
    model::dram::DramSc target("memory", dev);
    Initiator init("initiator", s);
    init.socket.bind(target.socket);
    sc_core::sc_start();  // until no event is left: every request answered
    if (init.tally.completed != s.requests)
      throw std::logic_error("bench memory --engine systemc: " + std::to_string(init.tally.completed) + " of " +
                             std::to_string(s.requests) + " requests completed");
    r.writes = init.writes;
    finish_pattern(r, dev, s, init.tally, wall0);
  }
  return r;
}

}  // namespace indexsim::sim
