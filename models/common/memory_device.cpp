// SPDX-License-Identifier: Apache-2.0
#include "models/common/memory_device.hpp"

namespace indexsim::model {

std::unique_ptr<MemoryDevice> make_memory_device(const config::Node& node) {
  auto& reg = MemoryRegistry::instance();
  const auto names = reg.names();
  const auto impl = node.req<std::string>("impl", config::Rule::choice(names));
  return reg.make(impl, node);
}

}  // namespace indexsim::model
