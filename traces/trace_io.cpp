// SPDX-License-Identifier: Apache-2.0
#include "traces/trace_io.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "models/common/output_file.hpp"
#include "traces/codec.hpp"

#ifdef INDEXSIM_TRACE_VERSION_HEADER
#include "indexsim_version.h"  // the main build's, regenerated at every build
#define INDEXSIM_TRACE_CODE_VERSION INDEXSIM_CODE_VERSION
#endif
#ifndef INDEXSIM_TRACE_CODE_VERSION
#define INDEXSIM_TRACE_CODE_VERSION "unknown"
#endif

namespace indexsim::trace {

namespace {
std::string where(const std::string& file, uint64_t offset, int64_t block) {
  std::string s = file + ": ";
  if (block >= 0) s += "block " + std::to_string(block) + " ";
  return s + "at byte offset " + std::to_string(offset);
}

void put_u32(std::string& s, uint32_t v) {
  for (int i = 0; i < 4; ++i) s.push_back(static_cast<char>(v >> (8 * i)));
}
uint32_t get_u32(const uint8_t* p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}

constexpr size_t kBlockHeaderBytes = 9;  // u8 type, u32 length, u32 crc
// A JSON metadata blob beyond this is certainly a corrupt length field, not a real header.
constexpr uint32_t kMaxMetadataBytes = 64u << 20;
}  // namespace

TraceError::TraceError(const std::string& f, uint64_t off, const std::string& r)
    : std::runtime_error(where(f, off, -1) + ": " + r), file(f), offset(off), reason(r) {}

TraceError::TraceError(const std::string& f, uint64_t off, uint64_t blk, const std::string& r)
    : std::runtime_error(where(f, off, static_cast<int64_t>(blk)) + ": " + r), file(f), offset(off), reason(r),
      block(static_cast<int64_t>(blk)) {}

// ---------------------------------------------------------------------------------------------
Writer::Writer(const std::string& path, nlohmann::json metadata) : path_(path), tmp_path_(path + ".tmp") {
  if (!metadata.is_object() || !metadata.contains("source") ||
      (metadata["source"] != "captured" && metadata["source"] != "emulated"))
    throw TraceError(path, 0, "metadata must be an object with source = \"captured\" or \"emulated\"");
  if (!metadata.contains("format_version")) metadata["format_version"] = kFormatVersion;
  if (!metadata.contains("code_version")) metadata["code_version"] = INDEXSIM_TRACE_CODE_VERSION;
  try {
    temporary_for(path, "trace");  // refuses a final path that is a device or a FIFO
  } catch (const std::runtime_error& e) {
    throw TraceError(path, 0, "exists and is not a regular file");
  }
  out_.open(tmp_path_, std::ios::binary | std::ios::trunc);
  if (!out_) throw TraceError(path, 0, "cannot open " + tmp_path_ + " for writing");
  const std::string json = metadata.dump();
  std::string header(kMagic, sizeof kMagic);
  put_u32(header, kFormatVersion);
  put_u32(header, static_cast<uint32_t>(json.size()));
  header += json;
  put_u32(header, crc32_of(reinterpret_cast<const uint8_t*>(header.data()), header.size()));
  out_.write(header.data(), static_cast<std::streamsize>(header.size()));
}

Writer::~Writer() {
  if (!closed_) {
    out_.close();
    std::remove(tmp_path_.c_str());
  }
}

void Writer::write(const Record& r) {
  if (closed_) throw TraceError(path_, 0, "write after close");
  PayloadWriter w;
  encode(r, w);
  const auto& p = w.bytes();
  if (p.size() > UINT32_MAX) throw TraceError(path_, 0, blocks_, "record too large for one block");
  std::string head;
  head.push_back(static_cast<char>(block_type_of(r)));
  put_u32(head, static_cast<uint32_t>(p.size()));
  put_u32(head, crc32_of(p.data(), p.size()));
  out_.write(head.data(), static_cast<std::streamsize>(head.size()));
  out_.write(reinterpret_cast<const char*>(p.data()), static_cast<std::streamsize>(p.size()));
  ++blocks_;
}

void Writer::close() {
  if (closed_) return;
  out_.flush();
  const bool ok = static_cast<bool>(out_);
  out_.close();
  if (!ok || std::rename(tmp_path_.c_str(), path_.c_str()) != 0) {
    std::remove(tmp_path_.c_str());
    closed_ = true;
    throw TraceError(path_, 0, "writing or renaming " + tmp_path_ + " failed");
  }
  closed_ = true;
}

std::string content_hash(const std::string& path) {
  Reader header(path);  // a missing, non-regular or foreign file fails as reading it would
  std::ifstream in(path, std::ios::binary);
  std::vector<char> buf(1 << 20);
  uint64_t h = 1469598103934665603ull;  // FNV-1a 64 offset basis and prime
  while (in) {
    in.read(buf.data(), std::streamsize(buf.size()));
    const std::streamsize n = in.gcount();
    for (std::streamsize i = 0; i < n; ++i) {
      h ^= static_cast<unsigned char>(buf[size_t(i)]);
      h *= 1099511628211ull;
    }
  }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  return hex;
}

// ---------------------------------------------------------------------------------------------
void Reader::fail(uint64_t offset, const std::string& reason) const {
  throw TraceError(path_, offset, block_index_, reason);
}

Reader::Reader(const std::string& path) : path_(path) {
  // A directory opens as a stream on Linux and a FIFO has no size: say what it is, not "wrong magic".
  std::error_code ec;
  const auto st = std::filesystem::status(path, ec);
  if (!ec && std::filesystem::exists(st) && !std::filesystem::is_regular_file(st))
    throw TraceError(path, 0, std::filesystem::is_directory(st) ? "is a directory, not a trace file"
                                                                 : "is not a regular file (a pipe or device); give a trace file");
  in_.open(path, std::ios::binary);
  if (!in_) throw TraceError(path, 0, "cannot open file");
  in_.seekg(0, std::ios::end);
  file_size_ = static_cast<uint64_t>(in_.tellg());
  in_.seekg(0, std::ios::beg);

  uint8_t fixed[16] = {};
  in_.read(reinterpret_cast<char*>(fixed), static_cast<std::streamsize>(std::min<uint64_t>(file_size_, sizeof fixed)));
  in_.clear();
  if (file_size_ >= sizeof kMagic && std::memcmp(fixed, kMagic, sizeof kMagic) != 0)
    throw TraceError(path, 0, "wrong magic: not an IndexSim trace (expected \"IDXTRACE\")");
  if (file_size_ < sizeof fixed + 4)
    throw TraceError(path, file_size_, "truncated header: file has " + std::to_string(file_size_) +
                                           " bytes, a header needs at least 20");
  version_ = get_u32(fixed + 8);
  if (version_ > kFormatVersion)
    throw TraceError(path, 8, "trace format version " + std::to_string(version_) +
                                  " is newer than this reader's version " + std::to_string(kFormatVersion) +
                                  ": update IndexSim to read it");
  if (version_ == 0) throw TraceError(path, 8, "trace format version 0 is not valid");
  const uint32_t json_len = get_u32(fixed + 12);
  if (json_len > kMaxMetadataBytes || uint64_t(sizeof fixed) + json_len + 4 > file_size_)
    throw TraceError(path, 12, "truncated header: metadata length " + std::to_string(json_len) +
                                   " runs past the end of the " + std::to_string(file_size_) + "-byte file");
  std::vector<uint8_t> header(sizeof fixed + json_len);
  std::memcpy(header.data(), fixed, sizeof fixed);
  in_.read(reinterpret_cast<char*>(header.data() + sizeof fixed), json_len);
  uint8_t crc_bytes[4];
  in_.read(reinterpret_cast<char*>(crc_bytes), 4);
  if (!in_) throw TraceError(path, sizeof fixed, "truncated header: read failed");
  const uint32_t want = get_u32(crc_bytes), got = crc32_of(header.data(), header.size());
  if (want != got) {
    char msg[96];
    std::snprintf(msg, sizeof msg, "header CRC mismatch (stored %08x, computed %08x)", want, got);
    throw TraceError(path, header.size(), msg);
  }
  try {
    metadata_ = nlohmann::json::parse(header.begin() + sizeof fixed, header.end());
  } catch (const nlohmann::json::exception& e) {
    throw TraceError(path, sizeof fixed, std::string("metadata is not valid JSON: ") + e.what());
  }
  if (!metadata_.is_object() || !metadata_.contains("source"))
    throw TraceError(path, sizeof fixed, "metadata has no `source` field");
  offset_ = header.size() + 4;
}

std::optional<Record> Reader::next() {
  if (offset_ == file_size_) return std::nullopt;
  const uint64_t start = offset_;
  if (file_size_ - offset_ < kBlockHeaderBytes)
    fail(start, "truncated block header: " + std::to_string(file_size_ - offset_) + " bytes left, 9 needed");
  uint8_t head[kBlockHeaderBytes];
  in_.read(reinterpret_cast<char*>(head), kBlockHeaderBytes);
  if (!in_) fail(start, "read failed");
  const uint8_t type = head[0];
  const uint32_t len = get_u32(head + 1), want = get_u32(head + 5);
  if (type < static_cast<uint8_t>(BlockType::tensor) || type > static_cast<uint8_t>(BlockType::access))
    fail(start, "unknown block type " + std::to_string(type));
  if (uint64_t(len) > file_size_ - offset_ - kBlockHeaderBytes)
    fail(start, "truncated block: payload of " + std::to_string(len) + " bytes, only " +
                    std::to_string(file_size_ - offset_ - kBlockHeaderBytes) + " left in the file");
  buf_.resize(len);
  if (len > max_block_bytes_) max_block_bytes_ = len;
  in_.read(reinterpret_cast<char*>(buf_.data()), len);
  if (!in_) fail(start, "read failed");
  const uint32_t got = crc32_of(buf_.data(), len);
  if (got != want) {
    char msg[96];
    std::snprintf(msg, sizeof msg, "payload CRC mismatch (stored %08x, computed %08x)", want, got);
    fail(start, msg);
  }
  PayloadReader pr(buf_.data(), len);
  Record rec;
  try {
    rec = decode(static_cast<BlockType>(type), pr);
  } catch (const std::exception& e) {
    fail(start, std::string("malformed payload: ") + e.what());
  }
  if (!pr.done()) fail(start, std::to_string(pr.remaining()) + " unread bytes at the end of the payload");
  offset_ += kBlockHeaderBytes + len;
  ++block_index_;
  return rec;
}

}  // namespace indexsim::trace
