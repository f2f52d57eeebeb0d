// SPDX-License-Identifier: Apache-2.0
// A plain memory trace as the request source of a memory bench replay (sim/memsys/bench.hpp).
//
// Time: a format that counts cycles (dramsim3: the memory clock; dramsys: the trace player's clock)
// is converted at `clock_MHz`, one cycle = 1e6 / clock_MHz ps, rounded to the nearest ps. The
// command line passes the target memory's own clock_MHz unless told otherwise (--trace-clock-MHz),
// which is DRAMsim3's unit exactly and DRAMSys's whenever its player runs at the memory clock.
// Formats without time stamps (the Ramulator ones) give every request time 0.
#pragma once

#include "sim/memsys/bench.hpp"
#include "sim/memtrace/plain_trace.hpp"

namespace indexsim::sim::memtrace {

class PlainTraceSource : public RequestSource {
 public:
  // `default_bytes` sizes requests whose line gives no length (every format but dramsys `(N)`). A
  // request beyond `capacity_bytes` (0: unchecked) is a MemTraceError naming its line.
  PlainTraceSource(PlainTraceReader& reader, double clock_MHz, uint32_t default_bytes, uint64_t capacity_bytes = 0);
  bool next(TimedRequest& out) override;

 private:
  PlainTraceReader& reader_;
  double period_ps_;
  uint32_t bytes_;
  uint64_t capacity_;
  PlainRequest pr_;
};

}  // namespace indexsim::sim::memtrace
