// SPDX-License-Identifier: Apache-2.0
#include "models/common/processor.hpp"

namespace indexsim::model {

std::unique_ptr<Processor> make_processor(const config::Node& node, MemoryDevice& memory) {
  auto& reg = ProcessorRegistry::instance();
  const auto impl = node.req<std::string>("impl", config::Rule::choice(reg.names()));
  return reg.make(impl, node, memory);
}

}  // namespace indexsim::model
