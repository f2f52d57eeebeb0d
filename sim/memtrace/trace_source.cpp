// SPDX-License-Identifier: Apache-2.0
#include "sim/memtrace/trace_source.hpp"

#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace indexsim::sim::memtrace {

PlainTraceSource::PlainTraceSource(PlainTraceReader& reader, double clock_MHz, uint32_t default_bytes,
                                   uint64_t capacity_bytes)
    : reader_(reader), period_ps_(clock_MHz > 0 ? 1e6 / clock_MHz : 0), bytes_(default_bytes), capacity_(capacity_bytes) {
  if (default_bytes == 0) throw std::invalid_argument("request bytes must be > 0");
}

bool PlainTraceSource::next(TimedRequest& out) {
  if (!reader_.next(pr_)) return false;
  out.addr = pr_.addr;
  out.write = pr_.write;
  out.bytes = pr_.bytes ? pr_.bytes : bytes_;
  if (capacity_ > 0 && (out.addr >= capacity_ || out.bytes > capacity_ - out.addr)) {
    char why[160];
    std::snprintf(why, sizeof why, "address 0x%llx + %u B lies beyond the target's capacity of %llu B",
                  static_cast<unsigned long long>(out.addr), out.bytes, static_cast<unsigned long long>(capacity_));
    throw MemTraceError(reader_.name(), reader_.line(), reader_.text(), why);
  }
  out.at_ps = static_cast<model::Tick>(std::llround(static_cast<double>(pr_.cycle) * period_ps_));
  return true;
}

}  // namespace indexsim::sim::memtrace
