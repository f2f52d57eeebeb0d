// SPDX-License-Identifier: Apache-2.0
// The timing-core interface shared by every memory unit (HBM, L2, CXL, SRAM, HBF).
//
// A core is plain C++ and event-driven: it accepts requests (with back-pressure), says when its
// next internal event is due, and when advanced to that time reports the requests that completed.
// It never ticks idle cycles. The SystemC adapter and the fast replay loop drive the same core.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "models/common/stats.hpp"
#include "models/common/time.hpp"
#include "models/common/params.hpp"
#include "models/common/registry.hpp"

namespace indexsim::model {

struct MemRequest {
  uint64_t id = 0;       // unique per requester stream; echoed in the completion
  uint64_t addr = 0;     // physical byte address (device-local after the address map)
  uint32_t bytes = 0;    // access size: a sector, a line, or a coarse chunk in fast mode
  bool write = false;
  uint32_t source = 0;   // requester (SM id, bench thread, ...)
  // What the bytes are, for the statistics that break reads down by it (StatSink::tag_names); the
  // requester's choice, 0 for none. Kernels' accesses carry 1 + their tensor's class.
  uint8_t tag = 0;
};

constexpr uint64_t kAnyQueue = UINT64_MAX;  // MemoryDevice::refused_queue: no queue named

struct MemCompletion {
  uint64_t id;
  Tick done;             // when the last byte is delivered (read) or accepted (write)
};

class MemoryDevice {
 public:
  virtual ~MemoryDevice() = default;
  // False when the device's queue for this request is full; retry at next_retry() or later.
  virtual bool try_enqueue(const MemRequest& req, Tick now) = 0;
  // The earliest time at which the device may have something to report (a completion), kNever
  // when idle. Callers wake then; a device may look ahead past internal events that cannot
  // complete anything sooner.
  virtual Tick next_event() const = 0;
  // The earliest time at which a refused request may be accepted: for a sender holding one. Never
  // later than next_event(). A device whose next_event() looks ahead returns its next internal
  // event here (a queue slot can free at any of them); others free slots only at events they
  // report anyway.
  virtual Tick next_retry() const { return next_event(); }
  // After try_enqueue refused a request: true when only the completion of one of that request's
  // source's own requests can make room (a per-source limit, as a crossbar port's in-flight count),
  // so that the sender may wait for its own completions instead of retrying at every event.
  virtual bool refused_per_source() const { return false; }
  // After try_enqueue refused a request (as refused_per_source): which of the device's input queues
  // it waits for, for a sender that keeps refused requests, so that requests of one queue are taken
  // in order and a full queue does not hold back another's. kAnyQueue (the default): not known.
  virtual uint64_t refused_queue() const { return kAnyQueue; }
  // False when a request of queue `key` would be refused now (after advance() to now): its sender
  // need not try. True when it may be taken, or the device cannot tell.
  virtual bool may_take(uint64_t key) const { (void)key; return true; }
  // A count that grows each time one of its queues frees room, so that a sender need not try its
  // waiting requests again while it has not grown; kAnyQueue: not kept (try at every retry).
  virtual uint64_t slots_freed() const { return kAnyQueue; }
  // Processes every event due at or before `now`; appends finished requests to `done`.
  virtual void advance(Tick now, std::vector<MemCompletion>& done) = 0;
  // Theoretical peak data bandwidth of this device, in GB/s (1e9 bytes per second).
  virtual double peak_bandwidth_GBps() const = 0;
  // Unloaded latency of one minimal read, in ps: what a pointer chase through this unit alone sees.
  virtual Tick idle_read_latency_ps() const = 0;
  virtual uint64_t capacity_bytes() const = 0;
  // Writes complete when accepted (posted). When the last accepted write actually reached its
  // medium (its data on the DRAM bus), 0 when none did or the device does not know: a trace run
  // ends at the latest of this and its last completion.
  virtual Tick last_write_issued_ps() const { return 0; }
  virtual void report(StatSink& sink, const std::string& component) const = 0;
  // Functional warming: leave the state (cache contents) as if `req` had been served, with no
  // timing, traffic or statistics. The fast mode warms with the CTAs it does not simulate, so that
  // the next kernel finds what they would have left in the caches. Stateless devices ignore it.
  virtual void warm(const MemRequest& req) { (void)req; }
  // How far back warming must reach, in distinct bytes: what accesses leave in this device (and
  // those below it that it warms) is gone once later accesses have touched this many distinct bytes
  // more than once over (an LRU or FIFO cache: its capacity; the fast mode warms with a margin of
  // several times it). 0: warming leaves nothing (the default, with the default warm()); UINT64_MAX:
  // its state may keep anything, however long ago (a scan-resistant policy), so warm with all.
  virtual uint64_t warm_reach_bytes() const { return 0; }
  // A write-back cache: the bytes written to it and not yet written below, by account. Whoever
  // composes the memory numbers the accounts (the region each address belongs to) and reports each
  // as pending writes of that region (StatSink::pending); without accounts everything is account 0.
  // Devices that hold no dirty data have none.
  using WriteAccounts = std::function<uint32_t(uint64_t addr)>;
  virtual void set_write_accounts(WriteAccounts account_of, uint32_t accounts) { (void)account_of, (void)accounts; }
  virtual uint64_t dirty_bytes(uint32_t account) const { (void)account; return 0; }
};

// Memory devices are built from their YAML section (`impl:` picks the entry).
using MemoryRegistry = config::Registry<MemoryDevice, const config::Node&>;

// Builds the device named by node's `impl` key; unknown names are a ConfigError naming the choices.
std::unique_ptr<MemoryDevice> make_memory_device(const config::Node& node);

}  // namespace indexsim::model
