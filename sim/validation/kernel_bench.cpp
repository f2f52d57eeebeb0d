// SPDX-License-Identifier: Apache-2.0
#include "sim/validation/kernel_bench.hpp"

#include <algorithm>
#include <stdexcept>

#include "sim/engine/simulation.hpp"
#include "traces/generators/emulate.hpp"
#include "traces/kernel_geometry.hpp"

namespace indexsim::sim {

using config::Rule;
namespace geo = trace::geometry;

namespace {

struct KernelShapeKeys {
  const char* kernel;
  const char* keys;
};
constexpr KernelShapeKeys kKernelShapes[] = {
    {"copy", "bytes [ctas | ctas_per_sm] [threads] [vector_bytes] [sources: 0|1|2] (bytes: an array; sources 2: STREAM's Add, 0: a fill)"},
    {"read", "bytes [ctas | ctas_per_sm] [threads] [vector_bytes] [sources: 1|2] (bytes: an array; sources 2: STREAM's Dot)"},
    {"gemm", "m n k [dtype: bf16|fp16|fp8|fp4|tf32|fp32]"},
    {"mla_decode", "batch heads s_q seqlen (BF16 KV, FlashMLA's dense kernel)"},
    {"sparse_mla_decode", "batch heads s_q topk context [kv: fp8|bf16] [seed] (the project's split-KV kernel)"},
    {"flashmla_sparse_decode", "batch heads s_q topk context [crossover: true|false] [seed] (FlashMLA's, FP8 KV)"},
    {"all_reduce", "bytes gpus (NCCL; nccl-tests' size)"},
    {"all_gather", "bytes gpus"},
    {"reduce_scatter", "bytes gpus"},
    {"all_to_all", "bytes gpus"},
    {"ep_dispatch", "tokens hidden topk experts gpus [skew] [low_latency: true|false] (DeepEP intranode normal or low-latency, FP8)"},
    {"ep_combine", "tokens hidden topk experts gpus [skew] [low_latency: true|false] (DeepEP intranode normal or low-latency, BF16)"},
};

trace::KernelKind collective_kind(const std::string& k) { return trace::kernel_kind(k); }

trace::Precision read_dtype(const config::Node& n, const std::string& fallback) {
  const std::string d = n.opt<std::string>("dtype", fallback, Rule::choice({"fp32", "tf32", "bf16", "fp16", "fp8", "fp4"}));
  for (int p = 0; p < trace::kPrecisionCount; ++p)
    if (d == trace::to_string(trace::Precision(p))) return trace::Precision(p);
  n.fail("dtype", d, "a precision");
}

// `n` launches of the trace's kernels on the same tensors, each launch after every kernel of the
// one before (a benchmark's timed loop over one kernel).
void repeat_launches(trace::TraceData& t, uint32_t n) {
  const auto nk = static_cast<uint32_t>(t.kernels.size());
  const size_t na = t.accesses.size();
  for (uint32_t i = 1; i < n; ++i) {
    const uint32_t off = i * nk;
    for (uint32_t j = 0; j < nk; ++j) {
      trace::KernelRecord k = t.kernels[j];
      k.id = off + j;
      for (uint32_t& d : k.deps) d += off;
      for (uint32_t p = off - nk; p < off; ++p) k.deps.push_back(p);
      t.kernels.push_back(std::move(k));
    }
    for (size_t j = 0; j < na; ++j) {
      trace::AccessRecord a = t.accesses[j];
      a.kernel += off;
      t.accesses.push_back(std::move(a));
    }
  }
}

}  // namespace

std::string kernel_case_usage() {
  std::string s;
  for (const auto& k : kKernelShapes) s += std::string("  ") + k.kernel + ": " + k.keys + "\n";
  s += "  every kernel: [launches] (back to back on the same buffers; the figure is their time over their count)\n";
  return s;
}

KernelCase read_kernel_case(const std::string& kernel, const config::Node& shape) {
  KernelCase c;
  c.kernel = kernel;
  c.launches = shape.opt<uint32_t>("launches", 1, Rule::range(1, 16));
  if (kernel == "copy" || kernel == "read") {
    c.bytes = shape.req<uint64_t>("bytes", Rule::range(16, 1e15));
    c.ctas = shape.opt<uint64_t>("ctas", 0, Rule::range(0, 2147483647));  // CUDA's gridDim.x limit, 2^31 - 1
    // A grid sized from the GPU, as a benchmark that asks for its SM count does (BabelStream's Dot: 4).
    c.ctas_per_sm = shape.opt<uint32_t>("ctas_per_sm", 0, Rule::range(0, 64));
    if (c.ctas && c.ctas_per_sm) shape.fail("ctas_per_sm", std::to_string(c.ctas_per_sm), "not with ctas: one grid size or the other");
    // The CTA size and the bytes a thread moves in one iteration (one load and one store): a
    // benchmark's own launch (BabelStream: 1024 threads, one double each) rather than the default.
    const trace::CopyShape dflt;
    c.copy_threads = shape.opt<uint32_t>("threads", dflt.threads, Rule::range(32, 1024));
    if (c.copy_threads % 32) shape.fail("threads", std::to_string(c.copy_threads), "a whole number of warps (a multiple of 32)");
    c.copy_vector_bytes = shape.opt<uint32_t>("vector_bytes", dflt.vector_bytes, Rule::power_of_two_up_to(32));  // one load a thread
    // 0: nothing read, one array written (a fill: gpu-stream's init).
    c.copy_sources = shape.opt<uint32_t>("sources", dflt.sources, Rule::range(kernel == "copy" ? 0 : 1, 2));
  } else if (kernel == "gemm") {
    c.m = shape.req<uint64_t>("m", Rule::range(1, 1 << 24));
    c.n = shape.req<uint64_t>("n", Rule::range(1, 1 << 24));
    c.k = shape.req<uint64_t>("k", Rule::range(1, 1 << 24));
    c.dtype = read_dtype(shape, "bf16");
  } else if (kernel == "mla_decode") {
    auto& d = c.dense;
    d.batch = shape.req<uint32_t>("batch", Rule::range(1, 65535));
    d.heads = shape.req<uint32_t>("heads", Rule::range(1, 1024));
    d.q_per_seq = shape.req<uint32_t>("s_q", Rule::range(1, 64));
    d.seqlen = shape.req<uint64_t>("seqlen", Rule::range(1, double(UINT32_MAX)));
  } else if (kernel == "sparse_mla_decode" || kernel == "flashmla_sparse_decode") {
    auto& sp = c.sparse;
    sp.batch = shape.req<uint32_t>("batch", Rule::range(1, 65535));
    sp.heads = shape.req<uint32_t>("heads", Rule::range(1, 1024));
    sp.q_per_seq = shape.req<uint32_t>("s_q", Rule::range(1, 64));
    sp.topk = shape.req<uint32_t>("topk", Rule::range(1, 1 << 20));
    sp.context = shape.req<uint64_t>("context", Rule::range(1, double(UINT32_MAX)));
    if (sp.context < sp.topk) shape.fail("context", std::to_string(sp.context), "must be at least topk");
    const std::string kv = kernel == "flashmla_sparse_decode"
                               ? "fp8"
                               : shape.opt<std::string>("kv", "fp8", Rule::choice({"fp8", "bf16"}));
    c.crossover = kernel == "flashmla_sparse_decode" && shape.opt<bool>("crossover", true);
    // FlashMLA's FP8 layout (512 e4m3 + 4 fp32 scales + 64 bf16 RoPE), or 576 BF16 values.
    sp.kv_row_bytes = kv == "fp8" ? geo::kKvFp8RowBytes : geo::kKvBf16RowBytes;
    sp.seed = shape.opt<uint64_t>("seed", 1);
  } else if (is_collective(kernel)) {
    c.bytes = shape.req<uint64_t>("bytes", Rule::range(1, 1e13));
    c.gpus = shape.req<uint32_t>("gpus", Rule::range(2, 1024));
  } else if (kernel == "ep_dispatch" || kernel == "ep_combine") {
    auto& e = c.ep;
    e.op = collective_kind(kernel);
    e.name = kernel;
    e.tokens = shape.req<uint64_t>("tokens", Rule::range(1, 1 << 24));
    e.hidden = shape.req<uint64_t>("hidden", Rule::range(1, 1 << 20));
    e.topk = shape.req<uint32_t>("topk", Rule::range(1, 64));
    e.experts = shape.req<uint32_t>("experts", Rule::range(1, 1 << 16));
    e.gpus = c.gpus = shape.req<uint32_t>("gpus", Rule::range(2, 1024));
    e.load_skew = shape.opt<double>("skew", 1.0, Rule::range(1, 1024));
    e.low_latency = shape.opt<bool>("low_latency", false);
    if (e.experts % e.gpus) shape.fail("experts", std::to_string(e.experts), "must divide over gpus (" + std::to_string(e.gpus) + ")");
    if (e.topk > e.experts) shape.fail("topk", std::to_string(e.topk), "must be at most experts");
  } else {
    throw std::invalid_argument("unknown kernel '" + kernel + "'; the kernels and their shape keys:\n" +
                                kernel_case_usage());
  }
  return c;
}

double nominal_flops(const KernelCase& c) {
  if (c.kernel == "gemm") return 2.0 * double(c.m) * double(c.n) * double(c.k);
  // FlashMLA's count: 2 · queries · heads · topk · (d_qk + d_v), d_qk = 576, d_v = 512.
  constexpr double dqv = geo::kAttnDk + geo::kAttnDv;
  if (c.kernel == "mla_decode")
    return 2.0 * c.dense.batch * c.dense.q_per_seq * c.dense.heads * double(c.dense.seqlen) * dqv;
  if (c.kernel == "sparse_mla_decode" || c.kernel == "flashmla_sparse_decode")
    return 2.0 * c.sparse.batch * c.sparse.q_per_seq * c.sparse.heads * double(c.sparse.topk) * dqv;
  return 0;
}

bool is_collective(const std::string& k) {
  return k == "all_reduce" || k == "all_gather" || k == "reduce_scatter" || k == "all_to_all";
}

double bus_factor(const KernelCase& c) {
  const double n = c.gpus;
  return c.kernel == "all_reduce" ? 2 * (n - 1) / n : (n - 1) / n;
}

double nominal_bytes(const KernelCase& c) {
  if (is_collective(c.kernel)) return double(c.bytes) * bus_factor(c);
  if (c.kernel == "ep_dispatch" || c.kernel == "ep_combine") return double(c.ep.received_bytes());
  if (c.kernel == "copy") return double(c.copy_sources + 1) * double(c.bytes);  // every array read, and the one written
  if (c.kernel == "read") return double(c.copy_sources) * double(c.bytes);
  if (c.kernel == "mla_decode") {  // the BF16 KV cache read once, Q (BF16) and O (BF16)
    const double q = double(c.dense.batch) * c.dense.q_per_seq;
    return double(c.dense.batch) * double(c.dense.seqlen) * geo::kKvBf16RowBytes +
           q * c.dense.heads * (geo::kAttnDk + geo::kAttnDv) * 2.0;
  }
  if (c.kernel == "sparse_mla_decode" || c.kernel == "flashmla_sparse_decode") {  // KV rows selected by every query, its Q (BF16) and O (BF16)
    const double q = double(c.sparse.batch) * c.sparse.q_per_seq;
    return q * c.sparse.topk * c.sparse.kv_row_bytes + q * c.sparse.heads * (geo::kAttnDk + geo::kAttnDv) * 2.0;
  }
  if (c.kernel == "gemm") {
    const double in_bits = c.dtype == trace::Precision::fp32 || c.dtype == trace::Precision::tf32 ? 32
                                                                                                  : trace::precision_bits(c.dtype);
    const double out_bytes = in_bits >= 32 ? 4 : 2;
    return (double(c.m) * c.k + double(c.n) * c.k) * in_bits / 8 + double(c.m) * c.n * out_bytes;
  }
  return 0;
}

namespace {

trace::TraceData build_one_launch(const KernelCase& c, const trace::LaunchLimits& limits) {
  if (c.kernel == "copy" || c.kernel == "read") {
    trace::CopyShape shape;
    shape.ctas = c.ctas_per_sm ? c.ctas_per_sm * limits.units : uint32_t(c.ctas);
    shape.threads = c.copy_threads;
    shape.vector_bytes = c.copy_vector_bytes;
    shape.sources = c.copy_sources;
    shape.write = c.kernel == "copy";
    return trace::emulate_copy(c.bytes, shape);
  }
  if (c.kernel == "gemm") return trace::emulate_gemm(c.m, c.n, c.k, c.dtype, limits);
  if (c.kernel == "sparse_mla_decode") return trace::emulate_sparse_mla_decode(c.sparse, limits);
  if (c.kernel == "flashmla_sparse_decode") return trace::emulate_flashmla_sparse_decode(c.sparse, limits, c.crossover);
  if (c.kernel == "mla_decode") return trace::emulate_mla_decode(c.dense, limits);
  if (is_collective(c.kernel)) {
    trace::CollectiveShape s;
    s.op = collective_kind(c.kernel);
    s.name = c.kernel;
    s.bytes = c.bytes;
    s.gpus = c.gpus;
    return trace::emulate_collective(s, limits);
  }
  if (c.kernel == "ep_dispatch" || c.kernel == "ep_combine") return trace::emulate_expert_parallel(c.ep, limits);
  throw std::invalid_argument("unknown kernel '" + c.kernel + "'");
}

}  // namespace

trace::TraceData build_kernel_trace(const KernelCase& c, const trace::LaunchLimits& limits) {
  trace::TraceData t = build_one_launch(c, limits);
  repeat_launches(t, c.launches);
  return t;
}

const std::vector<std::string>& figure_units() {
  static const std::vector<std::string> u{"TFLOP/s", "GB/s", "TB/s", "us", "ms"};
  return u;
}

double KernelRun::figure(const std::string& unit) const {
  const double s = kernel_ns * 1e-9;
  if (unit == "us") return kernel_ns / 1e3;
  if (unit == "ms") return kernel_ns / 1e6;
  if (s <= 0) throw std::runtime_error("the kernel took no time: no " + unit + " figure");
  if (unit == "TFLOP/s") {
    if (flops <= 0) throw std::invalid_argument("a TFLOP/s figure needs a kernel that counts FLOPs");
    return flops / s / 1e12;
  }
  if (unit == "GB/s" || unit == "TB/s") {
    if (bytes <= 0) throw std::invalid_argument("a " + unit + " figure needs a kernel that counts bytes");
    return bytes / s / (unit == "GB/s" ? 1e9 : 1e12);
  }
  std::string choices;
  for (const auto& x : figure_units()) choices += (choices.empty() ? "" : ", ") + x;
  throw std::invalid_argument("unknown unit '" + unit + "' (one of " + choices + ")");
}

KernelRun run_kernel_case(const KernelCase& c, const std::string& hardware, const std::vector<std::string>& sets,
                          bool fast, const std::string& timeline) {
  RunSpec spec;
  spec.hardware = hardware;
  spec.sets = sets;
  spec.fast = fast;
  spec.timeline = timeline;
  spec.build_trace = [&c](const trace::LaunchLimits& lim) { return build_kernel_trace(c, lim); };
  spec.reuse = c.launches == 1;
  KernelRun k;
  k.run = simulate(spec);
  double first = 0, last = 0;
  for (size_t i = 0; i < k.run.kernels.size(); ++i) {
    const auto& r = k.run.kernels[i];
    first = i == 0 ? r.start_ns : std::min(first, r.start_ns);
    last = std::max(last, r.end_ns);
  }
  k.kernel_ns = (last - first) / c.launches;
  k.flops = nominal_flops(c);
  k.bytes = nominal_bytes(c);
  k.run.metric("kernel_time", k.kernel_ns / 1e3, "us");
  if (k.bytes > 0 && k.kernel_ns > 0) k.run.metric("achieved_bandwidth", k.figure("GB/s"), "GB/s");
  if (k.flops > 0 && k.kernel_ns > 0) k.run.metric("achieved_tflops", k.figure("TFLOP/s"), "TFLOP/s");
  return k;
}

}  // namespace indexsim::sim
