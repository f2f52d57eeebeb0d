// SPDX-License-Identifier: Apache-2.0
#include "sim/memtrace/plain_trace.hpp"

#include <charconv>
#include <cstdio>

#include "models/common/output_file.hpp"

namespace indexsim::sim::memtrace {

namespace {

const char* kNames[] = {"dramsim3", "ramulator-loadstore", "ramulator-readwrite", "dramsys"};

// Whole-token parses: a trailing character that is not part of the number is an error.
bool parse_u64(const std::string& s, size_t from, int base, uint64_t& v) {
  if (from >= s.size()) return false;
  const char* end = s.data() + s.size();
  const auto r = std::from_chars(s.data() + from, end, v, base);
  return r.ec == std::errc() && r.ptr == end;
}

bool has_hex_prefix(const std::string& s) { return s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'); }

bool parse_hex(const std::string& s, uint64_t& v) { return parse_u64(s, has_hex_prefix(s) ? 2 : 0, 16, v); }

void split(const std::string& line, char sep, std::vector<std::string>& out) {
  out.clear();
  size_t i = 0;
  while (i <= line.size()) {
    const size_t j = line.find(sep, i);
    out.push_back(line.substr(i, j == std::string::npos ? std::string::npos : j - i));
    if (j == std::string::npos) break;
    i = j + 1;
  }
}

void split_ws(const std::string& line, std::vector<std::string>& out) {
  out.clear();
  size_t i = 0;
  while (true) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) ++i;
    if (i >= line.size()) return;
    size_t j = i;
    while (j < line.size() && line[j] != ' ' && line[j] != '\t' && line[j] != '\r') ++j;
    out.push_back(line.substr(i, j - i));
    i = j;
  }
}

}  // namespace

Format parse_format(const std::string& s) {
  for (int i = 0; i < 4; ++i)
    if (s == kNames[i]) return static_cast<Format>(i);
  throw std::invalid_argument("--format '" + s +
                              "': must be one of {dramsim3, ramulator-loadstore, ramulator-readwrite, dramsys}");
}

const char* to_string(Format f) { return kNames[static_cast<int>(f)]; }

std::vector<std::string> format_names() { return {kNames, kNames + 4}; }

bool has_timestamps(Format f) { return f == Format::DramSim3 || f == Format::DramSys; }

MemTraceError::MemTraceError(const std::string& f, uint64_t l, const std::string& t, const std::string& reason)
    : std::runtime_error(f + ":" + std::to_string(l) + ": " + reason + ": '" + t + "'"), file(f), line(l), text(t) {}

AddressVectorCodec::AddressVectorCodec(const model::dram::DramParams& p) : p_(p), map_(p) {}

std::vector<uint64_t> AddressVectorCodec::to_vector(uint64_t addr) const {
  const model::dram::DramAddress a = map_.decode(addr);
  const uint32_t pcs = p_.pseudo_channels_per_channel;
  return {a.pc / pcs, a.pc % pcs, a.group / p_.bank_groups, a.group % p_.bank_groups, a.bank % p_.banks_per_group,
          a.row, a.column};
}

uint64_t AddressVectorCodec::to_addr(const std::vector<uint64_t>& v) const {
  // Ramulator 2.1's HBM3: channel, pseudochannel, rank (the stack ID), bankgroup, bank, row,
  // column. The 6-level form of its earlier HBM2/HBM3 models has no rank: its bankgroup then
  // counts the groups of every SID.
  if (v.size() != kLevels && v.size() != kLevels - 1)
    throw std::invalid_argument("an address vector has " + std::to_string(kLevels) +
                                " levels (channel,pseudochannel,rank,bankgroup,bank,row,column) or 6 (without rank), not " +
                                std::to_string(v.size()));
  std::vector<uint64_t> w = v;
  if (v.size() == kLevels - 1) {   // fold the bankgroup index over the SIDs into rank and bankgroup
    if (w[2] >= p_.groups_per_pc())
      throw std::invalid_argument("bankgroup " + std::to_string(w[2]) + " is out of range (the device has " +
                                  std::to_string(p_.groups_per_pc()) + ")");
    w.insert(w.begin() + 2, w[2] / p_.bank_groups);
    w[3] %= p_.bank_groups;
  }
  static const char* level[] = {"channel", "pseudochannel", "rank", "bankgroup", "bank", "row", "column"};
  const uint64_t count[] = {uint64_t(p_.stacks) * p_.channels_per_stack, p_.pseudo_channels_per_channel,
                            p_.sids, p_.bank_groups, p_.banks_per_group, p_.rows, p_.columns};
  for (size_t i = 0; i < kLevels; ++i)
    if (w[i] >= count[i])
      throw std::invalid_argument(std::string(level[i]) + " " + std::to_string(w[i]) + " is out of range (the device has " +
                                  std::to_string(count[i]) + ")");
  model::dram::DramAddress a;
  a.pc = static_cast<uint32_t>(w[0] * p_.pseudo_channels_per_channel + w[1]);
  a.group = static_cast<uint32_t>(w[3] + uint64_t(p_.bank_groups) * w[2]);
  a.bank = static_cast<uint32_t>(w[4] + uint64_t(p_.banks_per_group) * a.group);
  a.row = static_cast<uint32_t>(w[5]);
  a.column = static_cast<uint32_t>(w[6]);
  return map_.encode(a);
}

