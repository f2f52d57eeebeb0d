// SPDX-License-Identifier: Apache-2.0
// Physical address -> (pseudo-channel, bank, row, column). A mapping is a named order of fields from
// the least significant end, decoded in mixed radix so that non-power-of-two counts (5 or 6 stacks)
// need no holes in the address space.
//
//   row_bank_column_channel      MSB row | sid bank bg | column_hi | stack ch pc | column_lo  LSB
//   row_column_bank_channel      MSB row | column_hi | sid bank bg | stack ch pc | column_lo  LSB
//   row_bank_column_channel_xor  as row_bank_column_channel, with the pc, ch, bg and bank fields
//                                XORed with low row bits (permutation-based interleave), so rows that
//                                collide in one bank of one channel spread over banks and channels
//   row_bank_rank_column_channel MSB row | bank bg | sid pc | column_hi | stack ch | column_lo  LSB
//                                Ramulator 2's RoBaRaCoCh (src/addr_mapper/impl/linear_mappers.cpp):
//                                channel lowest, then column, then the level below the channel (the
//                                pseudo-channel of its HBM3 model, the rank of DDR), bank group, bank,
//                                row. With channel_interleave_bytes = one burst, column_lo is empty
//                                and the order is Ramulator 2's bit for bit.
//   row_rank_bankgroup_bank_channel_column
//                                MSB row | sid bg bank | column_hi | stack ch pc | column_lo  LSB
//                                DRAMsim3's rorabgbachco (bank below bank group); with
//                                channel_interleave_bytes = one row, column_hi is empty and the
//                                order is DRAMsim3's.
//
// channel_hash: rotate (any mapping whose channel digits sit right above column_lo, not the XOR
// one) adds a hash of the address above the channel digits to the pseudo-channel index, modulo the
// pseudo-channels. With a plain mixed-radix map, a stride that is a multiple of one interleave
// period (pseudo-channels x channel_interleave_bytes: 48 KiB on the H200, 64 KiB on the B200)
// lands every access on one pseudo-channel; GPUs hash addresses over their channels for this
// reason (partition camping). Still a bijection: inside one period the rotation is constant.
//
// bank_hash: rotate (any mapping but the XOR one, which hashes banks itself) adds a hash of the row
// to the bank index (bank group, bank and SID as one number), modulo the banks of a pseudo-channel.
// With a plain map, addresses a multiple of the bank field's period apart (on the H200, 16 x 192
// KiB = 3 MiB: the FP32 score rows of a 786,432-token context) differ only in the row and fall in
// the same bank of each pseudo-channel, so concurrent streams over them conflict in 2 of its 32
// banks. Memory controllers hash bank bits with row bits for this reason (Zhang, Zhu and Zhang,
// "A permutation-based page interleaving scheme to reduce row-buffer conflicts and exploit data
// locality", MICRO-33, 2000; reverse-engineered DRAM maps are XORs of row and bank bits: Pessl et
// al., "DRAMA", USENIX Security 2016); NVIDIA's function is not public [U]. A bijection: within one
// row the rotation is constant.
//
// column_lo spans channel_interleave_bytes: that many bytes stay in one row of one pseudo-channel
// before the next pseudo-channel takes over, so a stream spreads across every pseudo-channel.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "models/common/fast_div.hpp"
#include "models/dram/dram_params.hpp"

namespace indexsim::model::dram {

struct DramAddress {
  uint32_t pc = 0;        // global pseudo-channel index
  uint32_t bank = 0;      // bank within the pseudo-channel: bank + banks_per_group * (bg + bank_groups * sid)
  uint32_t group = 0;     // bank group within the pseudo-channel: bg + bank_groups * sid
  uint32_t row = 0;
  uint32_t column = 0;    // in bursts
};

class AddressMap {
 public:
  static std::vector<std::string> mapping_names();
  // Throws ConfigError (against `address_mapping`) when the mapping cannot use these counts.
  static void validate(const DramParams& p, const config::Node& n);

  explicit AddressMap(const DramParams& p);
  DramAddress decode(uint64_t addr) const;
  // The inverse of decode for an address inside the capacity: decode(encode(a)) == a.
  uint64_t encode(const DramAddress& a) const;
  uint32_t interleave_bytes() const { return interleave_bytes_; }

 private:
  enum Field : uint8_t { kColLo, kPc, kCh, kStack, kBg, kBank, kSid, kColHi, kFieldCount };
  struct Digit {
    Field field;
    uint32_t radix;
    bool pow2;
    uint32_t shift;
    uint64_t mask;
  };
  std::vector<Digit> digits_;
  bool xor_hash_ = false;
  bool rotate_ = false;        // channel_hash: rotate
  bool bank_rotate_ = false;   // bank_hash: rotate
  uint32_t bank_rotation(uint32_t row) const;
  uint32_t sids_ = 0;
  uint32_t bank_count_ = 0;    // banks of a pseudo-channel: bank groups x banks x SIDs
  uint32_t channels_ = 0;      // pseudo-channels of the device
  FastDiv period_{1};          // bursts of one interleave period (column_lo x pseudo-channels)
  uint32_t rotation(uint64_t upper) const;
  uint32_t burst_shift_ = 0;
  uint32_t interleave_bytes_ = 0;
  uint32_t col_lo_ = 0, pcs_ = 0, chs_ = 0, bgs_ = 0, banks_ = 0;
  void apply_xor(uint32_t* v, uint32_t row) const;
  uint32_t pc_bits_ = 0, ch_bits_ = 0, bg_bits_ = 0;
};

}  // namespace indexsim::model::dram
