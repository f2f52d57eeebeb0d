// SPDX-License-Identifier: Apache-2.0
// Every CUDA kernel of kernels/ against its CPU reference (kernels/cpu/reference.hpp), on the
// inputs rounded to the storage format the kernel reads. Without a GPU every test skips and says why.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "kernels/cpu/numeric.hpp"
#include "kernels/cpu/reference.hpp"
#include "kernels/kernels.hpp"

namespace k = indexsim::kernels;
namespace cpu = indexsim::kernels::cpu;
namespace num = indexsim::kernels::num;

namespace {

std::string no_gpu_reason() {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) return std::string("no CUDA device: cudaGetDeviceCount returned ") + cudaGetErrorName(e);
  if (n == 0) return "no CUDA device: cudaGetDeviceCount found 0 devices";
  return "";
}

#define REQUIRE_GPU()                                      \
  do {                                                     \
    const std::string why = no_gpu_reason();               \
    if (!why.empty()) GTEST_SKIP() << why;                 \
  } while (0)

template <typename T>
struct Dev {  // a device array that frees itself
  T* p = nullptr;
  size_t n = 0;
  explicit Dev(size_t count) : n(count) { k::check(cudaMalloc(&p, std::max<size_t>(1, n) * sizeof(T)), "cudaMalloc"); }
  explicit Dev(const std::vector<T>& v) : Dev(v.size()) {
    k::check(cudaMemcpy(p, v.data(), n * sizeof(T), cudaMemcpyHostToDevice), "cudaMemcpy H2D");
  }
  ~Dev() { cudaFree(p); }
  Dev(const Dev&) = delete;
  std::vector<T> get() const {
    std::vector<T> v(n);
    k::check(cudaMemcpy(v.data(), p, n * sizeof(T), cudaMemcpyDeviceToHost), "cudaMemcpy D2H");
    return v;
  }
};

void run_sync(const k::Plan& plan) {
  k::run(plan, nullptr);
  k::check(cudaDeviceSynchronize(), "kernel execution");
}

std::vector<float> randn(size_t n, uint32_t seed, float sd = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.0f, sd);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

std::vector<uint16_t> to_bf16(const std::vector<float>& x) {
  std::vector<uint16_t> y(x.size());
  for (size_t i = 0; i < x.size(); ++i) y[i] = num::float_to_bf16(x[i]);
  return y;
}
std::vector<float> from_bf16(const std::vector<uint16_t>& x) {
  std::vector<float> y(x.size());
  for (size_t i = 0; i < x.size(); ++i) y[i] = num::bf16_to_float(x[i]);
  return y;
}

// |got - want| <= atol + rtol · max|want| for every element; reports the first few misses.
void expect_close(const std::vector<float>& got, const std::vector<float>& want, double atol, double rtol,
                  const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  double mx = 0;
  for (float w : want)
    if (std::isfinite(w)) mx = std::max(mx, double(std::fabs(w)));
  int bad = 0;
  for (size_t i = 0; i < got.size() && bad < 5; ++i) {
    const bool both_ninf = std::isinf(want[i]) && got[i] == want[i];
    if (!both_ninf && !(std::fabs(double(got[i]) - want[i]) <= atol + rtol * mx)) {
      ADD_FAILURE() << what << "[" << i << "]: got " << got[i] << ", want " << want[i];
      ++bad;
    }
  }
}

