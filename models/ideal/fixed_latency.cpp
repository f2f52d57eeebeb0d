// SPDX-License-Identifier: Apache-2.0
#include "models/ideal/fixed_latency.hpp"

namespace indexsim::model {

using config::Rule;

FixedLatencyParams FixedLatencyParams::from(const config::Node& n) {
  FixedLatencyParams p;
  p.capacity_GiB = n.req<double>("capacity_GiB", Rule::positive());
  p.latency_ns = n.req<double>("latency_ns", Rule::non_negative());
  p.peak_bandwidth_GBps = n.req<double>("peak_bandwidth_GBps", Rule::positive());
  return p;
}

bool FixedLatency::try_enqueue(const MemRequest& req, Tick now) {
  (req.write ? writes_ : reads_) += 1;
  (req.write ? bytes_written_ : bytes_read_) += req.bytes;
  done_.push(now + latency_ps_, req.id);
  return true;
}

void FixedLatency::advance(Tick now, std::vector<MemCompletion>& done) {
  while (done_.top_time() <= now) {
    const Tick t = done_.top_time();
    done.push_back({done_.pop(), t});
  }
}

void FixedLatency::report(StatSink& sink, const std::string& c) const {
  sink.add(c, "reads", static_cast<double>(reads_), "count", "read requests");
  sink.add(c, "writes", static_cast<double>(writes_), "count", "write requests");
  sink.add(c, "bytes_read", static_cast<double>(bytes_read_), "bytes", "");
  sink.add(c, "bytes_written", static_cast<double>(bytes_written_), "bytes", "");
}

INDEXSIM_REGISTER(MemoryRegistry, "memory", "fixed_latency", [](const config::Node& n) -> std::unique_ptr<MemoryDevice> {
  return std::make_unique<FixedLatency>(FixedLatencyParams::from(n));
});

}  // namespace indexsim::model
