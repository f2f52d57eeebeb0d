// SPDX-License-Identifier: Apache-2.0
#include "sim/engine/segment_file.hpp"

#include <cstring>
#include <fstream>
#include <iterator>
#include <stdexcept>

#include "models/common/output_file.hpp"
#include "sim/core/version.hpp"
#include "traces/codec.hpp"

namespace indexsim::sim {

namespace {
constexpr char kMagic[8] = {'I', 'S', 'S', 'E', 'G', 'S', '0', '1'};

[[noreturn]] void corrupt(const std::string& path, const std::string& what) {
  throw std::invalid_argument("segment file " + path + ": corrupt (" + what + ")");
}

// A count of elements that each take at least one byte: more than the bytes left is a corrupt file,
// refused before it allocates.
uint64_t count(trace::PayloadReader& r, const std::string& path, const char* what) {
  const uint64_t n = r.u64();
  if (n > r.remaining()) corrupt(path, std::string("a count of ") + what + " of " + std::to_string(n));
  return n;
}
}  // namespace

void save_segments(const SegmentLibrary& lib, const std::string& run_key, const std::string& path) {
  trace::PayloadWriter w;
  w.blob(code_version());
  w.blob(run_key);
  uint64_t memos = 0;
  for (const auto& [sig, list] : lib) memos += list.size();
  w.u64(memos);
  for (const auto& [sig, list] : lib) {
    for (const SegmentMemo& m : list) {
      w.blob(sig);
      w.u64(m.members.size());
      for (const SegmentMember& s : m.members) {
        w.blob(s.signature);
        w.f64(s.gather.row_lines);
        w.f64(s.gather.distinct_lines);
        for (uint64_t v : {s.ready, s.duration, s.bytes_read, s.bytes_written, s.requests, s.ctas_simulated}) w.u64(v);
      }
      w.u64(m.span);
      w.u64(m.busy.size());
      for (const auto& b : m.busy) {
        w.u64(b.resident_ps);
        w.u64(b.compute_ps);
      }
      w.u64(m.counters.size());
      for (const auto& c : m.counters) {
        w.blob(c.key);
        w.blob(c.unit);
        w.f64(c.value);
        w.u8(c.simulated);
      }
    }
  }
  const std::string tmp = temporary_for(path, "segment file");
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) throw std::runtime_error("cannot write segment file " + path + " (cannot open " + tmp + ")");
    f.write(kMagic, sizeof kMagic);
    f.write(reinterpret_cast<const char*>(w.bytes().data()), std::streamsize(w.bytes().size()));
    f.flush();
    if (!f) {
      f.close();
      std::remove(tmp.c_str());
      throw std::runtime_error("cannot write segment file " + path + " (writing " + tmp + " failed: disk full?)");
    }
  }
  commit_temporary(tmp, path, "segment file");
}

SegmentFile load_segments(const std::string& path, const std::string& expect_version) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::invalid_argument("segment file " + path + ": cannot be opened (missing?)");
  const std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (bytes.size() < sizeof kMagic || std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0)
    throw std::invalid_argument("segment file " + path + ": not a segment file (no ISSEGS01 header)");
  trace::PayloadReader r(reinterpret_cast<const uint8_t*>(bytes.data()) + sizeof kMagic, bytes.size() - sizeof kMagic);
  SegmentFile out;
  try {
    out.code_version = r.blob();
    if (!expect_version.empty() && out.code_version != expect_version)
      throw std::invalid_argument("segment file " + path + ": stored by code version " + out.code_version + ", this is " +
                                  expect_version + " (its memos carry the other version's figures; run its run again)");
    out.run_key = r.blob();
    const uint64_t memos = count(r, path, "memos");
    for (uint64_t i = 0; i < memos; ++i) {
      const std::string sig = r.blob();
      SegmentMemo m;
      m.members.resize(count(r, path, "members"));
      if (m.members.empty()) corrupt(path, "a memo without members");
      for (SegmentMember& s : m.members) {
        s.signature = r.blob();
        s.gather.row_lines = r.f64();
        s.gather.distinct_lines = r.f64();
        for (uint64_t* v : {&s.ready, &s.duration, &s.bytes_read, &s.bytes_written, &s.requests, &s.ctas_simulated})
          *v = r.u64();
      }
      if (m.members[0].signature != sig) corrupt(path, "a memo filed under another signature than its first member's");
      m.span = r.u64();
      m.busy.resize(count(r, path, "processors"));
      for (auto& b : m.busy) {
        b.resident_ps = r.u64();
        b.compute_ps = r.u64();
      }
      m.counters.resize(count(r, path, "counters"));
      for (auto& c : m.counters) {
        c.key = r.blob();
        c.unit = r.blob();
        c.value = r.f64();
        c.simulated = r.u8() != 0;
      }
      out.library[sig].push_back(std::move(m));
    }
  } catch (const std::out_of_range& e) {
    corrupt(path, std::string("it ends early: ") + e.what());
  }
  if (!r.done()) corrupt(path, "bytes after the last memo");
  return out;
}

}  // namespace indexsim::sim
