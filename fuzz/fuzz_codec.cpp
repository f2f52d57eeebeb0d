// SPDX-License-Identifier: Apache-2.0
// A block payload through decode (first byte: the block type), and, where it decodes, a round
// trip: encode(decode(p)) must decode to a record that encodes to the same bytes.
#include <cstdint>
#include <cstdlib>
#include <stdexcept>

#include "traces/codec.hpp"

using namespace indexsim::trace;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const auto type = static_cast<BlockType>(1 + data[0] % 4);
  Record rec;
  try {
    PayloadReader r(data + 1, size - 1);
    rec = decode(type, r);
  } catch (const std::exception&) {
    return 0;  // a malformed payload is refused: that is the contract
  }
  PayloadWriter a;
  encode(rec, a);
  PayloadReader again(a.bytes().data(), a.bytes().size());
  Record back;
  try {
    back = decode(block_type_of(rec), again);
  } catch (const std::exception&) {
    std::abort();  // what the encoder wrote, the decoder must read
  }
  PayloadWriter b;
  encode(back, b);
  if (a.bytes() != b.bytes()) std::abort();
  return 0;
}
