// SPDX-License-Identifier: Apache-2.0
#include "traces/codec.hpp"

#include <cmath>
#include <cstring>
#include <stdexcept>
#include <type_traits>

#include <zlib.h>

#include "models/common/utf8.hpp"

namespace indexsim::trace {

void PayloadWriter::f64(double v) {
  uint64_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  u64(bits);
}

void PayloadWriter::str(const std::string& s) {
  u32(static_cast<uint32_t>(s.size()));
  buf_.insert(buf_.end(), s.begin(), s.end());
}

void PayloadWriter::blob(const std::string& s) {
  u64(s.size());
  buf_.insert(buf_.end(), s.begin(), s.end());
}

void PayloadWriter::varint(uint64_t v) {
  while (v >= 0x80) {
    buf_.push_back(static_cast<uint8_t>(v | 0x80));
    v >>= 7;
  }
  buf_.push_back(static_cast<uint8_t>(v));
}

uint64_t PayloadReader::get(int n) {
  if (remaining() < static_cast<size_t>(n))
    throw std::out_of_range("payload ends inside a field (" + std::to_string(n) + " bytes needed at payload byte " +
                            std::to_string(pos_) + " of " + std::to_string(n_) + ")");
  uint64_t v = 0;
  for (int i = 0; i < n; ++i) v |= uint64_t(p_[pos_ + i]) << (8 * i);
  pos_ += n;
  return v;
}

uint8_t PayloadReader::u8() { return static_cast<uint8_t>(get(1)); }

double PayloadReader::f64() {
  const uint64_t bits = get(8);
  double v;
  std::memcpy(&v, &bits, sizeof v);
  return v;
}

std::string PayloadReader::str() {
  const uint32_t len = u32();
  if (remaining() < len)
    throw std::out_of_range("string of " + std::to_string(len) + " bytes runs past the payload end");
  std::string s(reinterpret_cast<const char*>(p_ + pos_), len);
  if (!valid_utf8(s)) throw std::invalid_argument("a string of " + std::to_string(len) + " bytes is not valid UTF-8");
  pos_ += len;
  return s;
}

std::string PayloadReader::blob() {
  const uint64_t len = u64();
  if (remaining() < len)
    throw std::out_of_range("a string of " + std::to_string(len) + " bytes runs past the end");
  std::string s(reinterpret_cast<const char*>(p_ + pos_), size_t(len));
  pos_ += size_t(len);
  return s;
}

uint64_t PayloadReader::varint() {
  uint64_t v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    const uint8_t b = u8();
    v |= uint64_t(b & 0x7f) << shift;
    if (!(b & 0x80)) return v;
  }
  throw std::invalid_argument("varint longer than 10 bytes");
}

uint32_t crc32_of(const uint8_t* p, size_t n) {
  uLong c = crc32(0L, Z_NULL, 0);
  // zlib takes uInt lengths: feed large buffers in pieces.
  while (n > 0) {
    const uInt chunk = static_cast<uInt>(n > (1u << 30) ? (1u << 30) : n);
    c = crc32(c, p, chunk);
    p += chunk;
    n -= chunk;
  }
  return static_cast<uint32_t>(c);
}

BlockType block_type_of(const Record& r) {
  switch (r.index()) {
    case 0: return BlockType::tensor;
    case 1: return BlockType::kernel;
    case 2: return BlockType::cta;
    default: return BlockType::access;
  }
}

namespace {
// Gather rows are mostly ascending and clustered: zig-zag varints of the deltas take 1–3 bytes a row
// instead of 4, which keeps a million-token decode trace small.
uint64_t zigzag(int64_t v) { return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63); }
int64_t unzigzag(uint64_t v) { return static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1); }

void encode_one(const TensorRecord& t, PayloadWriter& w) {
  w.u32(t.id);
  w.str(t.name);
  w.u8(static_cast<uint8_t>(t.cls));
  w.i32(t.layer);
  w.u64(t.bytes);
}