// Indexer: I(s) = Σ_h w_h · ReLU(q_h · k_s) on the values the kernel sees (FP8 codes × scales, or
// BF16/FP16-rounded). Two sequences, n not a multiple of the 64-key tile.
void check_indexer(k::KeyType type, bool paged, bool causal) {
  const int H = 64, D = 128, S = 2;
  const int64_t n = 5000;
  const int q_per_seq = causal ? 3 : 1, nq = S * q_per_seq;
  auto qf = randn(size_t(nq) * H * D, 21), wf = randn(size_t(nq) * H, 22, 0.2f), kf = randn(size_t(S) * n * D, 23);
  std::vector<float> q_ref, w_ref = wf, k_ref;
  std::vector<uint8_t> q_bytes, k_bytes;
  std::vector<float> k_scale;
  if (type == k::KeyType::fp8) {
    auto qq = cpu::quantize_rows_fp8(qf.data(), int64_t(nq) * H, D);  // the query scale folds into w
    for (size_t r = 0; r < qq.scales.size(); ++r) w_ref[r] *= qq.scales[r];
    q_ref.resize(qq.codes.size());
    for (size_t i = 0; i < q_ref.size(); ++i) q_ref[i] = num::fp8_e4m3_to_float(qq.codes[i]);
    q_bytes = qq.codes;
    auto kq = cpu::quantize_rows_fp8(kf.data(), S * n, D);
    k_ref = cpu::dequantize_rows_fp8(kq, D);
    k_bytes = kq.codes;
    k_scale = kq.scales;
  } else {
    auto enc = [&](const std::vector<float>& x, std::vector<uint8_t>& bytes, std::vector<float>& ref) {
      std::vector<uint16_t> h(x.size());
      ref.resize(x.size());
      for (size_t i = 0; i < x.size(); ++i) {
        h[i] = type == k::KeyType::bf16 ? num::float_to_bf16(x[i]) : num::float_to_fp16(x[i]);
        ref[i] = type == k::KeyType::bf16 ? num::bf16_to_float(h[i]) : num::fp16_to_float(h[i]);
      }
      bytes.resize(h.size() * 2);
      std::memcpy(bytes.data(), h.data(), bytes.size());
    };
    enc(qf, q_bytes, q_ref);
    enc(kf, k_bytes, k_ref);
  }
  // Paged: scatter each sequence's 64-key pages to shuffled physical pages.
  const int pages = int((n + 63) / 64);
  std::vector<int32_t> table(size_t(S) * pages);
  std::vector<uint8_t> cache = k_bytes;
  std::vector<float> cache_scale = k_scale;
  const int eb = k::key_bytes(type);
  if (paged) {
    std::iota(table.begin(), table.end(), 0);
    std::shuffle(table.begin(), table.end(), std::mt19937(24));
    cache.assign(size_t(S) * pages * 64 * D * eb, 0);
    cache_scale.assign(size_t(S) * pages * 64, 1.0f);
    for (int s = 0; s < S; ++s)
      for (int64_t tkn = 0; tkn < n; ++tkn) {
        const int64_t phys = int64_t(table[size_t(s) * pages + tkn / 64]) * 64 + tkn % 64;
        std::memcpy(&cache[size_t(phys) * D * eb], &k_bytes[size_t(s * n + tkn) * D * eb], size_t(D) * eb);
        if (!k_scale.empty()) cache_scale[size_t(phys)] = k_scale[size_t(s * n + tkn)];
      }
  }
  Dev<uint8_t> dq(q_bytes), dk(cache);
  Dev<float> dw(type == k::KeyType::fp8 ? w_ref : wf), dout(size_t(nq) * n);
  Dev<float> dscale(cache_scale.empty() ? std::vector<float>{0.0f} : cache_scale);
  Dev<int32_t> dtable(table);
  k::IndexerArgs a;
  a.type = type;
  a.q = dq.p;
  a.w = dw.p;
  a.keys = dk.p;
  a.key_scale = type == k::KeyType::fp8 ? dscale.p : nullptr;
  a.block_table = paged ? dtable.p : nullptr;
  a.n = n;
  a.nq = nq;
  a.heads = H;
  a.dim = D;
  a.q_per_seq = q_per_seq;
  a.causal_base = causal ? n - q_per_seq : -1;
  a.out = dout.p;
  run_sync(k::plan_indexer_score(a));
  const auto got = dout.get();
  for (int qi = 0; qi < nq; ++qi) {
    const int s = qi / q_per_seq;
    auto want = cpu::indexer_scores(&q_ref[size_t(qi) * H * D], &w_ref[size_t(qi) * H], H, D, &k_ref[size_t(s) * n * D], n);
    if (causal)
      for (int64_t j = 0; j < n; ++j)
        if (j > a.causal_base + qi % q_per_seq) want[size_t(j)] = -INFINITY;
    expect_close(std::vector<float>(got.begin() + qi * n, got.begin() + (qi + 1) * n), want, 1e-3, 2e-3,
                 std::string("indexer_") + k::to_string(type) + " query " + std::to_string(qi));
  }
}

}  // namespace

