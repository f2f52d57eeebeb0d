// SPDX-License-Identifier: Apache-2.0
// The replay's timeline as Chrome/Perfetto trace-event JSON: one track per stream with its kernels,
// and one track per group of 16 processor units with the span of each kernel's CTAs on them.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "models/common/time.hpp"
#include "sim/engine/run_result.hpp"

namespace indexsim::sim {

class Timeline {
 public:
  // `path` empty: records nothing. Units are called `unit_name` ("SM") in the track names.
  Timeline(std::string path, std::string unit_name, uint32_t units)
      : path_(std::move(path)), unit_name_(std::move(unit_name)), units_(units) {}
  bool on() const { return !path_.empty(); }
  // A CTA of kernel `kernel` (index into the results written later) ran on `unit` from start to end.
  void cta(uint32_t kernel, uint32_t unit, model::Tick start, model::Tick end);
  // Writes the file; std::runtime_error naming it when it cannot be written.
  void write(const std::vector<KernelResult>& kernels) const;

 private:
  static constexpr uint32_t kGroup = 16;
  std::string path_, unit_name_;
  uint32_t units_;
  std::map<std::pair<uint32_t, uint32_t>, std::pair<model::Tick, model::Tick>> spans_;  // (kernel, group) -> first start, last end
};

}  // namespace indexsim::sim
