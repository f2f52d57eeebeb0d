// SPDX-License-Identifier: Apache-2.0
// Helpers shared by the DRAM tests: load a shipped hardware preset's memory.hbm section (with
// --set style overrides) and drive single requests through the core.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "models/dram/dram.hpp"
#include "models/common/params.hpp"

namespace indexsim::test {

inline std::string repo_path(const std::string& rel) { return std::string(INDEXSIM_TEST_DATA) + "/../../" + rel; }

inline std::unique_ptr<model::dram::DramDevice> load_dram(const std::string& file, const std::string& section,
                                                          const std::vector<std::string>& sets = {}) {
  auto doc = config::Document::load_file(repo_path(file));
  for (const auto& s : sets) doc->set(section + "." + s);
  config::Node node = doc->root();
  size_t start = 0;
  for (size_t dot; (dot = section.find('.', start)) != std::string::npos; start = dot + 1)
    node = node.child(section.substr(start, dot - start));
  node = node.child(section.substr(start));
  auto dev = model::make_memory_device(node);
  return std::unique_ptr<model::dram::DramDevice>(dynamic_cast<model::dram::DramDevice*>(dev.release()));
}

inline std::unique_ptr<model::dram::DramDevice> load_hbm(const std::string& gpu,
                                                         const std::vector<std::string>& sets = {}) {
  return load_dram("configs/hardware/" + gpu + ".yaml", "memory.hbm", sets);
}

// Runs the device until it is idle; returns what completed.
inline std::vector<model::MemCompletion> drain(model::MemoryDevice& d) {
  std::vector<model::MemCompletion> out;
  for (model::Tick t; (t = d.next_event()) != model::kNever;) d.advance(t, out);
  return out;
}

inline model::MemRequest rd(uint64_t id, uint64_t addr, uint32_t bytes = 32) {
  model::MemRequest r;
  r.id = id;
  r.addr = addr;
  r.bytes = bytes;
  return r;
}

}  // namespace indexsim::test
