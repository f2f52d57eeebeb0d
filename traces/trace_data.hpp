// SPDX-License-Identifier: Apache-2.0
// A whole trace in memory, as the replay engine consumes it, and the totals that `trace info` and
// the tests compare with the model's arithmetic.
#pragma once

#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "traces/records.hpp"
#include "traces/trace_io.hpp"

namespace indexsim::trace {

struct TraceData {
  nlohmann::json metadata = nlohmann::json::object();
  std::vector<TensorRecord> tensors;
  std::vector<KernelRecord> kernels;
  std::vector<AccessRecord> accesses;
  std::vector<CtaRecord> ctas;
};

// Reads every record of a file (the streaming Reader underneath checks every CRC).
TraceData read_trace(const std::string& path);
// Writes tensors, then kernels, then accesses, then CTAs: every id is defined before it is used.
void write_trace(const TraceData& t, const std::string& path);

struct KindTotals {
  uint64_t kernels = 0, ctas = 0, bytes_read = 0, bytes_written = 0;
  std::array<double, kPrecisionCount> flops{};
  double total_flops() const;
};
struct ClassTotals {
  uint64_t tensors = 0, footprint_bytes = 0, bytes_read = 0, bytes_written = 0;
};

// Accumulates totals record by record, so a file of any size is summarised in constant memory
// (apart from one small entry per tensor and kernel). Tensors and kernels must come before the
// accesses that name them, as write_trace and the generators order them.
class Summary {
 public:
  void add(const Record& r);
  std::map<std::string, KindTotals> by_kind;        // kernel kind → totals
  std::map<std::string, ClassTotals> by_class;      // tensor class → totals
  KindTotals all;
  uint64_t tensors = 0, access_records = 0, cta_records = 0;
  nlohmann::json to_json() const;

 private:
  std::unordered_map<uint32_t, std::string> kernel_kind_;
  std::unordered_map<uint32_t, TensorClass> tensor_class_;
};

Summary summarize(const TraceData& t);

}  // namespace indexsim::trace
