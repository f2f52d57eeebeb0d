// SPDX-License-Identifier: Apache-2.0
// Top-k over long score rows (1M scores, k = 2048) by radix select spread over every CTA of a row.
// Scores become order-preserving 32-bit keys (num::order_key). Three digit passes (11, 11, 10 bits)
// each build a histogram of the keys that still match the prefix found so far (shared-memory
// histograms merged with global atomics), and one CTA per row picks the digit where the k-th
// largest key lies. After the last pass the threshold key T is exact: every key > T is selected,
// and of the keys equal to T the lowest-index ones, which an ordered (scanned) collection finds.
// A bitonic sort of the k winners gives the reference order (descending score, then index).
#include <cub/block/block_scan.cuh>

#include <string>

#include "kernels/common.cuh"
#include "kernels/cpu/numeric.hpp"
#include "traces/kernel_geometry.hpp"

namespace indexsim::kernels {
namespace {

// Block sizes, chunking and pass structure: traces/kernel_geometry.hpp (the emulated traces read them too).
namespace geo = trace::geometry;
constexpr int kThreads = geo::kTopkThreads;
constexpr int kPerThread = geo::kTopkPerThread;
constexpr int kChunk = geo::kTopkChunk;  // scores per CTA per row
constexpr int kBins = geo::kTopkBins;
constexpr int kMaxK = geo::kTopkMaxK;
constexpr int kSortThreads = geo::kTopkSortThreads;

struct RowState {
  uint32_t prefix, mask, k_rem, k_total;
  uint32_t gt_count;  // atomically claimed slots for keys > T
  uint32_t pad[3];
};

struct Workspace {  // carved out of TopkArgs::workspace
  RowState* state;   // rows
  uint32_t* hist;    // rows × kBins
  uint32_t* eq;      // rows × chunks
  uint64_t* cand;    // rows × k: (key << 32) | ~index
};

Workspace carve(void* base, int rows, int64_t chunks, int k) {
  auto* p = static_cast<uint8_t*>(base);
  Workspace w;
  w.state = reinterpret_cast<RowState*>(p);
  p += sizeof(RowState) * rows;
  w.hist = reinterpret_cast<uint32_t*>(p);
  p += sizeof(uint32_t) * size_t(rows) * kBins;
  w.eq = reinterpret_cast<uint32_t*>(p);
  p += sizeof(uint32_t) * size_t(rows) * chunks;
  p = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(p) + 7) & ~uintptr_t(7));
  w.cand = reinterpret_cast<uint64_t*>(p);
  return w;
}

__global__ void __launch_bounds__(kThreads) topk_init(Workspace w, int64_t n, int k, CtaStamp* stamps) {
  dev::Stamp stamp(stamps);
  const int row = blockIdx.x;
  for (int b = threadIdx.x; b < kBins; b += kThreads) w.hist[size_t(row) * kBins + b] = 0;
  if (threadIdx.x == 0) {
    RowState s{};
    s.k_total = uint32_t(int64_t(k) < n ? int64_t(k) : n);
    s.k_rem = s.k_total;
    w.state[row] = s;
  }
  stamp.end(stamps);
}

__device__ __forceinline__ uint32_t key_at(const float* row, int64_t n, int64_t i) {
  return i < n ? num::order_key(__ldg(row + i)) : 0u;
}

// Histogram of digit (key >> shift) & (bins - 1) over keys matching the row's prefix.
__global__ void __launch_bounds__(kThreads) topk_hist(const float* scores, int64_t n, Workspace w, int shift,
                                                      int bins, CtaStamp* stamps) {
  dev::Stamp stamp(stamps);
  __shared__ uint32_t h[kBins];
  const int row = blockIdx.y;
  const RowState st = w.state[row];
  for (int b = threadIdx.x; b < bins; b += kThreads) h[b] = 0;
  __syncthreads();
  if (st.k_rem > 0) {
    const float* r = scores + size_t(row) * n;
    const int64_t base = int64_t(blockIdx.x) * kChunk + threadIdx.x;
#pragma unroll
    for (int u = 0; u < kPerThread; ++u) {
      const int64_t i = base + int64_t(u) * kThreads;  // coalesced: consecutive threads, consecutive scores
      if (i < n) {
        const uint32_t key = key_at(r, n, i);
        if ((key & st.mask) == st.prefix) atomicAdd(&h[(key >> shift) & uint32_t(bins - 1)], 1u);
      }
    }
  }
  __syncthreads();
  for (int b = threadIdx.x; b < bins; b += kThreads)
    if (h[b]) atomicAdd(&w.hist[size_t(row) * kBins + b], h[b]);
  stamp.end(stamps);
}