TEST(KernelsGpu, IndexerScoreFp8EqualsReferenceOnDequantisedKeys) {
  REQUIRE_GPU();
  check_indexer(k::KeyType::fp8, false, false);
}
TEST(KernelsGpu, IndexerScoreFp8PagedCacheEqualsContiguous) {
  REQUIRE_GPU();
  check_indexer(k::KeyType::fp8, true, false);
}
TEST(KernelsGpu, IndexerScoreFp16EqualsReference) {
  REQUIRE_GPU();
  check_indexer(k::KeyType::fp16, false, false);
}
TEST(KernelsGpu, IndexerScoreBf16CausalPrefillMasksFutureKeys) {
  REQUIRE_GPU();
  check_indexer(k::KeyType::bf16, false, true);
}

TEST(KernelsGpu, TopkEqualsReferenceOnAMillionScoresWithTies) {
  REQUIRE_GPU();
  // Exact equality with cpu::topk: same set, same order (descending score, ties by lower index).
  const int rows = 2, kk = 2048;
  const int64_t n = (1 << 20) + 37;
  std::vector<float> s(size_t(rows) * n);
  std::mt19937 rng(31);
  std::uniform_int_distribution<int> coarse(-3000, 3000);
  for (auto& x : s) x = float(coarse(rng)) / 64.0f;  // ~1/6000 distinct values: many ties at the threshold
  for (int64_t i = 0; i < n; i += 1000) s[size_t(i)] = -INFINITY;
  s[5] = -0.0f;
  Dev<float> ds(s);
  Dev<int32_t> dout(size_t(rows) * kk);
  Dev<uint8_t> ws(k::topk_workspace_bytes(rows, n, kk));
  k::TopkArgs a;
  a.scores = ds.p;
  a.rows = rows;
  a.n = n;
  a.k = kk;
  a.out = dout.p;
  a.workspace = ws.p;
  run_sync(k::plan_topk(a));
  const auto got = dout.get();
  for (int r = 0; r < rows; ++r) {
    const auto want = cpu::topk(std::vector<float>(s.begin() + r * n, s.begin() + (r + 1) * n), kk);
    ASSERT_EQ(want.size(), size_t(kk));
    for (int i = 0; i < kk; ++i) ASSERT_EQ(got[size_t(r) * kk + i], want[size_t(i)]) << "row " << r << " rank " << i;
  }
}

TEST(KernelsGpu, TopkOfAShortRowPadsWithMinusOne) {
  REQUIRE_GPU();
  const int64_t n = 1000;
  const int kk = 2048;
  auto s = randn(size_t(n), 32);
  Dev<float> ds(s);
  Dev<int32_t> dout(kk);
  Dev<uint8_t> ws(k::topk_workspace_bytes(1, n, kk));
  k::TopkArgs a;
  a.scores = ds.p;
  a.n = n;
  a.k = kk;
  a.out = dout.p;
  a.workspace = ws.p;
  run_sync(k::plan_topk(a));
  const auto got = dout.get();
  const auto want = cpu::topk(s, kk);
  for (int i = 0; i < kk; ++i) ASSERT_EQ(got[size_t(i)], i < n ? want[size_t(i)] : -1) << i;
}

