// SPDX-License-Identifier: Apache-2.0
// Helpers shared by the DRAM tests: load a shipped hardware preset's memory.hbm section (with
// --set style overrides) and drive single requests through the core.
#pragma once

#include <functional>
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

// The first interleave-aligned address whose decoded location satisfies `pred`.
inline uint64_t find_addr(const model::dram::DramDevice& d, const std::function<bool(const model::dram::DramAddress&)>& pred) {
  const uint64_t step = d.address_map().interleave_bytes();
  for (uint64_t a = 0; a < d.capacity_bytes(); a += step)
    if (pred(d.address_map().decode(a))) return a;
  ADD_FAILURE() << "no address matches";
  return 0;
}

// The checker's log of one command kind on one pseudo-channel.
inline std::vector<model::dram::CommandRecord> commands(const model::dram::DramDevice& d, uint32_t pc, model::dram::Cmd cmd) {
  std::vector<model::dram::CommandRecord> v;
  for (const auto& c : d.checker()->log())
    if (c.pc == pc && c.cmd == cmd) v.push_back(c);
  return v;
}

inline void expect_no_violations(const model::dram::DramDevice& d) {
  ASSERT_NE(d.checker(), nullptr);
  EXPECT_TRUE(d.checker()->violations().empty()) << d.checker()->violations().front();
}

}  // namespace indexsim::test