// One CTA per row: the digit whose bin holds the k_rem-th largest key; bins are cleared for the
// next pass.
__global__ void __launch_bounds__(kThreads) topk_pick(Workspace w, int shift, int bins, CtaStamp* stamps) {
  dev::Stamp stamp(stamps);
  using Scan = cub::BlockScan<uint32_t, kThreads>;
  __shared__ typename Scan::TempStorage tmp;
  const int row = blockIdx.x;
  uint32_t* hist = w.hist + size_t(row) * kBins;
  const RowState st = w.state[row];
  const int per = bins / kThreads;  // 8 or 4 bins per thread, thread 0 owning the highest
  uint32_t c[kBins / kThreads];
  uint32_t local = 0;
#pragma unroll
  for (int j = 0; j < kBins / kThreads; ++j) {
    c[j] = j < per ? hist[bins - 1 - (threadIdx.x * per + j)] : 0u;
    local += c[j];
  }
  uint32_t above;  // keys in higher bins than this thread's
  Scan(tmp).ExclusiveSum(local, above);
  if (st.k_rem > 0 && above < st.k_rem && st.k_rem <= above + local) {
    uint32_t acc = above;
#pragma unroll
    for (int j = 0; j < kBins / kThreads; ++j) {
      if (j < per && acc < st.k_rem && st.k_rem <= acc + c[j]) {
        const uint32_t digit = uint32_t(bins - 1 - (threadIdx.x * per + j));
        RowState s = st;
        s.prefix |= digit << shift;
        s.mask |= uint32_t(bins - 1) << shift;
        s.k_rem = st.k_rem - acc;
        w.state[row] = s;
      }
      acc += c[j];
    }
  }
  __syncthreads();
  for (int b = threadIdx.x; b < kBins; b += kThreads) hist[b] = 0;
  stamp.end(stamps);
}

// Per chunk: how many keys equal the threshold T (= the final prefix).
__global__ void __launch_bounds__(kThreads) topk_count_eq(const float* scores, int64_t n, Workspace w,
                                                          int64_t chunks, CtaStamp* stamps) {
  dev::Stamp stamp(stamps);
  __shared__ uint32_t total;
  const int row = blockIdx.y;
  const uint32_t T = w.state[row].prefix;
  if (threadIdx.x == 0) total = 0;
  __syncthreads();
  const float* r = scores + size_t(row) * n;
  const int64_t base = int64_t(blockIdx.x) * kChunk + threadIdx.x;
  uint32_t cnt = 0;
#pragma unroll
  for (int u = 0; u < kPerThread; ++u) {
    const int64_t i = base + int64_t(u) * kThreads;
    cnt += (i < n && key_at(r, n, i) == T);
  }
  cnt = __reduce_add_sync(0xffffffffu, cnt);
  if ((threadIdx.x & 31) == 0 && cnt) atomicAdd(&total, cnt);
  __syncthreads();
  if (threadIdx.x == 0) w.eq[size_t(row) * chunks + blockIdx.x] = total;
  stamp.end(stamps);
}

