// SPDX-License-Identifier: Apache-2.0
#include "traces/trace_data.hpp"

#include <stdexcept>

namespace indexsim::trace {

TraceData read_trace(const std::string& path) {
  Reader reader(path);
  TraceData t;
  t.metadata = reader.metadata();
  while (auto rec = reader.next()) {
    std::visit(
        [&](auto&& r) {
          using T = std::decay_t<decltype(r)>;
          if constexpr (std::is_same_v<T, TensorRecord>) t.tensors.push_back(std::move(r));
          else if constexpr (std::is_same_v<T, KernelRecord>) t.kernels.push_back(std::move(r));
          else if constexpr (std::is_same_v<T, AccessRecord>) t.accesses.push_back(std::move(r));
          else t.ctas.push_back(std::move(r));
        },
        std::move(*rec));
  }
  return t;
}

void write_trace(const TraceData& t, const std::string& path) {
  Writer w(path, t.metadata);
  for (const auto& r : t.tensors) w.write(r);
  for (const auto& r : t.kernels) w.write(r);
  for (const auto& r : t.accesses) w.write(r);
  for (const auto& r : t.ctas) w.write(r);
  w.close();
}

double KindTotals::total_flops() const {
  double s = 0;
  for (double f : flops) s += f;
  return s;
}

void Summary::add(const Record& rec) {
  if (const auto* t = std::get_if<TensorRecord>(&rec)) {
    ++tensors;
    tensor_class_[t->id] = t->cls;
    auto& c = by_class[to_string(t->cls)];
    ++c.tensors;
    c.footprint_bytes += t->bytes;
  } else if (const auto* k = std::get_if<KernelRecord>(&rec)) {
    kernel_kind_[k->id] = to_string(k->kind);
    for (KindTotals* kt : {&by_kind[to_string(k->kind)], &all}) {
      ++kt->kernels;
      kt->ctas += k->cta_count();
      for (int p = 0; p < kPrecisionCount; ++p) kt->flops[p] += k->flops[p];
    }
  } else if (const auto* a = std::get_if<AccessRecord>(&rec)) {
    ++access_records;
    const auto kit = kernel_kind_.find(a->kernel);
    const auto tit = tensor_class_.find(a->tensor);
    if (kit == kernel_kind_.end())
      throw std::invalid_argument("access record names kernel " + std::to_string(a->kernel) + " before its launch");
    if (tit == tensor_class_.end())
      throw std::invalid_argument("access record names tensor " + std::to_string(a->tensor) + " before its record");
    const uint64_t b = a->total_bytes();
    auto& ct = by_class[to_string(tit->second)];
    for (KindTotals* kt : {&by_kind[kit->second], &all}) (a->write ? kt->bytes_written : kt->bytes_read) += b;
    (a->write ? ct.bytes_written : ct.bytes_read) += b;
  } else {
    ++cta_records;
  }
}

nlohmann::json Summary::to_json() const {
  auto kind_json = [](const KindTotals& k) {
    nlohmann::json f = nlohmann::json::object();
    for (int p = 0; p < kPrecisionCount; ++p)
      if (k.flops[p] != 0) f[to_string(static_cast<Precision>(p))] = k.flops[p];
    return nlohmann::json{{"kernels", k.kernels}, {"ctas", k.ctas},       {"bytes_read", k.bytes_read},
                          {"bytes_written", k.bytes_written}, {"flops", f}};
  };
  nlohmann::json j;
  j["totals"] = kind_json(all);
  j["totals"]["tensors"] = tensors;
  j["totals"]["access_records"] = access_records;
  j["totals"]["cta_records"] = cta_records;
  for (const auto& [kind, k] : by_kind) j["by_kind"][kind] = kind_json(k);
  for (const auto& [cls, c] : by_class)
    j["by_class"][cls] = {{"tensors", c.tensors},
                          {"footprint_bytes", c.footprint_bytes},
                          {"bytes_read", c.bytes_read},
                          {"bytes_written", c.bytes_written}};
  return j;
}

Summary summarize(const TraceData& t) {
  Summary s;
  for (const auto& r : t.tensors) s.add(r);
  for (const auto& r : t.kernels) s.add(r);
  for (const auto& r : t.accesses) s.add(r);
  for (const auto& r : t.ctas) s.add(r);
  return s;
}

}  // namespace indexsim::trace