void encode_one(const KernelRecord& k, PayloadWriter& w) {
  w.u32(k.id);
  w.str(k.name);
  w.str(to_string(k.kind));
  w.i32(k.layer);
  w.u32(k.stream);
  for (uint32_t g : k.grid) w.u32(g);
  for (uint32_t b : k.block) w.u32(b);
  w.u32(k.smem_bytes);
  w.u32(k.regs_per_thread);
  w.u8(static_cast<uint8_t>(kPrecisionCount));
  for (double f : k.flops) w.f64(f);
  w.u8(k.double_buffered ? 1 : 0);
  w.u64(k.measured_ns);
  w.u32(static_cast<uint32_t>(k.deps.size()));
  for (uint32_t d : k.deps) w.u32(d);
  w.u64(k.wait_ns);
  w.u8(k.simt_overlaps_mma ? 1 : 0);
  w.u8(k.stores_after_math ? 1 : 0);
  w.u32(k.load_steps);
  w.f64(k.warp_instructions);
  w.u8(k.persistent ? 1 : 0);
}

void encode_one(const CtaRecord& c, PayloadWriter& w) {
  w.u32(c.kernel);
  w.u32(c.cta);
  w.u32(c.sm);
  w.u64(c.start_ns);
  w.u64(c.end_ns);
}

void encode_one(const AccessRecord& a, PayloadWriter& w) {
  w.u32(a.kernel);
  w.u32(a.cta_first);
  w.u32(a.cta_count);
  w.u8(static_cast<uint8_t>(a.kind));
  w.u8(a.write ? 1 : 0);
  w.u32(a.tensor);
  w.u64(a.base);
  w.i64(a.cta_stride_bytes);
  if (a.kind == AccessRecord::Kind::strided) {
    w.u32(a.elem_bytes);
    w.u64(a.count);
    w.i64(a.stride_bytes);
  } else {
    w.u32(a.row_bytes);
    w.u64(a.row_pitch_bytes);
    w.u32(static_cast<uint32_t>(a.rows.size()));
    int64_t prev = 0;
    for (uint32_t r : a.rows) {
      w.varint(zigzag(static_cast<int64_t>(r) - prev));
      prev = r;
    }
  }
}
}  // namespace

void encode(const Record& r, PayloadWriter& w) {
  std::visit([&](const auto& rec) { encode_one(rec, w); }, r);
}

