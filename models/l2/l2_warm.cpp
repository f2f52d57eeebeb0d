// SPDX-License-Identifier: Apache-2.0
// The L2's functional warming (MemoryDevice::warm): the fast mode's skipped CTAs leave the tags and
// dirty bits that their accesses would, with no timing, traffic or statistics.
#include "models/l2/l2.hpp"

#include <algorithm>

namespace indexsim::model {

uint32_t L2Cache::warm_way(uint32_t base, uint64_t line) {
  uint32_t found = find(base, line);
  if (found != kNone) {
    if (lines_[found].mshr != kNone) return kNone;
    policy_->touch(lines_[found].repl);
    return found;
  }
  found = victim(base);
  if (found == kNone) return kNone;
  // The victim's dirty data is dropped, not written: warming makes no traffic.
  if (tags_[found] != 0) redirty(tags_[found] - 1, lines_[found].dirty, 0);
  lines_[found] = Line{};
  tags_[found] = line + 1;
  policy_->insert(lines_[found].repl);
  return found;
}

void L2Cache::warm(const MemRequest& req) {
  // As lookup() would leave the tags, minus the timing: a miss allocates (a dirty victim's
  // writeback is traffic, which warming does not model), a line with a fill in flight is left alone;
  // a far read is served by its copy if whole, else by its home, and leaves a copy; a write drops them.
  const uint64_t first = req.addr / p_.line_B;
  const uint64_t end = req.addr + std::max<uint32_t>(req.bytes, 1);
  const uint32_t partition = req.source % p_.partitions;
  for (uint64_t line = first; line * p_.line_B < end; ++line) {
    const uint8_t mask = sector_mask(req, line);
    const SetRef home = set_of(line);
    const bool far_read = p_.replicate_far_reads && !req.write && partition_of(home.slice) != partition;
    const uint32_t copy_base = far_read ? copy_set(home, partition).base : 0;
    if (far_read) {
      const uint32_t c = find(copy_base, line);
      if (c != kNone && (mask & ~lines_[c].valid) == 0) {
        policy_->touch(lines_[c].repl);
        continue;
      }
    }
    const uint32_t found = warm_way(home.base, line);
    if (found == kNone) continue;
    Line& l = lines_[found];
    l.valid |= mask;
    if (req.write) {
      redirty(line, l.dirty, l.dirty | mask);
      l.dirty |= mask;
      if (p_.replicate_far_reads) drop_copies(line, home);
    } else if (far_read) {
      const uint32_t c = warm_way(copy_base, line);
      if (c != kNone) lines_[c].valid |= mask;
    }
  }
}

}  // namespace indexsim::model
