// SPDX-License-Identifier: Apache-2.0
// Text memory traces (first byte: the format) through PlainTraceReader: a malformed line must be a
// MemTraceError naming the line, never a crash. ramulator-readwrite's address vectors are read
// against one DRAM organisation, the stand-alone HBM3 stack preset's.
#include <cstdint>
#include <sstream>
#include <string>

#include "models/common/params.hpp"
#include "models/dram/dram_params.hpp"
#include "sim/memtrace/plain_trace.hpp"

using namespace indexsim::sim::memtrace;

namespace {
const AddressVectorCodec& codec() {
  static const AddressVectorCodec c = [] {
    auto doc = indexsim::config::Document::load_file(INDEXSIM_FUZZ_ROOT "/configs/hardware/hbm3-stack-6400.yaml");
    return AddressVectorCodec(indexsim::model::dram::load_dram_params(doc->root().child("memory").child("hbm")));
  }();
  return c;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const Format formats[] = {Format::DramSim3, Format::RamulatorLoadStore, Format::DramSys, Format::RamulatorReadWrite};
  const Format f = formats[data[0] % 4];
  std::istringstream in(std::string(reinterpret_cast<const char*>(data + 1), size - 1));
  try {
    PlainTraceReader r(in, "fuzz.trace", f, f == Format::RamulatorReadWrite ? &codec() : nullptr);
    PlainRequest req;
    for (int i = 0; i < 100000 && r.next(req); ++i) {
    }
  } catch (const std::exception&) {
  }
  return 0;
}
