// SPDX-License-Identifier: Apache-2.0
#include "models/common/replacement.hpp"

#include <algorithm>

namespace indexsim::model {

std::unique_ptr<ReplacementPolicy> make_replacement(const config::Node& node, const std::string& key,
                                                    const std::vector<std::string>& extra, std::string* chosen) {
  auto& reg = ReplacementRegistry::instance();
  std::vector<std::string> names = extra;
  for (const auto& n : reg.names()) names.push_back(n);
  const auto name = node.req<std::string>(key, config::Rule::choice(names));
  if (chosen) *chosen = name;
  if (std::find(extra.begin(), extra.end(), name) != extra.end()) return nullptr;
  return reg.make(name, 1);
}

}  // namespace indexsim::model