static void check_pool(bool softmax) {
  const int D = 128;
  const int64_t n = 4001;  // a tail group of one row
  auto rows = randn(size_t(n) * D, 41);
  cpu::PoolParams p;
  p.ratio = 4;
  p.gate = softmax ? cpu::Gate::softmax : cpu::Gate::sigmoid;
  p.gate_w = randn(softmax ? D : 2 * D, 42, 0.1f);
  p.gate_b = 0.1f;
  if (softmax) p.ape = {0.3f, -0.2f, 0.1f, 0.0f};
  else p.h = randn(D, 43);
  const int64_t groups = (n + 3) / 4;
  Dev<float> dr(rows), dgw(p.gate_w), dout(size_t(groups) * D), dscale(static_cast<size_t>(groups));
  Dev<float> dape(softmax ? p.ape : std::vector<float>{0.0f}), dh(softmax ? std::vector<float>{0.0f} : p.h);
  Dev<uint8_t> dfp8(size_t(groups) * D);
  k::PoolArgs a;
  a.rows = dr.p;
  a.n = n;
  a.dim = D;
  a.ratio = 4;
  a.softmax_gate = softmax;
  a.gate_w = dgw.p;
  a.gate_b = p.gate_b;
  a.ape = softmax ? dape.p : nullptr;
  a.h = softmax ? nullptr : dh.p;
  a.out = dout.p;
  a.out_fp8 = dfp8.p;
  a.out_scale = dscale.p;
  run_sync(k::plan_gated_pool(a));
  const auto got = dout.get();
  expect_close(got, cpu::gated_pool(rows.data(), n, D, p), 1e-5, 1e-4, softmax ? "pool_softmax" : "pool_sigmoid");
  // The fused FP8 output is the reference quantisation of the kernel's own FP32 output, bit for bit.
  const auto q = cpu::quantize_rows_fp8(got.data(), groups, D);
  EXPECT_EQ(dfp8.get(), q.codes);
  EXPECT_EQ(dscale.get(), q.scales);
}

TEST(KernelsGpu, SigmoidGatedPoolEqualsReferenceAndQuantisesEachPooledRow) {
  REQUIRE_GPU();
  check_pool(false);
}
TEST(KernelsGpu, SoftmaxGatedPoolEqualsReference) {
  REQUIRE_GPU();
  check_pool(true);
}

TEST(KernelsGpu, ProjectionEqualsReferenceOnBf16Inputs) {
  REQUIRE_GPU();
  // y = x · P with x, P rounded to BF16, FP32 accumulation
  const int64_t n = 1000;
  const int DI = 128, DO = 64;
  const auto xb = to_bf16(randn(size_t(n) * DI, 51)), pb = to_bf16(randn(size_t(DI) * DO, 52, 0.1f));
  const auto x = from_bf16(xb), P = from_bf16(pb);
  std::vector<uint16_t> ptb(size_t(DO) * DI);
  for (int i = 0; i < DI; ++i)
    for (int j = 0; j < DO; ++j) ptb[size_t(j) * DI + i] = pb[size_t(i) * DO + j];
  Dev<uint16_t> dx(xb), dpt(ptb);
  Dev<float> dy(size_t(n) * DO);
  k::ProjectArgs a;
  a.x = dx.p;
  a.pt = dpt.p;
  a.n = n;
  a.dim_in = DI;
  a.dim_out = DO;
  a.y = dy.p;
  run_sync(k::plan_project(a));
  expect_close(dy.get(), cpu::project(x.data(), n, DI, P.data(), DO), 1e-4, 1e-4, "project");
}

