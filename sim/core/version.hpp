// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <string>

namespace indexsim::sim {
// "<semver>+<git sha>[.modified]" of the build (.modified: tracked files differed from the commit):
// stored with every run and every trace; a stored run of another version is stale.
std::string code_version();
// The repository root at build time (to find configs/ when run from the build tree).
std::string source_dir();
}  // namespace indexsim::sim
