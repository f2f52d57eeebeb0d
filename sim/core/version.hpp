// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <string>

namespace indexsim::sim {
// "<semver>+<git sha>" of the build: stored with every run and every trace.
std::string code_version();
// The repository root at build time (to find configs/ when run from the build tree).
std::string source_dir();
}  // namespace indexsim::sim
