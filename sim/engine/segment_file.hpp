// SPDX-License-Identifier: Apache-2.0
// Segment memos on disk, so that runs in other processes can start from them: a sweep's points that
// differ only in context and techniques repeat the same weight GEMMs, and each takes them from the
// first such point's memos (`run --segments-to` / `--segments-from`, sweep `share_segments`). The
// file holds the key of the run that stored the memos, which a run inheriting them records in its
// configuration (RunSpec::segments_of), and the code version that made them: memos of another
// version would carry another model's figures, and loading them is refused.
//
// Format (little-endian, the trace codec's PayloadWriter; the file is a cache, not an archive):
//   "ISSEGS01", code version, run key, memo count, then each memo: its first member's signature,
//   member count, members, span, busy per processor, counters. Strings are blobs (u64 length, bytes).
#pragma once

#include <string>

#include "sim/engine/segment_reuse.hpp"

namespace indexsim::sim {

// Writes `lib` to `path` (under a temporary name, renamed once complete). Throws naming the file.
void save_segments(const SegmentLibrary& lib, const std::string& run_key, const std::string& path);

struct SegmentFile {
  std::string run_key;        // the run whose memos these are
  std::string code_version;   // the build that stored them
  SegmentLibrary library;
};
// Reads a file save_segments wrote. Throws std::invalid_argument (bad input) naming the file and what is wrong (missing, not
// a segment file, cut short, stored by another code version than `expect_version` when that is not empty).
SegmentFile load_segments(const std::string& path, const std::string& expect_version);

}  // namespace indexsim::sim