// KV rows as the kernel reads them: BF16, or FlashMLA's FP8 layout (512 E4M3 latent values with
// one FP32 scale per 128, then 64 BF16 RoPE values) whose kernel-side value is bf16(e4m3 · scale).
struct KvRows {
  std::vector<uint8_t> bytes;
  std::vector<float> K;  // rows × 576, the values the kernel computes with
};
static KvRows make_kv(int rows, k::KvFormat fmt) {
  const auto x = randn(size_t(rows) * k::kAttnDk, 62);
  KvRows kv;
  kv.K.resize(x.size());
  if (fmt == k::KvFormat::bf16) {
    const auto b = to_bf16(x);
    kv.K = from_bf16(b);
    kv.bytes.resize(b.size() * 2);
    std::memcpy(kv.bytes.data(), b.data(), kv.bytes.size());
    return kv;
  }
  kv.bytes.assign(size_t(rows) * k::kKvFp8RowBytes, 0);
  for (int r = 0; r < rows; ++r) {
    uint8_t* row = &kv.bytes[size_t(r) * k::kKvFp8RowBytes];
    const float* xr = &x[size_t(r) * k::kAttnDk];
    float* Kr = &kv.K[size_t(r) * k::kAttnDk];
    for (int blk = 0; blk < 4; ++blk) {
      const auto q = cpu::quantize_rows_fp8(xr + blk * 128, 1, 128);
      std::memcpy(row + blk * 128, q.codes.data(), 128);
      std::memcpy(row + k::kAttnDv + blk * 4, &q.scales[0], 4);
      for (int c = 0; c < 128; ++c)
        Kr[blk * 128 + c] = num::bf16_to_float(num::float_to_bf16(num::fp8_e4m3_to_float(q.codes[size_t(c)]) * q.scales[0]));
    }
    for (int c = 0; c < 64; ++c) {
      const uint16_t h = num::float_to_bf16(xr[k::kAttnDv + c]);
      std::memcpy(row + k::kAttnDv + 16 + c * 2, &h, 2);
      Kr[k::kAttnDv + c] = num::bf16_to_float(h);
    }
  }
  return kv;
}

static void check_sparse_attn(int forced_splits, k::KvFormat fmt) {
  // o_h = Σ_j softmax_j(scale · q_h·K[idx_j]) V[idx_j], V = K[:, :512]; query 2 selects nothing.
  const int nq = 3, H = 128, topk = 2048, rows = 10000;
  const auto qb = to_bf16(randn(size_t(nq) * H * k::kAttnDk, 61));
  const auto q = from_bf16(qb);
  const KvRows kvr = make_kv(rows, fmt);
  const auto& K = kvr.K;
  std::vector<float> V(size_t(rows) * k::kAttnDv);
  for (int r = 0; r < rows; ++r)
    std::copy_n(&K[size_t(r) * k::kAttnDk], k::kAttnDv, &V[size_t(r) * k::kAttnDv]);
  std::vector<int32_t> idx(size_t(nq) * topk, -1);
  std::mt19937 rng(63);
  std::uniform_int_distribution<int> pick(0, rows - 1);
  for (int qi = 0; qi < 2; ++qi)
    for (int j = 0; j < topk; ++j) idx[size_t(qi) * topk + j] = (j % 17 == 5) ? -1 : pick(rng);
  Dev<uint16_t> dq(qb);
  Dev<uint8_t> dkv(kvr.bytes);
  Dev<int32_t> didx(idx);
  Dev<float> dout(size_t(nq) * H * k::kAttnDv);
  k::SparseAttnArgs a;
  a.q = dq.p;
  a.kv = dkv.p;
  a.kv_format = fmt;
  a.idx = didx.p;
  a.nq = nq;
  a.heads = H;
  a.topk = topk;
  a.scale = 1.0f / std::sqrt(float(k::kAttnDk));
  a.out = dout.p;
  a.splits = forced_splits;
  Dev<uint8_t> ws(k::sparse_attn_workspace_bytes(a));
  a.workspace = ws.p;
  run_sync(k::plan_sparse_attn(a));
  const auto got = dout.get();
  for (int qi = 0; qi < nq; ++qi) {
    const std::vector<int32_t> sel(idx.begin() + qi * topk, idx.begin() + (qi + 1) * topk);
    const auto want = cpu::sparse_attention(&q[size_t(qi) * H * k::kAttnDk], H, k::kAttnDk, K.data(), V.data(),
                                            k::kAttnDv, sel, a.scale);
    // P is rounded to BF16 before P·V (as FlashMLA does): a relative error of 2^-9 per weight.
    expect_close(std::vector<float>(got.begin() + size_t(qi) * H * k::kAttnDv, got.begin() + size_t(qi + 1) * H * k::kAttnDv),
                 want, 2e-3, 1e-2, "sparse_attn query " + std::to_string(qi) + " splits " + std::to_string(forced_splits));
  }
}

