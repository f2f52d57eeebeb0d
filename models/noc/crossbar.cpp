// SPDX-License-Identifier: Apache-2.0
#include "models/noc/crossbar.hpp"

#include <algorithm>
#include <cmath>

namespace indexsim::model {

using config::Rule;

CrossbarParams CrossbarParams::from(const config::Node& n) {
  CrossbarParams p;
  p.clock_MHz = n.req<double>("clock_MHz", Rule::clock_MHz());
  // A port is one SM or one L2 slice: thousands at most (B200: 148 SMs, 128 slices); beyond that a
  // typo, not a crossbar, and the per-port state would not fit in memory.
  p.sm_ports = n.req<uint32_t>("sm_ports", Rule::range(1, 65536));
  p.memory_ports = n.req<uint32_t>("memory_ports", Rule::range(1, 65536));
  p.port_bandwidth_Bpc = n.req<double>("port_bandwidth_Bpc", Rule::positive());
  p.request_latency_cycles = n.req<uint32_t>("request_latency_cycles", Rule::non_negative());
  p.response_latency_cycles = n.req<uint32_t>("response_latency_cycles", Rule::non_negative());
  p.header_B = n.req<uint32_t>("header_B", Rule::positive());
  p.line_B = n.req<uint32_t>("line_B", Rule::power_of_two());
  p.max_in_flight_per_port = n.req<uint32_t>("max_in_flight_per_port", Rule::positive());
  return p;
}

Crossbar::Crossbar(const CrossbarParams& p)
    : p_(p), clk_(p.clock_MHz), by_ports_(std::max(1u, p.memory_ports)),
      sm_up_free_(p.sm_ports, 0), sm_down_free_(p.sm_ports, 0),
      mem_up_free_(p.memory_ports, 0), mem_down_free_(p.memory_ports, 0),
      in_flight_(p.sm_ports, 0), port_source_(p.sm_ports, kNoSource), port_shared_(p.sm_ports, false), line_shift_(uint32_t(__builtin_ctz(p.line_B))) {
  occupancy_.resize(kTabulatedBytes + 1);
  for (uint32_t b = 0; b <= kTabulatedBytes; ++b) occupancy_[b] = occupancy_of(b);
}

Tick Crossbar::occupancy_of(uint32_t bytes) const {
  return clk_.cycles(static_cast<uint64_t>(std::ceil(bytes / p_.port_bandwidth_Bpc - 1e-9)));
}

bool Crossbar::try_enqueue(const MemRequest& req, Tick now) {
  const uint32_t sp = req.source % p_.sm_ports;
  // A port is its source's alone until a second source shares it (more sources than ports).
  if (port_source_[sp] == kNoSource) port_source_[sp] = req.source;
  else if (port_source_[sp] != req.source) port_shared_[sp] = true;
  if (in_flight_[sp] >= p_.max_in_flight_per_port) {
    ++refused_;
    last_refused_port_ = sp;
    return false;
  }
  Flight f{req.id, req.addr, req.bytes, 0, req.source, static_cast<uint16_t>(sp), req.write, req.tag};
  const uint32_t headers = lines_of(f) * p_.header_B;  // a header per line, as line requests carry
  f.down_bytes = req.write ? headers : req.bytes;
  const uint32_t up_bytes = req.write ? req.bytes : headers;
  const Tick start = std::max(now, sm_up_free_[sp]);
  sm_up_free_[sp] = start + occupancy(up_bytes);
  port_wait_ps_ += start - now;
  uint32_t slot;
  if (free_flights_.empty()) {
    slot = static_cast<uint32_t>(flights_.size());
    flights_.push_back(f);
  } else {
    slot = free_flights_.back();
    free_flights_.pop_back();
    flights_[slot] = f;
  }
  events_.push(sm_up_free_[sp] + clk_.cycles(p_.request_latency_cycles), {Kind::AtMemoryPort, slot});
  ++in_flight_[sp];
  ++requests_;
  bytes_up_ += up_bytes;
  return true;
}

Tick Crossbar::through_memory_ports(const Flight& f, Tick t, std::vector<Tick>& port_free, bool data) {
  Tick end = t;
  const uint64_t stop = f.addr + std::max<uint32_t>(f.req_bytes, 1);
  for (uint64_t line = f.addr >> line_shift_; (line << line_shift_) < stop; ++line) {
    const uint64_t lo = std::max<uint64_t>(f.addr, line << line_shift_);
    const uint64_t hi = std::min<uint64_t>(stop, (line + 1) << line_shift_);
    const auto bytes = static_cast<uint32_t>(data ? hi - lo : p_.header_B);
    Tick& free = port_free[by_ports_.mod(mix64(line))];
    const Tick start = std::max(t, free);
    free = start + occupancy(bytes);
    port_wait_ps_ += start - t;
    end = std::max(end, free);
  }
  return end;
}

void Crossbar::advance(Tick now, std::vector<MemCompletion>& done) {
  run_until(
      now, down_, events_, buf_,
      [&](const std::vector<MemCompletion>& batch) {
        // Each flight was last touched when it went down: ask for all of them before the first.
        for (const auto& c : batch) __builtin_prefetch(&flights_[c.id]);
        for (const auto& c : batch) {  // the response leaves through its memory ports
          const Flight& f = flights_[c.id];
          const Tick left = through_memory_ports(f, c.done, mem_down_free_, !f.write);
          bytes_down_ += f.down_bytes;
          events_.push(left + clk_.cycles(p_.response_latency_cycles), {Kind::AtSmPort, static_cast<uint32_t>(c.id)});
        }
      },
      [&](Tick te) {
        const Event e = events_.pop();
        // The next event's flight is most likely the next one read: ask for it while this one is
        // handled (a prefetch changes no state, whatever comes next).
        if (!events_.empty()) __builtin_prefetch(&flights_[events_.top().slot]);
        switch (e.kind) {
          case Kind::AtMemoryPort: {
            const Flight& f = flights_[e.slot];
            events_.push(through_memory_ports(f, te, mem_up_free_, f.write), {Kind::Forward, e.slot});
            break;
          }
          case Kind::Forward: {
            const Flight& f = flights_[e.slot];
            MemRequest r;
            r.id = e.slot;
            r.addr = f.addr;
            r.bytes = f.req_bytes;
            r.write = f.write;
            r.tag = f.tag;
            r.source = f.source;
            down_.send(r, te);
            break;
          }
          case Kind::AtSmPort: {
            const Flight& f = flights_[e.slot];
            const Tick start = std::max(te, sm_down_free_[f.sm_port]);
            sm_down_free_[f.sm_port] = start + occupancy(f.down_bytes);
            port_wait_ps_ += start - te;
            events_.push(sm_down_free_[f.sm_port], {Kind::Complete, e.slot});
            break;
          }
          case Kind::Complete: {
            const uint32_t slot = e.slot;
            --in_flight_[flights_[slot].sm_port];
            done.push_back({flights_[slot].id, te});
            free_flights_.push_back(slot);
            break;
          }
        }
      });
}

double Crossbar::peak_bandwidth_GBps() const {
  return p_.sm_ports * p_.port_bandwidth_Bpc * p_.clock_MHz * 1e6 / 1e9;
}

Tick Crossbar::idle_read_latency_ps() const {
  // A minimal read: its header through two ports, one 32 B sector back through two, and the two
  // fixed latencies.
  return 2 * occupancy(p_.header_B) + 2 * occupancy(32) +
         clk_.cycles(p_.request_latency_cycles + p_.response_latency_cycles);
}

void Crossbar::report(StatSink& sink, const std::string& c) const {
  sink.add(c, "requests", static_cast<double>(requests_), "count", "requests carried SM to memory");
  sink.add(c, "bytes_up", static_cast<double>(bytes_up_), "bytes", "request headers and write data");
  sink.add(c, "bytes_down", static_cast<double>(bytes_down_), "bytes", "read data and write acknowledgements");
  sink.add(c, "port_wait_ns", ps_to_ns(port_wait_ps_), "ns", "total time requests waited for a busy port");
  sink.add(c, "refused", static_cast<double>(refused_), "count", "requests refused: port in-flight limit");
}

INDEXSIM_REGISTER(MemoryRegistry, "memory", "crossbar",
                  [](const config::Node& n) -> std::unique_ptr<MemoryDevice> {
                    return std::make_unique<Crossbar>(CrossbarParams::from(n));
                  });

}  // namespace indexsim::model
