// SPDX-License-Identifier: Apache-2.0
#include "traces/generators/gemm_kernels.hpp"

#include "traces/generators/emulate.hpp"

namespace indexsim::trace {

namespace detail {

// Per-CTA reads of the A row-panel and the B column-panel and the write of the C tile, for the CTAs
// [cta0, cta0 + mt·nt), n tile fastest inside each m-tile row. With multicast on A, the pairs
// (2p, 2p+1) of a row share the A panel: the row's CTAs are ordered left members, right members
// (then a lone last tile), each member reading its half. With multicast on B, m-tile rows 2q and
// 2q+1 share the B panels, each reading half of every panel.
void gemm_accesses(Builder& b, uint32_t kernel, uint64_t cta0, uint64_t m, uint64_t n, uint64_t kdim,
                   const GemmTiling& t, const GemmOperands& o) {
  const uint64_t tm = t.tm, tn = t.tn;
  const uint64_t mt = ceil_div(m, tm), nt = ceil_div(n, tn), nrem = n % tn;
  const uint64_t a_row = bytes_of(kdim, o.a_bits), b_row = bytes_of(kdim, o.b_bits), c_pitch = bytes_of(n, o.c_bits);
  struct Part {
    uint64_t h = 0, parts = 1;
    uint64_t lo(uint64_t w) const { return w * h / parts; }
    uint64_t hi(uint64_t w) const { return w * (h + 1) / parts; }
  };
  // Tiles j0, j0 + step, ... (count of them) of m-tile row i, on CTAs [first, first + count).
  auto run = [&](uint64_t i, uint64_t first, uint64_t j0, uint64_t step, uint64_t count, Part pa, Part pb) {
    if (count == 0) return;
    const uint64_t rows = std::min(tm, m - i * tm);
    b.strided(kernel, o.a_tensor, false, first, count, o.a_base + (i * tm + pa.lo(rows)) * a_row, 0, a_row,
              pa.hi(rows) - pa.lo(rows), int64_t(a_row));
    const bool partial = nrem && j0 + (count - 1) * step == nt - 1;
    const uint64_t full = partial ? count - 1 : count;
    const uint64_t c_base = o.c_base + i * tm * c_pitch;
    b.strided(kernel, o.b_tensor, false, first, full, o.b_base + (j0 * tn + pb.lo(tn)) * b_row, int64_t(step * tn * b_row),
              b_row, pb.hi(tn) - pb.lo(tn), int64_t(b_row));
    b.strided(kernel, o.c_tensor, true, first, full, c_base + bytes_of(j0 * tn, o.c_bits), int64_t(bytes_of(step * tn, o.c_bits)),
              bytes_of(tn, o.c_bits), rows, int64_t(c_pitch));
    if (partial) {
      const uint64_t last = first + full, j = nt - 1;
      b.strided(kernel, o.b_tensor, false, last, 1, o.b_base + (j * tn + pb.lo(nrem)) * b_row, 0, b_row,
                pb.hi(nrem) - pb.lo(nrem), int64_t(b_row));
      b.strided(kernel, o.c_tensor, true, last, 1, c_base + bytes_of(j * tn, o.c_bits), 0, bytes_of(nrem, o.c_bits), rows,
                int64_t(c_pitch));
    }
  };
  for (uint64_t i = 0; i < mt; ++i) {
    const uint64_t first = cta0 + i * nt;
    if (t.multicast == 2 && t.on_a && nt >= 2) {
      const uint64_t np = nt / 2;
      run(i, first, 0, 2, np, {0, 2}, {});
      run(i, first + np, 1, 2, np, {1, 2}, {});
      if (nt % 2) run(i, first + 2 * np, nt - 1, 1, 1, {}, {});
    } else if (t.multicast == 2 && !t.on_a && (i % 2 == 1 || i + 1 < mt)) {
      run(i, first, 0, 1, nt, {}, {i % 2, 2});
    } else {
      run(i, first, 0, 1, nt, {}, {});
    }
  }
}

// The arithmetic a planned GEMM does: the Tensor Cores compute whole tiles (TMA fills the edges of
// a partial tile with zeros), and DeepGEMM's FP8 kernel rescales and adds each 128-deep partial sum
// on the CUDA cores (one FFMA per accumulator element per K block).
void gemm_flops(KernelRecord& k, const GemmLaunch& g, uint64_t kdim, Precision p) {
  const double tile_elems = double(g.tiles) * g.block_m * g.block_n;
  k.flops[static_cast<int>(p)] = 2.0 * tile_elems * double(kdim);
  if (g.promotion) k.flops[static_cast<int>(Precision::simt)] = 2.0 * tile_elems * double(ceil_div(kdim, g.block_k));
}

void gemm_pipeline(KernelRecord& k, const GemmLaunch& g, uint64_t kdim) {
  // Hopper and Ampere GEMMs (DeepGEMM fp8_gemm.cuh, CUTLASS's collective epilogues) store a tile
  // after its last MMA: registers to shared memory, then a TMA or vector store that the math warps
  // wait on before their next tile.
  k.stores_after_math = true;
  // ... and load A and B one K block at a time (a stage of DeepGEMM's TMA producer: A, then B).
  k.load_steps = uint32_t(ceil_div(kdim, g.block_k));
  // DeepGEMM's grid is persistent (its scheduler hands each resident CTA tile after tile): the tiles
  // run as CTAs here, without the block scheduler's turnover between them.
  k.persistent = g.persistent_ctas > 0;
}

KernelShape gemm_kernel_shape(const GemmLaunch& g) {
  return KernelShape{g.threads, static_cast<uint32_t>(g.smem_bytes), g.regs_per_thread};
}

GemmTiling gemm_tiling(const GemmLaunch& g) { return GemmTiling{g.block_m, g.block_n, g.multicast, g.multicast_on_a}; }

uint32_t emit_gemm(Builder& b, const std::string& name, KernelKind kind, int layer, uint64_t m, uint64_t n, uint64_t k,
                   Precision precision, const GemmLaunch& g, const GemmOperands& o, std::vector<uint32_t> deps) {
  const uint32_t id = b.kernel(name, kind, layer, {ceil_div(n, g.block_n), ceil_div(m, g.block_m), 1},
                               gemm_kernel_shape(g), std::move(deps));
  gemm_flops(b.k(id), g, k, precision);
  gemm_pipeline(b.k(id), g, k);
  gemm_accesses(b, id, 0, m, n, k, gemm_tiling(g), o);
  return id;
}

}  // namespace detail

using namespace detail;

TraceData emulate_copy(uint64_t bytes, const CopyShape& shape) {
  if (bytes == 0) throw std::invalid_argument("copy bytes must be > 0");
  if (shape.sources > 2 || (shape.sources == 0 && !shape.write))
    throw std::invalid_argument("copy sources must be 1 or 2 (0: a write-only fill)");
  Builder b;
  const uint64_t chunk = uint64_t(shape.threads) * shape.vector_bytes;
  const uint64_t chunks = ceil_div(bytes, chunk);
  const uint64_t ctas = shape.ctas ? std::min<uint64_t>(shape.ctas, chunks) : std::min<uint64_t>(chunks, 65535);
  const bool two = shape.sources == 2;
  const std::string name = shape.sources == 0 ? "fill" : shape.write ? (two ? "add" : "copy") : (two ? "dot" : "read");
  std::vector<std::pair<uint32_t, bool>> arrays;  // tensor, written
  if (shape.sources > 0) arrays.push_back({b.tensor(name + ".src", TensorClass::scratch, -1, bytes), false});
  if (two) arrays.push_back({b.tensor(name + ".src2", TensorClass::scratch, -1, bytes), false});
  if (shape.write) arrays.push_back({b.tensor(name + ".dst", TensorClass::scratch, -1, bytes), true});
  KernelShape ks;
  ks.threads = shape.threads;
  ks.regs_per_thread = 32;
  const uint32_t id = b.kernel(name, shape.write ? KernelKind::copy : KernelKind::read, -1, {ctas, 1, 1}, ks);
  // Grid-stride: CTA c moves chunks c, c + ctas, c + 2·ctas, ... of every array; the last partial
  // chunk goes alone.
  const uint64_t full_chunks = bytes / chunk, iters = full_chunks / ctas, extra = full_chunks % ctas;
  // A thread stores what its load brought, so where every CTA moves one chunk (BabelStream's and
  // gpu-stream's one element a thread) its stores leave once its loads have landed, and the CTA
  // holds its slot until they are acknowledged: the epilogue's rule (KernelRecord::stores_after_math).
  // A longer grid-stride loop overlaps one iteration's store with the next one's load, which no
  // CTA-wide phase expresses: its writes stay beside its loads.
  b.k(id).stores_after_math = shape.write && shape.sources > 0 && chunks <= ctas;
  const int64_t stride = int64_t(ctas * chunk);
  for (const auto& [t, w] : arrays) {
    b.strided(id, t, w, 0, extra, 0, int64_t(chunk), chunk, iters + 1, stride);
    b.strided(id, t, w, extra, ctas - extra, extra * chunk, int64_t(chunk), chunk, iters, stride);
    const uint64_t tail = bytes - full_chunks * chunk;
    b.strided(id, t, w, full_chunks % ctas, tail ? 1 : 0, full_chunks * chunk, 0, tail, 1, 0);
  }
  b.t.metadata = {{"source", "emulated"}, {"generator", kGeneratorVersion}, {"workload", name}, {"bytes", bytes}};
  return std::move(b.t);
}

TraceData emulate_gemm(uint64_t m, uint64_t n, uint64_t k, Precision precision, const LaunchLimits& limits) {
  if (m == 0 || n == 0 || k == 0) throw std::invalid_argument("gemm m, n and k must be > 0");
  // A benchmark of one precision on a GPU without it would measure another precision's kernel.
  if (!limits.native[size_t(precision)])
    throw std::invalid_argument(std::string("gemm dtype ") + to_string(precision) +
                                ": this GPU has no Tensor Core path at that precision (its tensor_flops_per_clk_per_sm is 0)");
  GemmProblem prob;
  prob.m = m;
  prob.n = n;
  prob.k = k;
  prob.precision = precision;
  const GemmLaunch g = plan_gemm(prob, limits);
  Builder b;
  const uint32_t bits = precision == Precision::simt ? 32 : precision_bits(precision);
  const uint32_t c_bits = bits >= 32 ? 32 : 16;
  GemmOperands o;
  o.a_tensor = b.tensor("gemm.A", TensorClass::activations, -1, bytes_of(m * k, bits));
  o.b_tensor = b.tensor("gemm.B", TensorClass::weights, -1, bytes_of(n * k, bits));
  o.c_tensor = b.tensor("gemm.C", TensorClass::activations, -1, bytes_of(m * n, c_bits));
  o.a_bits = o.b_bits = bits;
  o.c_bits = c_bits;
  emit_gemm(b, "gemm", KernelKind::gemm, -1, m, n, k, precision, g, o);
  b.t.metadata = {{"source", "emulated"}, {"generator", kGeneratorVersion}, {"workload", "gemm"},
                  {"m", m}, {"n", n}, {"k", k}, {"precision", to_string(precision)},
                  {"launch", {{"library", g.library}, {"block_m", g.block_m}, {"block_n", g.block_n},
                              {"block_k", g.block_k}, {"stages", g.stages}, {"multicast", g.multicast},
                              {"multicast_on", g.multicast_on_a ? "A" : "B"}, {"persistent_ctas", g.persistent_ctas},
                              {"smem_bytes", g.smem_bytes}}}};
  return std::move(b.t);
}

}  // namespace indexsim::trace
