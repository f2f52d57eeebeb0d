// SPDX-License-Identifier: Apache-2.0
// Writing and streaming-reading .itr trace files (layout in traces/FORMAT.md).
//
// The reader holds one block in memory at a time, whatever the file size, checks each block's
// CRC32, and throws TraceError naming the byte offset and the reason at the first defect.
#pragma once

#include <cstdint>
#include <fstream>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "traces/records.hpp"

namespace indexsim::trace {

class TraceError : public std::runtime_error {
 public:
  TraceError(const std::string& file, uint64_t offset, const std::string& reason);
  // A defect inside block `block` (0-based, counting from the first block after the header).
  TraceError(const std::string& file, uint64_t offset, uint64_t block, const std::string& reason);
  const std::string file;
  const uint64_t offset;
  const std::string reason;
  const int64_t block = -1;  // -1: the defect is in the header
};

using Record = std::variant<TensorRecord, KernelRecord, CtaRecord, AccessRecord>;

class Writer {
 public:
  // `metadata` must hold at least `source` ("captured" or "emulated"); the writer adds
  // `format_version` and `code_version` if absent. Writes to path + ".tmp" and renames on close(),
  // so a failed run never leaves a half-written trace under the final name.
  Writer(const std::string& path, nlohmann::json metadata);
  ~Writer();  // an unclosed writer discards its temporary file
  void write(const Record& r);
  void close();
  uint64_t blocks_written() const { return blocks_; }

 private:
  std::string path_, tmp_path_;
  std::ofstream out_;
  uint64_t blocks_ = 0;
  bool closed_ = false;
};

// The 64-bit FNV-1a hash of the file's bytes, as 16 hex digits: what a run from a trace file is keyed
// by, so that an overwritten trace is a new run. Opens the file as Reader does (same errors).
std::string content_hash(const std::string& path);

class Reader {
 public:
  explicit Reader(const std::string& path);  // reads and checks the header
  const nlohmann::json& metadata() const { return metadata_; }
  uint32_t version() const { return version_; }
  // The next record, or nullopt at a clean end of file. Throws TraceError on any defect.
  std::optional<Record> next();
  uint64_t offset() const { return offset_; }  // byte offset of the next block
  uint64_t block_index() const { return block_index_; }
  const std::string& path() const { return path_; }
  // The largest block payload held so far: what the reader's memory is bounded by.
  uint64_t max_block_bytes() const { return max_block_bytes_; }

 private:
  [[noreturn]] void fail(uint64_t offset, const std::string& reason) const;
  std::string path_;
  std::ifstream in_;
  std::vector<uint8_t> buf_;  // the current block's payload, reused
  uint64_t max_block_bytes_ = 0;
  nlohmann::json metadata_;
  uint32_t version_ = 0;
  uint64_t offset_ = 0;
  uint64_t block_index_ = 0;
  uint64_t file_size_ = 0;
};

}  // namespace indexsim::trace
