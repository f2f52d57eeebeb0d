// SPDX-License-Identifier: Apache-2.0
// The requests an L2 has refused and will see again, by id (L2Cache::try_enqueue). A saturated L2
// refuses tens of tries for each request it takes, thousands of requests wait at once (every SM's
// pipeline stages), and each try starts here: a flat table, open addressing with linear probing
// and deletion by backward shift, so that a try costs one probe in a few hundred KiB, not a chase
// through a node-based map into cold memory. Each entry carries the refusal's witness: a slice
// whose queue could not take the lines that go home to it whatever the copies hold; while that
// queue is as full, the next try is refused without looking further.
#pragma once

#include <cstdint>
#include <vector>

#include "models/common/port.hpp"  // mix64

namespace indexsim::model {

struct WaitingRequest {
  uint64_t id = 0, addr = 0;
  uint32_t bytes = 0;
  uint32_t entry = 0;          // its kept lines (L2Cache::Blocked) in the L2's pool
  uint32_t witness_slice = 0;  // refused while queue(witness_slice) + witness_lines > depth
  uint32_t witness_lines = 0;  // 0: no witness (refused for a copy's slice, which moves)
  // Its lines that go home whatever the copies hold, per slice, when they touch at most kInline
  // slices (inline_slices; kNotInline otherwise): a witness that fails is judged again from here,
  // in the table, not from the kept lines in colder memory.
  static constexpr uint8_t kInline = 8, kNotInline = 0xff;
  uint8_t inline_slices = kNotInline;
  uint16_t home_slice[kInline] = {}, home_lines[kInline] = {};
  bool used = false;
};

class WaitingTable {
 public:
  WaitingTable() : slots_(kInitialSlots) {}
  // The entry of `id`, or null. Valid until the next insert or erase.
  WaitingRequest* find(uint64_t id) {
    for (size_t i = home(id);; i = (i + 1) & mask()) {
      WaitingRequest& s = slots_[i];
      if (!s.used) return nullptr;
      if (s.id == id) return &s;
    }
  }
  // A new entry for `id`, which must not be in the table.
  WaitingRequest& insert(uint64_t id) {
    if (2 * (used_ + 1) > slots_.size()) grow();
    size_t i = home(id);
    while (slots_[i].used) i = (i + 1) & mask();
    slots_[i] = WaitingRequest{};
    slots_[i].id = id;
    slots_[i].used = true;
    ++used_;
    return slots_[i];
  }
  void erase(WaitingRequest* w) {
    // Backward shift: a later entry of the same probe run moves into the hole unless its home lies
    // cyclically in (hole, its place].
    size_t hole = size_t(w - slots_.data());
    for (size_t j = (hole + 1) & mask(); slots_[j].used; j = (j + 1) & mask()) {
      const size_t h = home(slots_[j].id);
      const bool stays = hole <= j ? (hole < h && h <= j) : (hole < h || h <= j);
      if (stays) continue;
      slots_[hole] = slots_[j];
      hole = j;
    }
    slots_[hole].used = false;
    --used_;
  }
  size_t size() const { return used_; }
  void clear() {
    slots_.assign(kInitialSlots, WaitingRequest{});
    used_ = 0;
  }

 private:
  static constexpr size_t kInitialSlots = 4096;  // a power of two
  size_t mask() const { return slots_.size() - 1; }
  size_t home(uint64_t id) const { return size_t(mix64(id)) & mask(); }
  void grow() {
    std::vector<WaitingRequest> old(slots_.size() * 2);
    old.swap(slots_);
    used_ = 0;
    for (const WaitingRequest& s : old)
      if (s.used) insert(s.id) = s;
  }
  std::vector<WaitingRequest> slots_;
  size_t used_ = 0;
};

}  // namespace indexsim::model
