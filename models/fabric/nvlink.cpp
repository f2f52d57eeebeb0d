// SPDX-License-Identifier: Apache-2.0
#include "models/fabric/nvlink.hpp"

#include <algorithm>
#include <cmath>

namespace indexsim::model {

using config::Rule;

NvlinkParams NvlinkParams::from(const config::Node& n) {
  NvlinkParams p;
  p.links = n.req<uint32_t>("links", Rule::range(1, 64));
  p.link_GBps_per_direction = n.req<double>("link_GBps_per_direction", Rule::positive());
  p.link_effective_GBps = n.req<double>("link_effective_GBps", Rule::positive());
  if (p.link_effective_GBps > p.link_GBps_per_direction)
    n.fail("link_effective_GBps", std::to_string(p.link_effective_GBps),
           "must not exceed link_GBps_per_direction (" + std::to_string(p.link_GBps_per_direction) + ")");
  p.switch_latency_ns = n.req<double>("switch_latency_ns", Rule::non_negative());
  p.queue_entries = n.req<uint32_t>("queue_entries", Rule::positive());
  return p;
}

NvlinkPort::NvlinkPort(const NvlinkParams& p) : p_(p), ps_per_byte_(1000.0 / p.effective_GBps()) {}

bool NvlinkPort::try_enqueue(const MemRequest& req, Tick now) {
  if (in_flight_ >= p_.queue_entries) {
    ++refused_;
    return false;
  }
  // A load's data returns on the ingress; by symmetry the peers load as much from this GPU, and
  // their responses take this egress: a load costs its bytes here as a store does.
  const Tick start = std::max(now, wire_free_);
  const Tick wire = Tick(std::ceil(double(req.bytes) * ps_per_byte_));
  wire_free_ = start + wire;
  busy_ps_ += wire;
  first_ = std::min(first_, start);
  last_ = std::max(last_, wire_free_);
  const Tick hop = ns_to_ps(p_.switch_latency_ns);
  events_.push(req.write ? wire_free_ : wire_free_ + 2 * hop, req.id);
  ++in_flight_;
  (req.write ? stores_ : loads_) += 1;
  bytes_out_ += req.bytes;
  return true;
}

void NvlinkPort::advance(Tick now, std::vector<MemCompletion>& done) {
  while (events_.top_time() <= now) {
    const Tick t = events_.top_time();
    done.push_back({events_.pop(), t});
    --in_flight_;
  }
}

Tick NvlinkPort::idle_read_latency_ps() const {
  return 2 * ns_to_ps(p_.switch_latency_ns) + Tick(std::ceil(32 * ps_per_byte_));
}

void NvlinkPort::report(StatSink& sink, const std::string& c) const {
  sink.add(c, "stores", double(stores_), "count", "remote stores (writes into peers' memory)");
  sink.add(c, "loads", double(loads_), "count", "remote loads");
  sink.add(c, "bytes_out", double(bytes_out_), "bytes", "bytes this GPU put on its links");
  sink.add(c, "busy", double(busy_ps_) * 1e-3, "ns", "time the links carried data");
  const Tick span = last_ > first_ ? last_ - first_ : 0;
  sink.add(c, "utilisation", span ? double(busy_ps_) / double(span) : 0, "fraction",
           "busy time over the span from the first to the last byte sent");
  sink.add(c, "refused", double(refused_), "count", "requests refused: port queue full");
}

INDEXSIM_REGISTER(MemoryRegistry, "memory", "nvlink",
                  [](const config::Node& n) -> std::unique_ptr<MemoryDevice> {
                    return std::make_unique<NvlinkPort>(NvlinkParams::from(n));
                  });

}  // namespace indexsim::model