Record decode(BlockType type, PayloadReader& r) {
  switch (type) {
    case BlockType::tensor: {
      TensorRecord t;
      t.id = r.u32();
      t.name = r.str();
      const uint8_t cls = r.u8();
      if (cls >= kTensorClassCount)
        throw std::invalid_argument("unknown tensor class " + std::to_string(cls));
      t.cls = static_cast<TensorClass>(cls);
      t.layer = r.i32();
      t.bytes = r.u64();
      return t;
    }
    case BlockType::kernel: {
      KernelRecord k;
      k.id = r.u32();
      k.name = r.str();
      k.kind = kernel_kind(r.str());
      k.layer = r.i32();
      k.stream = r.u32();
      for (auto& g : k.grid) g = r.u32();
      for (auto& b : k.block) b = r.u32();
      // A launch has at least one CTA of one thread, and CTA ids are u32 (CTA and access records):
      // a grid of more than 2^32 CTAs cannot be described, and a replay would warm through it for ever.
      for (int i = 0; i < 3; ++i)
        if (k.grid[i] == 0 || k.block[i] == 0)
          throw std::invalid_argument("kernel " + k.name + ": grid and block dimensions must be at least 1");
      if (k.cta_count() > (uint64_t(1) << 32) || uint64_t(k.grid[0]) * k.grid[1] > (uint64_t(1) << 32))
        throw std::invalid_argument("kernel " + k.name + ": a grid of more than 2^32 CTAs (CTA ids are u32)");
      if (uint64_t(k.block[0]) * k.block[1] * k.block[2] > (uint64_t(1) << 16))
        throw std::invalid_argument("kernel " + k.name + ": more than 65536 threads per CTA");
      k.smem_bytes = r.u32();
      k.regs_per_thread = r.u32();
      const uint8_t np = r.u8();
      // A newer writer may count more precisions; keep the ones this reader knows.
      for (int i = 0; i < np; ++i) {
        const double f = r.f64();
        if (!(f >= 0) || !std::isfinite(f))
          throw std::invalid_argument("kernel " + k.name + ": FLOPs must be finite and non-negative");
        if (i < kPrecisionCount) k.flops[i] = f;
      }
      k.double_buffered = r.u8() != 0;
      k.measured_ns = r.u64();
      const uint32_t nd = r.u32();
      if (uint64_t(nd) * 4 > r.remaining())
        throw std::out_of_range("dependency count " + std::to_string(nd) + " runs past the payload end");
      k.deps.resize(nd);
      for (auto& d : k.deps) d = r.u32();
      // Format version 2 appends wait_ns; a version-1 kernel block ends after its deps.
      if (r.remaining() >= 8) k.wait_ns = r.u64();
      // Version 3 appends simt_overlaps_mma.
      if (r.remaining() >= 1) k.simt_overlaps_mma = r.u8() != 0;
      // Version 4 appends stores_after_math and load_steps.
      if (r.remaining() >= 1) k.stores_after_math = r.u8() != 0;
      if (r.remaining() >= 4) k.load_steps = r.u32();
      // Version 5 appends warp_instructions.
      if (r.remaining() >= 8) {
        k.warp_instructions = r.f64();
        if (!(k.warp_instructions >= 0) || !std::isfinite(k.warp_instructions))
          throw std::invalid_argument("kernel " + k.name + ": warp_instructions must be finite and non-negative");
      }
      // Version 6 appends persistent.
      if (r.remaining() >= 1) k.persistent = r.u8() != 0;
      return k;
    }
    case BlockType::cta: {
      CtaRecord c;
      c.kernel = r.u32();
      c.cta = r.u32();
      c.sm = r.u32();
      c.start_ns = r.u64();
      c.end_ns = r.u64();
      return c;
    }
    case BlockType::access: {
      AccessRecord a;
      a.kernel = r.u32();
      a.cta_first = r.u32();
      a.cta_count = r.u32();
      const uint8_t kind = r.u8();
      if (kind > 1) throw std::invalid_argument("unknown access kind " + std::to_string(kind));
      a.kind = static_cast<AccessRecord::Kind>(kind);
      a.write = r.u8() != 0;
      a.tensor = r.u32();
      a.base = r.u64();
      a.cta_stride_bytes = r.i64();
      if (a.kind == AccessRecord::Kind::strided) {
        a.elem_bytes = r.u32();
        a.count = r.u64();
        a.stride_bytes = r.i64();
      } else {
        a.row_bytes = r.u32();
        a.row_pitch_bytes = r.u64();
        const uint32_t n = r.u32();
        if (n > r.remaining())  // every row takes at least one byte
          throw std::out_of_range("row count " + std::to_string(n) + " runs past the payload end");
        a.rows.resize(n);
        int64_t prev = 0;
        for (auto& row : a.rows) {
          // prev stays in [0, 2^32) and a delta that leaves it is refused before the sum, so a
          // corrupt delta (up to +-2^63) never overflows a signed addition.
          const int64_t delta = unzigzag(r.varint());
          if (delta < -prev || delta > int64_t(UINT32_MAX) - prev) throw std::invalid_argument("gather row index out of range");
          prev += delta;
          row = static_cast<uint32_t>(prev);
        }
      }
      // A CTA that moves more than 2^40 bytes (1 TiB: more than any device holds) is a corrupt
      // count, and the request generator would run for ever; the product is checked before it wraps.
      {
        uint64_t per_cta = 0;
        const bool wraps = a.kind == AccessRecord::Kind::strided
                               ? __builtin_mul_overflow(a.count, uint64_t(a.elem_bytes), &per_cta)
                               : __builtin_mul_overflow(uint64_t(a.rows.size()), uint64_t(a.row_bytes), &per_cta);
        if (wraps || per_cta > (uint64_t(1) << 40))
          throw std::invalid_argument("access of kernel " + std::to_string(a.kernel) + ": more than 2^40 bytes per CTA");
      }
      return a;
    }
  }
  throw std::invalid_argument("unknown block type " + std::to_string(static_cast<int>(type)));
}

}  // namespace indexsim::trace
