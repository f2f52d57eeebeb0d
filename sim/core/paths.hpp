// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <string>

namespace indexsim::sim {
// Resolves a config given by name (`h200` → configs/hardware/h200.yaml) or by path. Looks in the
// current directory first, then in the source tree the binary was built from. Throws
// std::invalid_argument naming what was tried when nothing is found.
std::string find_config(const std::string& kind, const std::string& name_or_path);
}  // namespace indexsim::sim
