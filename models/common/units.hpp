// SPDX-License-Identifier: Apache-2.0
// Byte counts as people read them, in messages and reports: binary units (KiB = 1024 B).
#pragma once

#include <cstdio>
#include <string>

namespace indexsim {

// "512 B", "1.50 KiB", ..., "3.25 GiB", "1.02 TiB".
inline std::string human_bytes(double b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (b >= 1024 && u < 4) {
    b /= 1024;
    ++u;
  }
  char buf[48];
  std::snprintf(buf, sizeof buf, u ? "%.2f %s" : "%.0f %s", b, units[u]);
  return buf;
}

}  // namespace indexsim
