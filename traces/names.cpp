// SPDX-License-Identifier: Apache-2.0
#include "traces/records.hpp"

namespace indexsim::trace {

namespace {
constexpr const char* kTensorClassNames[] = {"weights",      "kv_cache",     "indexer_cache", "activations",
                                             "linear_state", "topk_indices", "scratch",      "peer"};
constexpr const char* kPrecisionNames[] = {"fp32", "tf32", "bf16", "fp16", "fp8", "fp4", "simt"};
}  // namespace

const char* to_string(TensorClass c) { return kTensorClassNames[static_cast<int>(c)]; }

bool tensor_class_from_string(const std::string& s, TensorClass& out) {
  for (int i = 0; i < kTensorClassCount; ++i)
    if (s == kTensorClassNames[i]) {
      out = static_cast<TensorClass>(i);
      return true;
    }
  return false;
}

const char* to_string(Precision p) { return kPrecisionNames[static_cast<int>(p)]; }

}  // namespace indexsim::trace
