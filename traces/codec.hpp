// SPDX-License-Identifier: Apache-2.0
// Little-endian encoding of trace records into block payloads and back (layout in traces/FORMAT.md).
// Kept apart from the file handling so that the payload layout is in one place.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "traces/trace_io.hpp"

namespace indexsim::trace {

enum class BlockType : uint8_t { tensor = 1, kernel = 2, cta = 3, access = 4 };

constexpr char kMagic[8] = {'I', 'D', 'X', 'T', 'R', 'A', 'C', 'E'};

class PayloadWriter {
 public:
  void u8(uint8_t v) { buf_.push_back(v); }
  void u32(uint32_t v) { put(v, 4); }
  void u64(uint64_t v) { put(v, 8); }
  void i32(int32_t v) { put(static_cast<uint32_t>(v), 4); }
  void i64(int64_t v) { put(static_cast<uint64_t>(v), 8); }
  void f64(double v);
  void str(const std::string& s);
  // Raw bytes of any value, a u64 length first (not part of the trace format: segment signatures).
  void blob(const std::string& s);
  void varint(uint64_t v);
  const std::vector<uint8_t>& bytes() const { return buf_; }
  void clear() { buf_.clear(); }

 private:
  void put(uint64_t v, int n) {
    for (int i = 0; i < n; ++i) buf_.push_back(static_cast<uint8_t>(v >> (8 * i)));
  }
  std::vector<uint8_t> buf_;
};

// Reads a payload; any read past its end throws std::out_of_range with a description.
class PayloadReader {
 public:
  PayloadReader(const uint8_t* p, size_t n) : p_(p), n_(n) {}
  uint8_t u8();
  uint32_t u32() { return static_cast<uint32_t>(get(4)); }
  uint64_t u64() { return get(8); }
  int32_t i32() { return static_cast<int32_t>(static_cast<uint32_t>(get(4))); }
  int64_t i64() { return static_cast<int64_t>(get(8)); }
  double f64();
  std::string str();
  std::string blob();  // what PayloadWriter::blob wrote; std::out_of_range when it runs past the end
  uint64_t varint();
  bool done() const { return pos_ == n_; }
  size_t remaining() const { return n_ - pos_; }

 private:
  uint64_t get(int n);
  const uint8_t* p_;
  size_t n_;
  size_t pos_ = 0;
};

BlockType block_type_of(const Record& r);
void encode(const Record& r, PayloadWriter& w);
// Throws std::out_of_range / std::invalid_argument on a malformed payload.
Record decode(BlockType type, PayloadReader& r);

uint32_t crc32_of(const uint8_t* p, size_t n);

}  // namespace indexsim::trace
