// SPDX-License-Identifier: Apache-2.0
#include "sim/engine/capture_state.hpp"

#include <algorithm>
#include <stdexcept>

namespace indexsim::sim {

void check_l2_start(const std::string& l2_start) {
  if (l2_start != "capture" && l2_start != "clean")
    throw std::invalid_argument("l2_start must be capture or clean, not '" + l2_start + "'");
}

uint64_t capture_dirty_flush_bytes(const nlohmann::json& meta, const std::string& l2_start) {
  check_l2_start(l2_start);
  if (l2_start == "clean" || !meta.is_object() || meta.value("source", std::string()) != "captured") return 0;
  const auto timing = meta.find("timing");
  if (timing == meta.end() || !timing->is_object()) return 0;
  const auto mode = timing->find("l2_flush_mode"), mib = timing->find("l2_flush_MiB");
  if (mode != timing->end() && *mode != "write" && *mode != "read")
    throw std::invalid_argument("trace metadata timing.l2_flush_mode: " + mode->dump() + " is not write or read");
  if (mode != timing->end() && *mode == "read") return 0;  // clean lines; none recorded: a memset
  if (mib == timing->end()) return 0;
  // A corrupt header is refused by name, not turned into a petabyte tensor.
  if (!mib->is_number_integer() || mib->get<int64_t>() < 0 || mib->get<int64_t>() > (int64_t(1) << 24))
    throw std::invalid_argument("trace metadata timing.l2_flush_MiB: " + mib->dump() +
                                " is not a flush size in MiB (0 to 16777216)");
  return mib->get<uint64_t>() << 20;
}

uint32_t add_flush_tensor(trace::TraceData& td, uint64_t bytes) {
  trace::TensorRecord t;
  t.id = uint32_t(td.tensors.size());
  t.name = "capture.l2_flush";
  t.cls = trace::TensorClass::scratch;
  t.bytes = bytes;
  td.tensors.push_back(t);
  return t.id;
}

void warm_dirty(model::MemoryDevice& memory, uint64_t base, uint64_t bytes, uint32_t line_bytes) {
  model::MemRequest r;
  r.write = true;
  r.tag = uint8_t(1 + int(trace::TensorClass::scratch));
  for (uint64_t off = 0; off < bytes; off += line_bytes) {
    r.addr = base + off;
    r.bytes = uint32_t(std::min<uint64_t>(line_bytes, bytes - off));
    memory.warm(r);
  }
}

}  // namespace indexsim::sim
