// SPDX-License-Identifier: Apache-2.0
// Text memory traces (first byte: the format) through PlainTraceReader: a malformed line must be a
// MemTraceError naming the line, never a crash. ramulator-readwrite is left out: its address
// vectors need a DRAM organisation (the DRAM model's code), which this small build does not hold.
#include <cstdint>
#include <sstream>
#include <string>

#include "sim/memtrace/plain_trace.hpp"

using namespace indexsim::sim::memtrace;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const Format formats[] = {Format::DramSim3, Format::RamulatorLoadStore, Format::DramSys};
  const Format f = formats[data[0] % 3];
  std::istringstream in(std::string(reinterpret_cast<const char*>(data + 1), size - 1));
  try {
    PlainTraceReader r(in, "fuzz.trace", f);
    PlainRequest req;
    for (int i = 0; i < 100000 && r.next(req); ++i) {
    }
  } catch (const std::exception&) {
  }
  return 0;
}