// Keys > T go to the first k_total - k_rem slots in any order; the first k_rem keys == T in index
// order take the remaining slots (their rank = equal keys in earlier chunks + a block scan).
__global__ void __launch_bounds__(kThreads) topk_collect(const float* scores, int64_t n, Workspace w,
                                                         int64_t chunks, int k, CtaStamp* stamps) {
  dev::Stamp stamp(stamps);
  using Scan = cub::BlockScan<uint32_t, kThreads>;
  __shared__ typename Scan::TempStorage tmp;
  __shared__ uint32_t before_s;
  const int row = blockIdx.y;
  const RowState st = w.state[row];
  const uint32_t T = st.prefix, n_gt = st.k_total - st.k_rem;
  uint32_t before = 0;
  for (int64_t c = threadIdx.x; c < blockIdx.x; c += kThreads) before += w.eq[size_t(row) * chunks + c];
  before = __reduce_add_sync(0xffffffffu, before);
  if (threadIdx.x == 0) before_s = 0;
  __syncthreads();
  if ((threadIdx.x & 31) == 0) atomicAdd(&before_s, before);

  const float* r = scores + size_t(row) * n;
  uint64_t* cand = w.cand + size_t(row) * k;
  // Ordered ranks need each thread to own a contiguous run of scores.
  const int64_t first = int64_t(blockIdx.x) * kChunk + int64_t(threadIdx.x) * kPerThread;
  uint32_t keys[kPerThread];
  uint32_t eq = 0;
#pragma unroll
  for (int u = 0; u < kPerThread; ++u) {
    keys[u] = key_at(r, n, first + u);
    const bool in = first + u < n;
    eq += in && keys[u] == T;
    if (in && keys[u] > T && st.k_total > 0) {
      const uint32_t pos = atomicAdd(&w.state[row].gt_count, 1u);
      if (pos < n_gt) cand[pos] = (uint64_t(keys[u]) << 32) | uint32_t(~uint32_t(first + u));
    }
  }
  uint32_t rank;
  Scan(tmp).ExclusiveSum(eq, rank);
  __syncthreads();
  rank += before_s;
#pragma unroll
  for (int u = 0; u < kPerThread; ++u) {
    if (first + u < n && keys[u] == T) {
      if (rank < st.k_rem) cand[n_gt + rank] = (uint64_t(keys[u]) << 32) | uint32_t(~uint32_t(first + u));
      ++rank;
    }
  }
  stamp.end(stamps);
}

// Bitonic sort of one row's candidates, descending: larger key first, then lower index (~index
// larger). Padding entries are 0 and sort last.
__global__ void __launch_bounds__(kSortThreads) topk_sort(Workspace w, int k, int32_t* out, CtaStamp* stamps) {
  dev::Stamp stamp(stamps);
  __shared__ uint64_t v[kMaxK];
  const int row = blockIdx.x;
  const uint32_t m = w.state[row].k_total;
  int len = 1;
  while (len < k) len <<= 1;
  for (int i = threadIdx.x; i < len; i += kSortThreads) v[i] = i < int(m) ? w.cand[size_t(row) * k + i] : 0ull;
  __syncthreads();
  for (int size = 2; size <= len; size <<= 1)
    for (int stride = size >> 1; stride > 0; stride >>= 1) {
      for (int i = threadIdx.x; i < len; i += kSortThreads) {
        const int j = i ^ stride;
        if (j > i) {
          const bool desc = (i & size) == 0;
          const uint64_t a = v[i], b = v[j];
          if (desc ? a < b : a > b) {
            v[i] = b;
            v[j] = a;
          }
        }
      }
      __syncthreads();
    }
  for (int i = threadIdx.x; i < k; i += kSortThreads)
    out[size_t(row) * k + i] = i < int(m) ? int32_t(~uint32_t(v[i] & 0xffffffffull)) : -1;
  stamp.end(stamps);
}

}  // namespace

size_t topk_workspace_bytes(int rows, int64_t n, int k) {
  const int64_t chunks = (n + kChunk - 1) / kChunk;
  return sizeof(RowState) * rows + sizeof(uint32_t) * size_t(rows) * kBins + sizeof(uint32_t) * size_t(rows) * chunks +
         8 + sizeof(uint64_t) * size_t(rows) * k;
}

