// SPDX-License-Identifier: Apache-2.0
#include "models/dram/address_map.hpp"

#include <string>

#include "models/common/fast_div.hpp"
#include "models/common/port.hpp"

namespace indexsim::model::dram {

namespace {

bool is_pow2(uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }
uint32_t log2u(uint64_t v) {
  uint32_t s = 0;
  while ((uint64_t(1) << s) < v) ++s;
  return s;
}

}  // namespace

std::vector<std::string> AddressMap::mapping_names() {
  return {"row_bank_column_channel", "row_column_bank_channel", "row_bank_column_channel_xor",
          "row_bank_rank_column_channel", "row_rank_bankgroup_bank_channel_column"};
}

void AddressMap::validate(const DramParams& p, const config::Node& n) {
  if (p.channel_hash && (p.address_mapping == "row_bank_rank_column_channel" || p.address_mapping == "row_bank_column_channel_xor"))
    n.fail("channel_hash", "rotate",
           "needs a mapping whose channel digits lie right above column_lo and no XOR hash (not " + p.address_mapping + ")");
  if (p.bank_hash && p.address_mapping == "row_bank_column_channel_xor")
    n.fail("bank_hash", "rotate", "the XOR mapping hashes the banks already (not " + p.address_mapping + ")");
  if (p.address_mapping != "row_bank_column_channel_xor") return;
  const uint32_t counts[] = {p.pseudo_channels_per_channel, p.channels_per_stack, p.bank_groups,
                             p.banks_per_group};
  for (uint32_t c : counts)
    if (!is_pow2(c))
      n.fail("address_mapping", p.address_mapping,
             "the XOR mapping needs power-of-two pseudo_channels_per_channel, channels_per_stack, "
             "bank_groups and banks_per_group");
}

AddressMap::AddressMap(const DramParams& p) {
  burst_shift_ = log2u(p.burst_bytes());
  interleave_bytes_ = p.channel_interleave_bytes;
  col_lo_ = p.channel_interleave_bytes / p.burst_bytes();
  pcs_ = p.pseudo_channels_per_channel;
  chs_ = p.channels_per_stack;
  bgs_ = p.bank_groups;
  banks_ = p.banks_per_group;
  pc_bits_ = log2u(pcs_);
  ch_bits_ = log2u(chs_);
  bg_bits_ = log2u(bgs_);
  xor_hash_ = p.address_mapping == "row_bank_column_channel_xor";
  rotate_ = p.channel_hash;
  bank_rotate_ = p.bank_hash;
  sids_ = p.sids;
  bank_count_ = p.bank_groups * p.banks_per_group * p.sids;
  channels_ = p.pseudo_channels();
  period_ = FastDiv(uint64_t(col_lo_) * channels_);   // bursts of one interleave period

  const uint32_t col_hi = p.columns / col_lo_;
  std::vector<std::pair<Field, uint32_t>> order;
  auto channel = [&] {
    order.push_back({kPc, pcs_});
    order.push_back({kCh, chs_});
    order.push_back({kStack, p.stacks});
  };
  // Bank group lowest in the bank field: consecutive rows of a stream land in different bank
  // groups, so their bursts are spaced by tCCD_S rather than tCCD_L.
  auto bank = [&] {
    order.push_back({kBg, bgs_});
    order.push_back({kBank, banks_});
    order.push_back({kSid, p.sids});
  };
  order.push_back({kColLo, col_lo_});
  if (p.address_mapping == "row_bank_rank_column_channel") {
    order.push_back({kCh, chs_});
    order.push_back({kStack, p.stacks});
    order.push_back({kColHi, col_hi});
    order.push_back({kPc, pcs_});
    order.push_back({kSid, p.sids});
    order.push_back({kBg, bgs_});
    order.push_back({kBank, banks_});
  } else if (p.address_mapping == "row_rank_bankgroup_bank_channel_column") {
    // DRAMsim3's rorabgbachco (bank below bank group); exactly so when the interleave is one row.
    channel();
    order.push_back({kColHi, col_hi});
    order.push_back({kBank, banks_});
    order.push_back({kBg, bgs_});
    order.push_back({kSid, p.sids});
  } else if (p.address_mapping == "row_column_bank_channel") {
    channel();
    bank();
    order.push_back({kColHi, col_hi});
  } else {
    channel();
    order.push_back({kColHi, col_hi});
    bank();
  }
  for (const auto& [f, r] : order) {
    Digit d{f, r, is_pow2(r), log2u(r), uint64_t(r) - 1};
    digits_.push_back(d);
  }
}

uint32_t AddressMap::rotation(uint64_t upper) const {
  // Any well-mixed function of the bits above the channel digits will do (NVIDIA's is not public):
  // the rotation of one interleave period never changes inside it, so a stream still visits every
  // pseudo-channel once a period, while strides of whole periods land on unrelated channels.
  return static_cast<uint32_t>(((mix64(upper) >> 32) * channels_) >> 32);
}

uint32_t AddressMap::bank_rotation(uint32_t row) const {
  // Salted so that it is not the channel rotation of the same bits (that hash sees the row too).
  return static_cast<uint32_t>(((mix64(uint64_t(row) ^ 0x5bd1e9955bd1e995ull) >> 32) * bank_count_) >> 32);
}

DramAddress AddressMap::decode(uint64_t addr) const {
  uint64_t x = addr >> burst_shift_;
  uint32_t v[kFieldCount] = {};
  // The address above column_lo and the channel digits (the first four): one exact division.
  const uint64_t upper = rotate_ ? period_.div(x) : 0;
  for (const Digit& d : digits_) {
    if (d.pow2) {
      v[d.field] = static_cast<uint32_t>(x & d.mask);
      x >>= d.shift;
    } else {
      v[d.field] = static_cast<uint32_t>(x % d.radix);
      x /= d.radix;
    }
  }
  const auto row = static_cast<uint32_t>(x);
  if (xor_hash_) apply_xor(v, row);
  if (bank_rotate_) {
    const uint32_t n = bank_count_;
    uint32_t idx = v[kBg] + bgs_ * (v[kBank] + banks_ * v[kSid]) + bank_rotation(row);
    if (idx >= n) idx -= n;
    v[kBg] = idx % bgs_;
    v[kBank] = (idx / bgs_) % banks_;
    v[kSid] = idx / (bgs_ * banks_);
  }
  DramAddress a;
  a.pc = v[kPc] + pcs_ * (v[kCh] + chs_ * v[kStack]);
  if (rotate_) {
    a.pc += rotation(upper);
    if (a.pc >= channels_) a.pc -= channels_;
  }
  a.group = v[kBg] + bgs_ * v[kSid];
  a.bank = v[kBank] + banks_ * a.group;
  a.row = row;
  a.column = v[kColLo] + col_lo_ * v[kColHi];
  return a;
}

// XOR with row bits is its own inverse, so encode applies the same hash to undo it.
void AddressMap::apply_xor(uint32_t* v, uint32_t row) const {
  uint32_t h = row;
  v[kBg] ^= h & (bgs_ - 1);
  h >>= bg_bits_;
  v[kBank] ^= h & (banks_ - 1);
  v[kPc] ^= row & (pcs_ - 1);
  v[kCh] ^= (row >> pc_bits_) & (chs_ - 1);
}

uint64_t AddressMap::encode(const DramAddress& a) const {
  uint32_t v[kFieldCount] = {};
  v[kColLo] = a.column % col_lo_;
  v[kColHi] = a.column / col_lo_;
  v[kPc] = a.pc % pcs_;
  v[kCh] = (a.pc / pcs_) % chs_;
  v[kStack] = a.pc / (pcs_ * chs_);
  v[kBank] = a.bank % banks_;
  v[kBg] = a.group % bgs_;
  v[kSid] = a.group / bgs_;
  if (xor_hash_) apply_xor(v, a.row);
  if (bank_rotate_) {  // undo the row's rotation of the bank index
    const uint32_t n = bank_count_, r = bank_rotation(a.row);
    const uint32_t rotated = v[kBg] + bgs_ * (v[kBank] + banks_ * v[kSid]);
    const uint32_t idx = rotated >= r ? rotated - r : rotated + n - r;
    v[kBg] = idx % bgs_;
    v[kBank] = (idx / bgs_) % banks_;
    v[kSid] = idx / (bgs_ * banks_);
  }
  uint64_t x = a.row;
  for (size_t i = digits_.size(); i-- > 0;) {
    if (i == 3 && rotate_) {   // x is now the address above the channel digits: undo the rotation
      const uint32_t r = rotation(x);
      const uint32_t pc = a.pc >= r ? a.pc - r : a.pc + channels_ - r;
      v[kPc] = pc % pcs_;
      v[kCh] = (pc / pcs_) % chs_;
      v[kStack] = pc / (pcs_ * chs_);
    }
    x = x * digits_[i].radix + v[digits_[i].field];
  }
  return x << burst_shift_;
}

}  // namespace indexsim::model::dram
