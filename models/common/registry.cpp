// SPDX-License-Identifier: Apache-2.0
#include "models/common/registry.hpp"

#include <cstring>

namespace indexsim::config {

std::vector<RegistryEntryInfo>& all_registrations() {
  static std::vector<RegistryEntryInfo> v;
  return v;
}

std::string repo_relative(const char* file) {
  // __FILE__ is absolute under CMake; cut at the first top-level project folder.
  std::string f(file);
  for (const char* top : {"/models/", "/sim/", "/traces/", "/kernels/"}) {
    auto pos = f.rfind(top);
    if (pos != std::string::npos) return f.substr(pos + 1);
  }
  return f;
}

}  // namespace indexsim::config
