// SPDX-License-Identifier: Apache-2.0
// First in, first out: a way's word is the time it was filled; hits change nothing; the oldest fill
// gives way (the first of equals in way order).
#include "models/common/replacement.hpp"

namespace indexsim::model {
namespace {

class Fifo : public FirstSmallestPolicy {
 public:
  void touch(uint64_t&) override {}
  void insert(uint64_t& s) override { s = ++clock_; }

 private:
  uint64_t clock_ = 0;
};

INDEXSIM_REGISTER(ReplacementRegistry, "replacement", "fifo", [](uint64_t) { return std::make_unique<Fifo>(); });

}  // namespace
}  // namespace indexsim::model
