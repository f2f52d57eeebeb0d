// SPDX-License-Identifier: Apache-2.0
// A YAML document and `--set` assignments through config::Document: the input's lines that start
// with "#set " are assignments (applied after loading, as the CLI does), the rest is the document.
// Every refusal must be a ConfigError or another std::exception, never a crash or a hang.
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "models/common/params.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::string doc;
  std::vector<std::string> sets;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("#set ", 0) == 0) sets.push_back(line.substr(5));
    else doc += line + "\n";
  }
  try {
    auto d = indexsim::config::Document::load_string(doc, "fuzz.yaml");
    for (const auto& s : sets) d->set(s);
    (void)d->resolved().dump();
  } catch (const std::exception&) {
  }
  return 0;
}