TEST(KernelsGpu, SparseAttentionSplitKvEqualsReference) {
  REQUIRE_GPU();
  check_sparse_attn(0, k::KvFormat::bf16);
}
TEST(KernelsGpu, SparseAttentionOneSplitEqualsReference) {
  REQUIRE_GPU();
  check_sparse_attn(1, k::KvFormat::bf16);
}
TEST(KernelsGpu, SparseAttentionFp8KvRowsEqualReferenceOnDequantisedRows) {
  REQUIRE_GPU();
  check_sparse_attn(0, k::KvFormat::fp8);
}

TEST(KernelsGpu, CopyReproducesTheSourceBytes) {
  REQUIRE_GPU();
  const size_t bytes = (size_t(64) << 20) + 4096;
  std::vector<uint32_t> src(bytes / 4);
  for (size_t i = 0; i < src.size(); ++i) src[i] = uint32_t(i * 2654435761u);
  Dev<uint32_t> ds(src), dd(src.size());
  run_sync(k::plan_copy(dd.p, ds.p, bytes));
  EXPECT_EQ(dd.get(), src);
}

TEST(KernelsGpu, ReadStreamXorsEachCtasChunkLikeTheReference) {
  REQUIRE_GPU();
  const size_t bytes = (size_t(64) << 20) + 4096;  // a short last chunk
  std::vector<uint32_t> src(bytes / 4);
  for (size_t i = 0; i < src.size(); ++i) src[i] = uint32_t(i * 2654435761u);
  Dev<uint32_t> ds(src), dout((bytes + k::kStreamCtaBytes - 1) / k::kStreamCtaBytes);
  run_sync(k::plan_read(dout.p, ds.p, bytes));
  const auto want = cpu::xor_words_per_chunk(reinterpret_cast<const uint8_t*>(src.data()), bytes, k::kStreamCtaBytes);
  EXPECT_EQ(dout.get(), want);
}

TEST(KernelsGpu, CublasGemmEqualsReferenceProduct) {
  REQUIRE_GPU();
  // C = A · B, column-major, BF16 in, FP32 accumulation, BF16 out
  const int M = 256, N = 192, K = 128;
  const auto Ab = to_bf16(randn(size_t(M) * K, 71)), Bb = to_bf16(randn(size_t(K) * N, 72));
  const auto A = from_bf16(Ab), B = from_bf16(Bb);
  Dev<uint16_t> dA(Ab), dB(Bb), dC(size_t(M) * N);
  run_sync(k::plan_gemm_bf16(M, N, K, dA.p, dB.p, dC.p));
  const auto C = from_bf16(dC.get());
  std::vector<float> want(size_t(M) * N);
  for (int j = 0; j < N; ++j)
    for (int i = 0; i < M; ++i) {
      double s = 0;
      for (int kk = 0; kk < K; ++kk) s += double(A[size_t(kk) * M + i]) * B[size_t(j) * K + kk];
      want[size_t(j) * M + i] = float(s);
    }
  expect_close(C, want, 0.05, 1e-2, "gemm");
}

TEST(KernelsGpu, EveryCtaRecordsItsSmAndAnOrderedInterval) {
  REQUIRE_GPU();
  const size_t bytes = size_t(32) << 20;
  Dev<uint8_t> src(bytes), dst(bytes);
  const auto plan = k::plan_copy(dst.p, src.p, bytes);
  const uint64_t ctas = plan[0].info.cta_count();
  std::vector<k::CtaStamp> zero(ctas);
  Dev<k::CtaStamp> stamps(zero);
  std::vector<k::CtaStamp*> bufs{stamps.p};
  k::run(plan, nullptr, &bufs);
  k::check(cudaDeviceSynchronize(), "copy");
  const int sms = k::sm_count();
  uint64_t lo = UINT64_MAX, hi = 0;
  for (const auto& s : stamps.get()) {
    ASSERT_GT(s.start_ns, 0u);
    ASSERT_GE(s.end_ns, s.start_ns);
    ASSERT_LT(s.sm, uint32_t(sms));
    lo = std::min(lo, s.start_ns);
    hi = std::max(hi, s.end_ns);
  }
  EXPECT_LT(hi - lo, uint64_t(1e9)) << "one 32 MiB copy spans less than a second";
}
