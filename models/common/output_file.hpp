// SPDX-License-Identifier: Apache-2.0
// Output files (traces, timelines, exported memory traces) are written under a temporary name and
// renamed over the final one only once complete and checked: a full disk or a failed run never
// leaves an empty or cut file under the final name. An existing final path must be a regular
// file: renaming over a device (/dev/full) or a FIFO would replace it.
#pragma once

#include <cstdio>
#include <filesystem>
#include <stdexcept>
#include <string>

namespace indexsim {

// The temporary name to write `path` under; std::runtime_error when `path` exists and is not a
// regular file. `what` names the file's kind in the message ("timeline", "trace").
inline std::string temporary_for(const std::string& path, const std::string& what) {
  std::error_code ec;
  if (std::filesystem::exists(path, ec) && !std::filesystem::is_regular_file(path, ec))
    throw std::runtime_error("cannot write " + what + " " + path + ": it exists and is not a regular file");
  return path + ".tmp";
}

// Renames the complete temporary file over `path`; removes it and throws when that fails.
inline void commit_temporary(const std::string& tmp, const std::string& path, const std::string& what) {
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw std::runtime_error("cannot write " + what + " " + path + " (rename from " + tmp + " failed)");
  }
}

}  // namespace indexsim
