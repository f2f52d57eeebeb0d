// SPDX-License-Identifier: Apache-2.0
// A reader for the .npy files of the vector fixture (NumPy's own format, version 1-3): C order,
// little-endian float16, float32 or int32. Anything else is refused with the file and the reason.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace indexsim::sim::functional {

struct NpyArray {
  std::vector<int64_t> shape;
  std::vector<float> f32;     // float16 and float32 files land here, widened exactly
  std::vector<int32_t> i32;   // int32 files land here
  int64_t size() const;
};

NpyArray read_npy(const std::string& path);

}  // namespace indexsim::sim::functional
