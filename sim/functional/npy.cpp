// SPDX-License-Identifier: Apache-2.0
#include "sim/functional/npy.hpp"

#include <cstring>
#include <fstream>
#include <stdexcept>

#include "kernels/cpu/numeric.hpp"

namespace indexsim::sim::functional {

namespace {

[[noreturn]] void fail(const std::string& path, const std::string& why) {
  throw std::runtime_error(path + ": not a readable .npy file: " + why);
}

// The value of 'key': ... in NumPy's header dict, up to the next top-level comma or brace.
std::string header_field(const std::string& header, const std::string& key, const std::string& path) {
  const size_t k = header.find("'" + key + "'");
  if (k == std::string::npos) fail(path, "header has no '" + key + "'");
  size_t v = header.find(':', k);
  if (v == std::string::npos) fail(path, "malformed header");
  ++v;
  while (v < header.size() && header[v] == ' ') ++v;
  size_t e = v;
  int depth = 0;
  for (; e < header.size(); ++e) {
    const char c = header[e];
    if (c == '(') ++depth;
    if (c == ')') --depth;
    if (depth == 0 && (c == ',' || c == '}')) break;
  }
  return header.substr(v, e - v);
}

}  // namespace

int64_t NpyArray::size() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

NpyArray read_npy(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(path, "cannot open");
  char magic[8];
  if (!in.read(magic, 8) || std::memcmp(magic, "\x93NUMPY", 6) != 0) fail(path, "bad magic");
  const int major = static_cast<unsigned char>(magic[6]);
  uint32_t header_len = 0;
  if (major == 1) {
    unsigned char b[2];
    if (!in.read(reinterpret_cast<char*>(b), 2)) fail(path, "truncated header");
    header_len = b[0] | (b[1] << 8);
  } else if (major == 2 || major == 3) {
    unsigned char b[4];
    if (!in.read(reinterpret_cast<char*>(b), 4)) fail(path, "truncated header");
    header_len = b[0] | (b[1] << 8) | (b[2] << 16) | (uint32_t(b[3]) << 24);
  } else {
    fail(path, "unsupported version " + std::to_string(major));
  }
  std::string header(header_len, '\0');
  if (!in.read(header.data(), header_len)) fail(path, "truncated header");

  const std::string descr = header_field(header, "descr", path);
  if (header_field(header, "fortran_order", path) != "False") fail(path, "Fortran order is not supported");
  NpyArray a;
  const std::string shape = header_field(header, "shape", path);
  for (size_t i = 0; i < shape.size();) {
    if (shape[i] >= '0' && shape[i] <= '9') {
      size_t used = 0;
      a.shape.push_back(std::stoll(shape.substr(i), &used));
      i += used;
    } else {
      ++i;
    }
  }
  const int64_t n = a.size();
  if (descr == "'<f2'") {
    std::vector<uint16_t> raw(static_cast<size_t>(n));
    // The fixture is little-endian, as every machine this project builds on.
    if (!in.read(reinterpret_cast<char*>(raw.data()), n * 2)) fail(path, "truncated data");
    a.f32.resize(size_t(n));
    for (int64_t i = 0; i < n; ++i) a.f32[size_t(i)] = kernels::num::fp16_to_float(raw[size_t(i)]);
  } else if (descr == "'<f4'") {
    a.f32.resize(size_t(n));
    if (!in.read(reinterpret_cast<char*>(a.f32.data()), n * 4)) fail(path, "truncated data");
  } else if (descr == "'<i4'") {
    a.i32.resize(size_t(n));
    if (!in.read(reinterpret_cast<char*>(a.i32.data()), n * 4)) fail(path, "truncated data");
  } else {
    fail(path, "dtype " + descr + " is not <f2, <f4 or <i4");
  }
  return a;
}

}  // namespace indexsim::sim::functional