PlainTraceReader::PlainTraceReader(const std::string& path, Format f, const AddressVectorCodec* codec)
    : own_(std::make_unique<std::ifstream>(path)), in_(own_.get()), name_(path), f_(f), codec_(codec) {
  if (!*own_) throw std::runtime_error("cannot open memory trace '" + path + "'");
  if (f == Format::RamulatorReadWrite && !codec)
    throw std::invalid_argument("ramulator-readwrite traces need the DRAM organisation to turn vectors into addresses");
}

PlainTraceReader::PlainTraceReader(std::istream& in, const std::string& name, Format f, const AddressVectorCodec* codec)
    : in_(&in), name_(name), f_(f), codec_(codec) {
  if (f == Format::RamulatorReadWrite && !codec)
    throw std::invalid_argument("ramulator-readwrite traces need the DRAM organisation to turn vectors into addresses");
}

void PlainTraceReader::fail(const std::string& reason) const { throw MemTraceError(name_, line_, text_, reason); }

bool PlainTraceReader::next(PlainRequest& out) {
  while (std::getline(*in_, text_)) {
    ++line_;
    if (!text_.empty() && text_.back() == '\r') text_.pop_back();
    size_t i = 0;
    while (i < text_.size() && (text_[i] == ' ' || text_[i] == '\t')) ++i;
    if (i == text_.size() || text_[i] == '#') continue;
    out = PlainRequest{};
    parse(out);
    return true;
  }
  if (in_->bad()) throw std::runtime_error("error reading memory trace '" + name_ + "' after line " + std::to_string(line_));
  return false;
}

void PlainTraceReader::parse(PlainRequest& out) {
  split_ws(text_, tok_);
  switch (f_) {
    case Format::DramSim3: {
      if (tok_.size() != 3) fail("expected `ADDRESS OPERATION CYCLE` (3 fields), found " + std::to_string(tok_.size()));
      if (!parse_hex(tok_[0], out.addr)) fail("address '" + tok_[0] + "' is not hexadecimal");
      const std::string& op = tok_[1];
      if (op == "WRITE" || op == "write" || op == "P_MEM_WR" || op == "BOFF") out.write = true;
      else if (op == "READ" || op == "read" || op == "P_MEM_RD" || op == "P_FETCH") out.write = false;
      else fail("operation '" + op + "' is not one of READ, WRITE, read, write, P_MEM_RD, P_MEM_WR, P_FETCH, BOFF");
      if (!parse_u64(tok_[2], 0, 10, out.cycle)) fail("cycle '" + tok_[2] + "' is not a decimal integer");
      return;
    }
    case Format::RamulatorLoadStore: {
      if (tok_.size() != 2) fail("expected `LD|ST ADDRESS` (2 fields), found " + std::to_string(tok_.size()));
      if (tok_[0] == "LD") out.write = false;
      else if (tok_[0] == "ST") out.write = true;
      else fail("operation '" + tok_[0] + "' is not LD or ST");
      const bool ok = has_hex_prefix(tok_[1]) ? parse_hex(tok_[1], out.addr) : parse_u64(tok_[1], 0, 10, out.addr);
      if (!ok) fail("address '" + tok_[1] + "' is neither 0x-hexadecimal nor decimal");
      return;
    }
    case Format::RamulatorReadWrite: {
      if (tok_.size() != 2) fail("expected `R|W ch,pc,ra,bg,ba,ro,co` (2 fields), found " + std::to_string(tok_.size()));
      if (tok_[0] == "R") out.write = false;
      else if (tok_[0] == "W") out.write = true;
      else fail("operation '" + tok_[0] + "' is not R or W");
      std::vector<std::string> parts;
      split(tok_[1], ',', parts);
      std::vector<uint64_t> v(parts.size());
      for (size_t i = 0; i < parts.size(); ++i)
        if (!parse_u64(parts[i], 0, 10, v[i])) fail("address-vector entry '" + parts[i] + "' is not a decimal integer");
      try {
        out.addr = codec_->to_addr(v);
      } catch (const std::invalid_argument& e) {
        fail(e.what());
      }
      return;
    }
    case Format::DramSys: {
      if (tok_.size() < 3) fail("expected `CYCLE: [(BYTES)] read|write ADDRESS [DATA]`");
      std::string ts = tok_[0];
      if (!ts.empty() && ts.back() == ':') ts.pop_back();
      if (!parse_u64(ts, 0, 10, out.cycle)) fail("time stamp '" + tok_[0] + "' is not a decimal cycle count");
      size_t k = 1;
      if (tok_[k][0] == '(') {
        std::string len = tok_[k].substr(1);
        if (!len.empty() && len.back() == ')') len.pop_back();
        uint64_t b = 0;
        if (!parse_u64(len, 0, 10, b) || b == 0 || b > UINT32_MAX) fail("data length '" + tok_[k] + "' is not (N) bytes");
        out.bytes = static_cast<uint32_t>(b);
        ++k;
      }
      if (k >= tok_.size()) fail("missing command");
      if (tok_[k] == "read") out.write = false;
      else if (tok_[k] == "write") out.write = true;
      else fail("command '" + tok_[k] + "' is not read or write");
      ++k;
      if (k >= tok_.size()) fail("missing address");
      if (!parse_hex(tok_[k], out.addr)) fail("address '" + tok_[k] + "' is not hexadecimal");
      ++k;
      if (k < tok_.size()) {  // write data; its bytes are not modelled, only its form is checked
        const std::string& d = tok_[k];
        const bool hex = has_hex_prefix(d) && d.find_first_not_of("0123456789abcdefABCDEF", 2) == std::string::npos;
        if (!out.write || !hex) fail("unexpected field '" + d + "' (only a write may carry 0x data)");
        ++k;
      }
      if (k < tok_.size()) fail("unexpected field '" + tok_[k] + "'");
      return;
    }
  }
}

