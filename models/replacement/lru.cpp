// SPDX-License-Identifier: Apache-2.0
// Least recently used: a way's word is the time of its last use; the oldest gives way (the first of
// equals in way order).
#include "models/common/replacement.hpp"

namespace indexsim::model {
namespace {

class Lru : public FirstSmallestPolicy {
 public:
  void touch(uint64_t& s) override { s = ++clock_; }
  void insert(uint64_t& s) override { s = ++clock_; }

 private:
  uint64_t clock_ = 0;
};

INDEXSIM_REGISTER(ReplacementRegistry, "replacement", "lru", [](uint64_t) { return std::make_unique<Lru>(); });

}  // namespace
}  // namespace indexsim::model
