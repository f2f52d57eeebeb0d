// SPDX-License-Identifier: Apache-2.0
// A GPU's NVLink ports onto an NVSwitch fabric, as the memory device behind its peers' buffers.
//
// One GPU is simulated; its peers are identical and behave alike (symmetry), so what this GPU
// sends is what each peer sends, and what it receives is what it sends. The port is the shared
// egress of all its links: a remote store (or the request of a remote load) leaves at the links'
// effective bandwidth, one after another in arrival order; a store completes when its last byte is
// on the wire (posted, as NVLink stores are), a load after the switch round trip. Collective
// kernels (traces/generators/collective_kernels) write their outgoing bytes here; what the peers
// write back into this GPU's memory, they write into its own HBM through the memory system.
//
// Latencies of a collective's handshakes (flags, per-step waits) are not in this device: they are
// the kernel's wait_ns, from the collective library's latency model, because the device sees
// independent requests and a handshake is a dependence between them. Traffic beyond one NVLink
// domain (a NIC, RDMA) is not modelled: deployments larger than gpus_per_switch_domain are refused.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "models/common/port.hpp"

namespace indexsim::model {

struct NvlinkParams {
  uint32_t links = 0;                     // NVLink links of one GPU (all to the switches)
  double link_GBps_per_direction = 0;     // signalling rate of one link, one direction (the quoted figure)
  double link_effective_GBps = 0;         // payload bandwidth of one link after packet overhead, one direction
  double switch_latency_ns = 0;           // one way, GPU -> NVSwitch -> GPU, unloaded
  uint32_t queue_entries = 0;             // requests the port holds (waiting for the wire)
  // The section's topology keys (gpus_per_switch_domain, nvls, nvls_wire_factor) are what the
  // collective library reads (traces/generators/collective_kernels.cpp, read_fabric_limits), not
  // this port's.

  static NvlinkParams from(const config::Node& n);
  double effective_GBps() const { return links * link_effective_GBps; }
};

class NvlinkPort : public MemoryDevice {
 public:
  explicit NvlinkPort(const NvlinkParams& p);
  bool try_enqueue(const MemRequest& req, Tick now) override;
  Tick next_event() const override { return events_.top_time(); }
  void advance(Tick now, std::vector<MemCompletion>& done) override;
  double peak_bandwidth_GBps() const override { return p_.links * p_.link_GBps_per_direction; }
  Tick idle_read_latency_ps() const override;
  // The window onto the peers' memories: as large as the address window of a region.
  uint64_t capacity_bytes() const override { return uint64_t(1) << 43; }
  void report(StatSink& sink, const std::string& component) const override;
  const NvlinkParams& params() const { return p_; }

 private:
  NvlinkParams p_;
  double ps_per_byte_;   // at the effective bandwidth of all links
  EventHeap<uint64_t> events_;
  Tick wire_free_ = 0;   // when the egress finishes what it has taken so far
  uint32_t in_flight_ = 0;
  uint64_t stores_ = 0, loads_ = 0, bytes_out_ = 0, refused_ = 0;
  Tick busy_ps_ = 0, first_ = kNever, last_ = 0;
};

}  // namespace indexsim::model