PlainTraceWriter::PlainTraceWriter(const std::string& path, Format f, const AddressVectorCodec* codec)
    : tmp_(temporary_for(path, "memory trace")), own_(std::make_unique<std::ofstream>(tmp_)), out_(own_.get()),
      path_(path), f_(f), codec_(codec) {
  if (!*own_) throw std::runtime_error("cannot create '" + tmp_ + "' (for '" + path + "')");
  if (f == Format::RamulatorReadWrite && !codec)
    throw std::invalid_argument("ramulator-readwrite output needs the DRAM organisation (--hardware)");
}

PlainTraceWriter::PlainTraceWriter(std::ostream& out, Format f, const AddressVectorCodec* codec)
    : out_(&out), path_("<stream>"), f_(f), codec_(codec) {
  if (f == Format::RamulatorReadWrite && !codec)
    throw std::invalid_argument("ramulator-readwrite output needs the DRAM organisation (--hardware)");
}

void PlainTraceWriter::write(const PlainRequest& r) {
  char buf[160];
  int n = 0;
  const auto a = static_cast<unsigned long long>(r.addr);
  const auto c = static_cast<unsigned long long>(r.cycle);
  switch (f_) {
    case Format::DramSim3:
      n = std::snprintf(buf, sizeof buf, "0x%llX %s %llu\n", a, r.write ? "WRITE" : "READ", c);
      break;
    case Format::RamulatorLoadStore:
      n = std::snprintf(buf, sizeof buf, "%s 0x%llx\n", r.write ? "ST" : "LD", a);
      break;
    case Format::RamulatorReadWrite: {
      const auto v = codec_->to_vector(r.addr);
      n = std::snprintf(buf, sizeof buf, "%s %llu,%llu,%llu,%llu,%llu,%llu,%llu\n", r.write ? "W" : "R",
                        (unsigned long long)v[0], (unsigned long long)v[1], (unsigned long long)v[2],
                        (unsigned long long)v[3], (unsigned long long)v[4], (unsigned long long)v[5],
                        (unsigned long long)v[6]);
      break;
    }
    case Format::DramSys:
      n = std::snprintf(buf, sizeof buf, "%llu:\t%s\t0x%llx\n", c, r.write ? "write" : "read", a);
      break;
  }
  out_->write(buf, n);
  ++n_;
}

void PlainTraceWriter::close() {
  out_->flush();
  if (own_) own_->close();
  if (!*out_) {
    if (own_) std::remove(tmp_.c_str());
    throw std::runtime_error("error writing '" + path_ + "' (disk full?)");
  }
  if (own_) {
    commit_temporary(tmp_, path_, "memory trace");
    tmp_.clear();
  }
}

PlainTraceWriter::~PlainTraceWriter() {
  if (own_ && !tmp_.empty()) {  // never closed: a failed export leaves nothing under either name
    own_->close();
    std::remove(tmp_.c_str());
  }
}

}  // namespace indexsim::sim::memtrace