Plan plan_topk(const TopkArgs& a) {
  if (a.k <= 0 || a.k > kMaxK) throw std::invalid_argument("plan_topk: k must be in [1, 4096], got " + std::to_string(a.k));
  if (a.rows <= 0 || a.n < 0 || a.n > int64_t(INT32_MAX))
    throw std::invalid_argument("plan_topk: rows must be positive and n in [0, 2^31)");
  const int64_t chunks = geo::topk_chunks(a.n);
  const Workspace w = carve(a.workspace, a.rows, chunks, a.k);
  const float* scores = a.scores;
  const int64_t n = a.n;
  const int rows = a.rows, k = a.k;
  int32_t* out = a.out;
  auto make = [&](const char* name, const void* fn, std::array<uint32_t, 3> grid, uint32_t block, double simt) {
    Step st;
    st.info.name = name;
    st.info.kind = "topk";
    st.info.grid = grid;
    st.info.block = {block, 1, 1};
    st.info.simt_flops = simt;
    set_resources(st.info, fn, 0);
    return st;
  };
  Plan plan;
  const std::array<uint32_t, 3> per_row{uint32_t(rows), 1, 1}, per_chunk{uint32_t(chunks), uint32_t(rows), 1};
  Step init = make("topk_init", reinterpret_cast<const void*>(&topk_init), per_row, kThreads, 0);
  init.launch = [=](cudaStream_t s, CtaStamp* stamps) {
    topk_init<<<rows, kThreads, 0, s>>>(w, n, k, stamps);
    check(cudaGetLastError(), "topk_init launch");
  };
  init.info.warp_instructions = double(rows) * geo::kTopkInitWarpInsts;
  plan.push_back(init);
  const int shifts[3] = {21, 10, 0}, *bins = geo::kTopkPassBins;
  for (int pass = 0; pass < 3; ++pass) {
    const int sh = shifts[pass], nb = bins[pass];
    Step h = make(pass == 0 ? "topk_hist0" : pass == 1 ? "topk_hist1" : "topk_hist2",
                  reinterpret_cast<const void*>(&topk_hist), per_chunk, kThreads, double(rows) * n);
    h.launch = [=](cudaStream_t s, CtaStamp* stamps) {
      topk_hist<<<dim3(uint32_t(chunks), rows), kThreads, 0, s>>>(scores, n, w, sh, nb, stamps);
      check(cudaGetLastError(), "topk_hist launch");
    };
    h.info.warp_instructions = double(rows) * double(chunks) * geo::kTopkHistWarpInsts[pass];
    plan.push_back(h);
    Step p = make(pass == 0 ? "topk_pick0" : pass == 1 ? "topk_pick1" : "topk_pick2",
                  reinterpret_cast<const void*>(&topk_pick), per_row, kThreads, double(rows) * nb);
    p.launch = [=](cudaStream_t s, CtaStamp* stamps) {
      topk_pick<<<rows, kThreads, 0, s>>>(w, sh, nb, stamps);
      check(cudaGetLastError(), "topk_pick launch");
    };
    p.info.warp_instructions = double(rows) * geo::kTopkPickWarpInsts;
    plan.push_back(p);
  }
  Step ce = make("topk_count_eq", reinterpret_cast<const void*>(&topk_count_eq), per_chunk, kThreads, double(rows) * n);
  ce.launch = [=](cudaStream_t s, CtaStamp* stamps) {
    topk_count_eq<<<dim3(uint32_t(chunks), rows), kThreads, 0, s>>>(scores, n, w, chunks, stamps);
    check(cudaGetLastError(), "topk_count_eq launch");
  };
  ce.info.warp_instructions = double(rows) * double(chunks) * geo::kTopkCountEqWarpInsts;
  plan.push_back(ce);
  Step co = make("topk_collect", reinterpret_cast<const void*>(&topk_collect), per_chunk, kThreads, double(rows) * n);
  co.launch = [=](cudaStream_t s, CtaStamp* stamps) {
    topk_collect<<<dim3(uint32_t(chunks), rows), kThreads, 0, s>>>(scores, n, w, chunks, k, stamps);
    check(cudaGetLastError(), "topk_collect launch");
  };
  co.info.warp_instructions = double(rows) * double(chunks) * geo::kTopkCollectWarpInsts;
  plan.push_back(co);
  int len = 1;
  while (len < k) len <<= 1;
  Step so = make("topk_sort", reinterpret_cast<const void*>(&topk_sort), per_row, kSortThreads,
                 double(rows) * len * 11 * 12 / 2);  // compare-exchanges of a bitonic network, ~len·log²len/2
  so.launch = [=](cudaStream_t s, CtaStamp* stamps) {
    topk_sort<<<rows, kSortThreads, 0, s>>>(w, k, out, stamps);
    check(cudaGetLastError(), "topk_sort launch");
  };
  so.info.warp_instructions = double(rows) * geo::topk_sort_warp_insts(k);
  plan.push_back(so);
  return plan;
}

}  // namespace indexsim::kernels
