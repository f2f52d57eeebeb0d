// SPDX-License-Identifier: Apache-2.0
// The records of an IndexSim trace (.itr). See traces/FORMAT.md for the byte layout.
//
// Addresses in access records are offsets inside a tensor, not physical addresses: where a tensor
// lives (HBM, CXL pool, NPU SRAM, flash) is decided at replay time by the placement policy, so the
// same trace can be replayed under different placements.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "traces/kernel_kind.hpp"

namespace indexsim::trace {

// 2: kernel blocks end with wait_ns (a version-1 block ends after its deps and reads as 0).
// 3: then simt_overlaps_mma (earlier blocks read as true, the behaviour they were written for).
// 4: then stores_after_math and load_steps (earlier blocks read as false and 0).
// 5: then warp_instructions (earlier blocks read as 0: unknown).
// 6: then persistent (earlier blocks read as false).
constexpr uint32_t kFormatVersion = 6;

enum class TensorClass : uint8_t {
  weights = 0,
  kv_cache = 1,
  indexer_cache = 2,
  activations = 3,
  linear_state = 4,   // the recurrent state of a linear-attention layer
  topk_indices = 5,
  scratch = 6,
  peer = 7,           // another GPU's memory, reached over the fabric (a collective's remote buffers)
};
constexpr int kTensorClassCount = 8;
const char* to_string(TensorClass c);
bool tensor_class_from_string(const std::string& s, TensorClass& out);

// Precisions in which a kernel does arithmetic; FLOPs are counted per precision.
enum class Precision : uint8_t { fp32 = 0, tf32 = 1, bf16 = 2, fp16 = 3, fp8 = 4, fp4 = 5, simt = 6 };
constexpr int kPrecisionCount = 7;
const char* to_string(Precision p);

struct TensorRecord {
  uint32_t id = 0;
  std::string name;          // e.g. "L12.indexer_cache"
  TensorClass cls = TensorClass::scratch;
  int32_t layer = -1;        // -1: not owned by a layer
  uint64_t bytes = 0;        // footprint on this GPU
};

struct KernelRecord {
  uint32_t id = 0;
  std::string name;          // e.g. "L12.indexer_score"
  KernelKind kind = KernelKind::gemm;   // traces/kernel_kind.hpp
  int32_t layer = -1;
  uint32_t stream = 0;
  std::array<uint32_t, 3> grid{1, 1, 1};
  std::array<uint32_t, 3> block{128, 1, 1};
  uint32_t smem_bytes = 0;       // dynamic + static shared memory per CTA
  uint32_t regs_per_thread = 0;
  std::array<double, kPrecisionCount> flops{};  // total over the kernel, per precision
  bool double_buffered = true;   // the kernel overlaps its loads with compute (cp.async / TMA)
  uint64_t measured_ns = 0;      // captured traces only: median duration over repetitions
  std::vector<uint32_t> deps;    // kernel ids this launch waits for (same stream order included)
  // Time each CTA waits, after its own memory traffic, on agents outside this GPU: a collective's
  // per-step handshakes with its peers (flags over the fabric). 0 for kernels that wait on nothing.
  uint64_t wait_ns = 0;
  // The kernel's CUDA-core work runs beside its Tensor-core work (warp-specialised kernels: DeepGEMM
  // promotes one warpgroup's sums while another's WGMMAs run), so the busier pipe sets the time.
  // false: barriers separate the phases (dequantise a tile, then MMA on it), and their times add.
  bool simt_overlaps_mma = true;
  // The kernel's writes are an epilogue: each CTA stores its output after its last math (a GEMM's
  // tile, through shared memory and a TMA store; a one-element-a-thread copy's element, after its
  // load) and holds its SM until the stores have left.
  // false: writes go out as the CTA's loads do, beside its math.
  bool stores_after_math = false;
  // > 1: each CTA loads its read records together, in this many steps, each step a 1/load_steps
  // slice of every row (a GEMM's K blocks of A and B, as its TMA producer issues them). 0 or 1: one
  // record after another.
  uint32_t load_steps = 0;
  // Warp-level instructions the whole kernel issues (Nsight Compute's smsp__inst_executed.sum):
  // the SM model's lower bound on a CTA's time is its warps' instruction streams at the issue
  // interval of one warp. 0: not known (the kernel is timed by its FLOPs and memory alone).
  double warp_instructions = 0;
  // Its CTAs are the work units of a persistent grid (DeepGEMM's tiles): a resident CTA goes on to
  // its next unit itself, so a slot takes the next one without the block scheduler's turnover.
  bool persistent = false;
  uint64_t cta_count() const { return uint64_t(grid[0]) * grid[1] * grid[2]; }
  uint32_t threads_per_cta() const { return block[0] * block[1] * block[2]; }
  double total_flops() const {
    double s = 0;
    for (double f : flops) s += f;
    return s;
  }
};

struct CtaRecord {          // captured traces only
  uint32_t kernel = 0;
  uint32_t cta = 0;
  uint32_t sm = 0;
  uint64_t start_ns = 0, end_ns = 0;
};

// A memory-access pattern applying to CTAs [cta_first, cta_first + cta_count) of one kernel.
// CTA c starts at base + (c - cta_first) * cta_stride_bytes inside the tensor.
//  - strided: `count` elements of `elem_bytes`, element i at start + i * stride_bytes;
//  - gather:  for each row index r in `rows`, `row_bytes` at start + r * row_pitch_bytes.
// A 1M-token scan is one strided record; a top-k gather is one record with its 2048 rows.
struct AccessRecord {
  enum class Kind : uint8_t { strided = 0, gather = 1 };
  uint32_t kernel = 0;
  uint32_t cta_first = 0;
  uint32_t cta_count = 1;
  Kind kind = Kind::strided;
  bool write = false;
  uint32_t tensor = 0;
  uint64_t base = 0;
  int64_t cta_stride_bytes = 0;
  uint32_t elem_bytes = 0;       // strided
  uint64_t count = 0;            // strided
  int64_t stride_bytes = 0;      // strided
  uint32_t row_bytes = 0;        // gather
  uint64_t row_pitch_bytes = 0;  // gather
  std::vector<uint32_t> rows;    // gather
  uint64_t bytes_per_cta() const {
    return kind == Kind::strided ? count * elem_bytes : uint64_t(rows.size()) * row_bytes;
  }
  uint64_t total_bytes() const { return bytes_per_cta() * cta_count; }
};

}  // namespace indexsim::trace
