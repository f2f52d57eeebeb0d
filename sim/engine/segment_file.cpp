// SPDX-License-Identifier: Apache-2.0
#include "sim/engine/segment_file.hpp"

#include <cstring>
#include <fstream>
#include <stdexcept>
#include <type_traits>

#include "models/common/output_file.hpp"
#include "sim/core/version.hpp"

namespace indexsim::sim {

namespace {
constexpr char kMagic[8] = {'I', 'S', 'S', 'E', 'G', 'S', '0', '1'};
// No count in a file this program writes comes near these: a larger one is a corrupt file, refused
// before it allocates.
constexpr uint64_t kMaxCount = uint64_t(1) << 24;
constexpr uint64_t kMaxString = uint64_t(1) << 30;

class Writer {
 public:
  explicit Writer(std::ofstream& f) : f_(f) {}
  template <class T>
  void pod(const T& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    f_.write(reinterpret_cast<const char*>(&v), sizeof v);
  }
  void str(const std::string& s) {
    pod(uint64_t(s.size()));
    f_.write(s.data(), std::streamsize(s.size()));
  }

 private:
  std::ofstream& f_;
};

class Reader {
 public:
  Reader(std::ifstream& f, const std::string& path) : f_(f), path_(path) {}
  template <class T>
  T pod() {
    static_assert(std::is_trivially_copyable_v<T>);
    T v{};
    if (!f_.read(reinterpret_cast<char*>(&v), sizeof v)) cut();
    return v;
  }
  uint64_t count(const char* what) {
    const uint64_t n = pod<uint64_t>();
    if (n > kMaxCount) fail(std::string("a count of ") + what + " of " + std::to_string(n));
    return n;
  }
  std::string str() {
    const uint64_t n = pod<uint64_t>();
    if (n > kMaxString) fail("a string of " + std::to_string(n) + " bytes");
    std::string s(n, '\0');
    if (n > 0 && !f_.read(s.data(), std::streamsize(n))) cut();
    return s;
  }
  [[noreturn]] void fail(const std::string& what) const {
    throw std::invalid_argument("segment file " + path_ + ": corrupt (" + what + ")");
  }
  [[noreturn]] void cut() const { fail("it ends early"); }

 private:
  std::ifstream& f_;
  const std::string& path_;
};
}  // namespace

void save_segments(const SegmentLibrary& lib, const std::string& run_key, const std::string& path) {
  const std::string tmp = temporary_for(path, "segment file");
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) throw std::runtime_error("cannot write segment file " + path + " (cannot open " + tmp + ")");
    Writer w(f);
    f.write(kMagic, sizeof kMagic);
    w.str(code_version());
    w.str(run_key);
    uint64_t memos = 0;
    for (const auto& [sig, list] : lib) memos += list.size();
    w.pod(memos);
    for (const auto& [sig, list] : lib) {
      for (const SegmentMemo& m : list) {
        w.str(sig);
        w.pod(uint64_t(m.members.size()));
        for (const SegmentMember& s : m.members) {
          w.str(s.signature);
          w.pod(s.gather.row_lines);
          w.pod(s.gather.distinct_lines);
          for (uint64_t v : {s.ready, s.duration, s.bytes_read, s.bytes_written, s.requests, s.ctas_simulated}) w.pod(v);
        }
        w.pod(m.span);
        w.pod(uint64_t(m.busy.size()));
        for (const auto& b : m.busy) {
          w.pod(b.resident_ps);
          w.pod(b.compute_ps);
        }
        w.pod(uint64_t(m.counters.size()));
        for (const auto& c : m.counters) {
          w.str(c.key);
          w.str(c.unit);
          w.pod(c.value);
          w.pod(uint8_t(c.simulated));
        }
      }
    }
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
  Reader r(f, path);
  char magic[sizeof kMagic];
  if (!f.read(magic, sizeof magic) || std::memcmp(magic, kMagic, sizeof kMagic) != 0)
    throw std::invalid_argument("segment file " + path + ": not a segment file (no ISSEGS01 header)");
  SegmentFile out;
  out.code_version = r.str();
  if (!expect_version.empty() && out.code_version != expect_version)
    throw std::invalid_argument("segment file " + path + ": stored by code version " + out.code_version + ", this is " +
                             expect_version + " (its memos carry the other version's figures; run its run again)");
  out.run_key = r.str();
  const uint64_t memos = r.count("memos");
  for (uint64_t i = 0; i < memos; ++i) {
    const std::string sig = r.str();
    SegmentMemo m;
    m.members.resize(r.count("members"));
    if (m.members.empty()) r.fail("a memo without members");
    for (SegmentMember& s : m.members) {
      s.signature = r.str();
      s.gather.row_lines = r.pod<double>();
      s.gather.distinct_lines = r.pod<double>();
      for (uint64_t* v : {&s.ready, &s.duration, &s.bytes_read, &s.bytes_written, &s.requests, &s.ctas_simulated})
        *v = r.pod<uint64_t>();
    }
    if (m.members[0].signature != sig) r.fail("a memo filed under another signature than its first member's");
    m.span = r.pod<uint64_t>();
    m.busy.resize(r.count("processors"));
    for (auto& b : m.busy) {
      b.resident_ps = r.pod<uint64_t>();
      b.compute_ps = r.pod<uint64_t>();
    }
    m.counters.resize(r.count("counters"));
    for (auto& c : m.counters) {
      c.key = r.str();
      c.unit = r.str();
      c.value = r.pod<double>();
      c.simulated = r.pod<uint8_t>() != 0;
    }
    out.library[sig].push_back(std::move(m));
  }
  if (f.peek() != std::char_traits<char>::eof()) r.fail("bytes after the last memo");
  return out;
}

}  // namespace indexsim::sim
