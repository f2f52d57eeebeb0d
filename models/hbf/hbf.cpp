// SPDX-License-Identifier: Apache-2.0
#include "models/hbf/hbf.hpp"

#include <algorithm>
#include <cmath>

namespace indexsim::model {

using config::Rule;

HbfParams HbfParams::from(const config::Node& n) {
  HbfParams p;
  p.capacity_GiB = n.req<double>("capacity_GiB", Rule::positive());
  p.channels = n.req<uint32_t>("channels", Rule::positive());
  p.planes_per_channel = n.req<uint32_t>("planes_per_channel", Rule::positive());
  p.page_KiB = n.req<uint32_t>("page_KiB", Rule::power_of_two());
  p.read_bandwidth_GBps = n.req<double>("read_bandwidth_GBps", Rule::positive());
  p.write_bandwidth_GBps = n.req<double>("write_bandwidth_GBps", Rule::positive());
  p.read_latency_us = n.req<double>("read_latency_us", Rule::positive());
  p.program_latency_us = n.req<double>("program_latency_us", Rule::positive());
  p.interface_latency_ns = n.req<double>("interface_latency_ns", Rule::non_negative());
  p.queue_depth_per_channel = n.req<uint32_t>("queue_depth_per_channel", Rule::positive());
  return p;
}

Hbf::Hbf(const HbfParams& p)
    : p_(p), page_B_(uint64_t{p.page_KiB} * 1024), channel_free_(p.channels, 0), in_flight_(p.channels, 0),
      planes_(static_cast<size_t>(p.channels) * p.planes_per_channel) {}

bool Hbf::try_enqueue(const MemRequest& req, Tick now) {
  const uint64_t page = req.addr / page_B_;
  const uint32_t ch = static_cast<uint32_t>(page % p_.channels);
  if (in_flight_[ch] >= p_.queue_depth_per_channel) {
    ++refused_;
    return false;
  }
  Plane& pl = planes_[ch * p_.planes_per_channel + (page / p_.channels) % p_.planes_per_channel];
  const Tick iface = ns_to_ps(p_.interface_latency_ns);
  Tick done;
  if (!req.write) {
    ++reads_;
    bytes_read_ += req.bytes;
    Tick ready;
    if (pl.page == page) {
      ++buffer_hits_;
      ready = std::max(now, pl.page_ready);
    } else {
      ++array_reads_;
      const Tick start = std::max(now, pl.free_at);
      pl.free_at = start + ns_to_ps(p_.read_latency_us * 1000.0);
      pl.page = page;
      pl.page_ready = pl.free_at;
      ready = pl.free_at;
    }
    const Tick xfer = transfer_ps(req.bytes, p_.read_bandwidth_GBps / p_.channels);
    const Tick start = std::max(ready, channel_free_[ch]);
    channel_free_[ch] = start + xfer;
    done = start + xfer + iface;
  } else {
    ++writes_;
    bytes_written_ += req.bytes;
    const Tick xfer = transfer_ps(req.bytes, p_.write_bandwidth_GBps / p_.channels);
    const Tick cstart = std::max(now, channel_free_[ch]);
    channel_free_[ch] = cstart + xfer;
    // The plane programs this write's share of a page; its buffered page is no longer valid.
    const double share = std::min(1.0, static_cast<double>(req.bytes) / static_cast<double>(page_B_));
    const Tick pstart = std::max(cstart + xfer, pl.free_at);
    pl.free_at = pstart + ns_to_ps(p_.program_latency_us * 1000.0 * share);
    pl.page = ~0ull;
    done = pl.free_at + iface;
  }
  ++in_flight_[ch];
  events_.push(done, {req.id, ch});
  return true;
}

void Hbf::advance(Tick now, std::vector<MemCompletion>& done) {
  while (events_.top_time() <= now) {
    const Tick t = events_.top_time();
    const Done d = events_.pop();
    --in_flight_[d.channel];
    done.push_back({d.id, t});
  }
}

Tick Hbf::idle_read_latency_ps() const {
  return ns_to_ps(p_.read_latency_us * 1000.0 + p_.interface_latency_ns) +
         transfer_ps(64, p_.read_bandwidth_GBps / p_.channels);
}

void Hbf::report(StatSink& sink, const std::string& c) const {
  sink.add(c, "reads", static_cast<double>(reads_), "count", "read requests");
  sink.add(c, "writes", static_cast<double>(writes_), "count", "write requests");
  sink.add(c, "bytes_read", static_cast<double>(bytes_read_), "bytes", "");
  sink.add(c, "bytes_written", static_cast<double>(bytes_written_), "bytes", "");
  sink.add(c, "array_reads", static_cast<double>(array_reads_), "count", "reads that paid tR");
  sink.add(c, "buffer_hits", static_cast<double>(buffer_hits_), "count", "reads served from the plane's page buffer");
  sink.ratio(c, "row_hit_rate", {"buffer_hits"}, {"reads"},
             "reads served from the plane's page buffer (the flash analogue of a DRAM row hit)");
  sink.add(c, "refused", static_cast<double>(refused_), "count", "requests refused: channel queue full");
}

INDEXSIM_REGISTER(MemoryRegistry, "memory", "hbf",
                  [](const config::Node& n) -> std::unique_ptr<MemoryDevice> {
                    return std::make_unique<Hbf>(HbfParams::from(n));
                  });

}  // namespace indexsim::model
