// SPDX-License-Identifier: Apache-2.0
#include "sim/core/version.hpp"

#include "indexsim_version.h"  // generated at build time by cmake/version.cmake

namespace indexsim::sim {
std::string code_version() { return INDEXSIM_CODE_VERSION; }
std::string source_dir() { return INDEXSIM_SOURCE_DIR; }
}  // namespace indexsim::sim
