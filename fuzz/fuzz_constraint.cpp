// SPDX-License-Identifier: Apache-2.0
// A sweep spec's `require:` expression (the whole input) through SweepSpec::load_string, over a
// fixed spec whose four axes cover what the parser treats differently: a preset name, a step count,
// a config key under hardware. and a technique list. A parsed expression is then evaluated on every
// point, so evaluation (and the tree's destruction) sees whatever shape the parser accepted. Every
// refusal must be a ConfigError or another std::exception, never a crash, a stack overflow or a hang.
#include <cstdint>
#include <cstdio>
#include <string>

#include "sim/sweep/spec.hpp"

namespace {
// 3 x 3 x 2 x 2 = 36 points: enough for each comparison to see both outcomes, cheap to evaluate.
const char* kHead =
    "name: fuzz\n"
    "base: {hardware: h200, workload: glm-5, step: {context: 4096}}\n"
    "axes:\n"
    "  hardware: [a100, h100, h200]\n"
    "  step.context: {from: 1024, to: 1048576, factor: 32}\n"
    "  hardware.memory.sram.capacity_KiB: [6144, 12288.5]\n"
    "  techniques: [baseline, 'indexshare,dimprune']\n"
    "constraints:\n"
    "  - require: \"";

// A double-quoted YAML scalar whose value is exactly `text`: the parser, not the YAML layer, must see
// the quotes, backslashes and control characters. Bytes of 0x80 and up pass as they are: the config
// layer's UTF-8 check is part of the path a real spec takes.
std::string quoted(const std::string& text) {
  std::string out;
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += ch;
    } else if (c < 0x20 || c == 0x7f) {
      char esc[5];
      std::snprintf(esc, sizeof esc, "\\x%02x", c);
      out += esc;
    } else {
      out += ch;
    }
  }
  return out;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string expr(reinterpret_cast<const char*>(data), size);
  try {
    const auto spec = indexsim::sim::sweep::SweepSpec::load_string(kHead + quoted(expr) + "\"\n", "fuzz-sweep.yaml");
    (void)spec.points();
  } catch (const std::exception&) {
  }
  return 0;
}
