// SPDX-License-Identifier: Apache-2.0
// Quantize: the storage precision of the indexer cache and of the KV cache.
//
// Indexer entry = head_dim elements + one FP32 scale for the 8- and 4-bit formats (DeepSeek-V3.2:
// FP8 128 + 4 = 132 B, the MXFP4 variant 64 + 4 = 68 B; ../shared/reference/workloads.md).
// KV entry (MLA latent) = kv_lora_rank elements + one FP32 scale per 128 elements for 8/4-bit
// formats + the RoPE key kept in BF16 (FlashMLA FP8: 512 + 16 + 128 = 656 B; BF16: 1152 B).
#include <cmath>

#include "sim/techniques/technique.hpp"

namespace indexsim::sim {

namespace {

using config::Rule;
using trace::Precision;

struct Format {
  double elem_bytes;
  bool scaled;
  Precision compute;
};

Format format_of(const std::string& s) {
  if (s == "fp32") return {4, false, Precision::tf32};
  if (s == "fp16") return {2, false, Precision::fp16};
  if (s == "bf16") return {2, false, Precision::bf16};
  if (s == "fp8") return {1, true, Precision::fp8};
  return {0.5, true, Precision::fp4};  // fp4 (E2M1)
}

class Quantize : public Technique {
 public:
  explicit Quantize(const config::Node& n) {
    const std::vector<std::string> formats = {"fp32", "fp16", "bf16", "fp8", "fp4"};
    if (n.has("indexer")) indexer_ = n.req<std::string>("indexer", Rule::choice(formats));
    if (n.has("kv")) kv_ = n.req<std::string>("kv", Rule::choice(formats));
  }

  void reshape(trace::ModelShape& m) const override {
    if (!indexer_.empty()) {
      const Format f = format_of(indexer_);
      // elem_bytes is whole bytes; a sub-byte format is whole bytes scaled by storage_ratio.
      m.indexer.elem_bytes = f.elem_bytes >= 1 ? uint32_t(f.elem_bytes) : 1;
      m.indexer.storage_ratio *= f.elem_bytes >= 1 ? 1.0 : f.elem_bytes;
      m.indexer.scale_bytes_per_entry = f.scaled ? 4 : 0;
      m.indexer.score_precision = f.compute;
    }
    if (!kv_.empty()) {
      const Format f = format_of(kv_);
      const auto& a = m.mla;
      const double latent = a.kv_lora_rank * f.elem_bytes;
      const double scales = f.scaled ? 4.0 * std::ceil(a.kv_lora_rank / 128.0) : 0.0;
      m.mla.kv_bytes_per_token = uint32_t(std::ceil(latent + scales)) + 2 * a.qk_rope_head_dim;
    }
  }

 private:
  std::string indexer_, kv_;
};

}  // namespace

INDEXSIM_REGISTER(TechniqueRegistry, "technique", "quantize",
                  [](const config::Node& n) { return std::make_unique<Quantize>(n); });

}  // namespace indexsim::sim
