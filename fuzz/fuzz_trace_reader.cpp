// SPDX-License-Identifier: Apache-2.0
// An .itr file of arbitrary bytes through trace::Reader: every defect must be a TraceError (or
// another std::exception naming it), never a crash, a sanitizer report or a hang. The input's CRCs
// are recomputed where its structure allows (traces/FORMAT.md), so that mutations reach the
// payload decoders instead of stopping at the first checksum.
#include <unistd.h>
#include <zlib.h>

#include <cstring>
#include <vector>

#include <cstdint>
#include <cstdio>
#include <string>

#include "traces/trace_io.hpp"

namespace {
uint32_t get_u32(const std::vector<uint8_t>& b, size_t at) {
  uint32_t v;
  std::memcpy(&v, b.data() + at, 4);
  return v;
}
void put_crc(std::vector<uint8_t>& b, size_t at, size_t from, size_t n) {
  const uint32_t c = uint32_t(crc32(0L, b.data() + from, uInt(n)));
  std::memcpy(b.data() + at, &c, 4);
}
// Header CRC over [0, 16 + J) at 16 + J; each block's CRC of its payload after its type and length.
void fix_crcs(std::vector<uint8_t>& b) {
  if (b.size() < 16) return;
  const uint64_t j = get_u32(b, 12);
  if (16 + j + 4 > b.size()) return;
  put_crc(b, 16 + j, 0, 16 + j);
  for (uint64_t pos = 20 + j; pos + 9 <= b.size();) {
    const uint64_t p = get_u32(b, pos + 1);
    if (pos + 9 + p > b.size()) return;
    put_crc(b, pos + 5, pos + 9, p);
    pos += 9 + p;
  }
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // The reader takes a path: one scratch file per process, rewritten for each input.
  static const std::string path = "/tmp/indexsim-fuzz-reader-" + std::to_string(getpid()) + ".itr";
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return 0;
  std::vector<uint8_t> bytes(data, data + size);
  fix_crcs(bytes);
  std::fwrite(bytes.data(), 1, bytes.size(), f);
  std::fclose(f);
  try {
    indexsim::trace::Reader r(path);
    // A bounded number of records: a valid file of many small blocks is not a finding.
    for (int i = 0; i < 100000 && r.next(); ++i) {
    }
  } catch (const std::exception&) {
  }
  return 0;
}
