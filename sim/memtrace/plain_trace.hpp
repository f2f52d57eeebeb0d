// SPDX-License-Identifier: Apache-2.0
// The plain-text memory traces of the established DRAM simulators, read and written line by line
// (constant memory whatever the file size). Each format as its own project reads it:
//
//   dramsim3             `0x1FF96FC0 READ 160`: hex address, operation, issue cycle (decimal) in the
//                        memory clock (DRAMsim3 src/common.cc operator>>(Transaction); its trace
//                        CPU ticks with the DRAM clock). Writes are WRITE, write, P_MEM_WR or BOFF;
//                        reads READ, read, P_MEM_RD or P_FETCH.
//   ramulator-loadstore  `LD 0x100000` / `ST 0x1102c0`: no time (Ramulator 2 LoadStoreTrace issues
//                        one line per front-end tick, as fast as the memory accepts). The address
//                        is hex with 0x, else decimal.
//   ramulator-readwrite  `R 0,1,0,2,3,4,5` / `W ...`: an address vector, one index per level of the
//                        DRAM organisation (Ramulator 2 ReadWriteTrace); no time. Seven levels as
//                        Ramulator 2.1's HBM3 (with the stack ID as rank), or six without it; see
//                        AddressVectorCodec.
//   dramsys              `31:\tread\t0x400140` / `56:\twrite\t0x7fff8000 0x1234...`: issue time in
//                        cycles of the trace player's clock, an optional `(bytes)` data length, the
//                        command, a hex address and optional write data (DRAMSys StlPlayer, absolute
//                        .stl traces).
//
// Blank lines and lines starting with '#' are skipped in every format (DRAMSys's own comment
// syntax), so a fixture can carry its source. Anything else that does not parse stops the read
// with a MemTraceError naming the file, the line number and the line's text.
#pragma once

#include <cstdint>
#include <fstream>
#include <istream>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/dram/address_map.hpp"

namespace indexsim::sim::memtrace {

enum class Format { DramSim3, RamulatorLoadStore, RamulatorReadWrite, DramSys };
Format parse_format(const std::string& s);  // std::invalid_argument naming the choices
const char* to_string(Format f);
std::vector<std::string> format_names();
bool has_timestamps(Format f);  // dramsim3 and dramsys carry an issue cycle

class MemTraceError : public std::runtime_error {
 public:
  MemTraceError(const std::string& file, uint64_t line, const std::string& text, const std::string& reason);
  const std::string file;
  const uint64_t line;
  const std::string text;
};

struct PlainRequest {
  uint64_t addr = 0;
  bool write = false;
  uint64_t cycle = 0;   // issue time in the format's clock; 0 where the format has none
  uint32_t bytes = 0;   // data length where the line gives one (dramsys `(N)`), else 0
};

// Ramulator 2's address vector for the configured DRAM: [channel, pseudochannel, bankgroup, bank,
// row, column], the level order of its HBM3 model (src/dram/impl/HBM3.cpp). `channel` counts the
// channels of every stack, `bankgroup` the groups of every SID (bg + bank_groups x sid), `column`
// is in bursts. For a DDR preset the second level is 0 (one sub-channel per channel).
class AddressVectorCodec {
 public:
  explicit AddressVectorCodec(const model::dram::DramParams& p);
  static constexpr size_t kLevels = 7;   // channel, pseudochannel, rank, bankgroup, bank, row, column
  std::vector<uint64_t> to_vector(uint64_t addr) const;
  // std::invalid_argument naming the level when an index is out of range.
  uint64_t to_addr(const std::vector<uint64_t>& v) const;

 private:
  model::dram::DramParams p_;
  model::dram::AddressMap map_;
};

class PlainTraceReader {
 public:
  // `codec` is needed for ramulator-readwrite only; it must outlive the reader.
  PlainTraceReader(const std::string& path, Format f, const AddressVectorCodec* codec = nullptr);
  // Reads from a stream the caller owns; `name` stands for the file in error messages.
  PlainTraceReader(std::istream& in, const std::string& name, Format f, const AddressVectorCodec* codec = nullptr);
  // The next request, false at the end of the input; MemTraceError on a malformed line.
  bool next(PlainRequest& out);
  uint64_t line() const { return line_; }
  const std::string& text() const { return text_; }  // the last line read
  const std::string& name() const { return name_; }

 private:
  [[noreturn]] void fail(const std::string& reason) const;
  void parse(PlainRequest& out);
  std::unique_ptr<std::ifstream> own_;
  std::istream* in_;
  std::string name_;
  Format f_;
  const AddressVectorCodec* codec_;
  std::string text_;
  std::vector<std::string> tok_;
  uint64_t line_ = 0;
};

class PlainTraceWriter {
 public:
  PlainTraceWriter(const std::string& path, Format f, const AddressVectorCodec* codec = nullptr);
  PlainTraceWriter(std::ostream& out, Format f, const AddressVectorCodec* codec = nullptr);
  void write(const PlainRequest& r);
  ~PlainTraceWriter();  // an unclosed writer discards its temporary file
  PlainTraceWriter(const PlainTraceWriter&) = delete;
  PlainTraceWriter& operator=(const PlainTraceWriter&) = delete;
  // Flushes and renames the temporary file to the path; throws std::runtime_error when the file
  // could not be written (nothing is left under the path then).
  void close();
  uint64_t written() const { return n_; }

 private:
  std::string tmp_;  // the file being written, renamed to path_ by close() (empty: a stream, or closed)
  std::unique_ptr<std::ofstream> own_;
  std::ostream* out_;
  std::string path_;
  Format f_;
  const AddressVectorCodec* codec_;
  uint64_t n_ = 0;
};

}  // namespace indexsim::sim::memtrace
