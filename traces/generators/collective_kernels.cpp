// SPDX-License-Identifier: Apache-2.0
#include "traces/generators/collective_kernels.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "traces/generators/emulate.hpp"

namespace indexsim::trace {

using config::Rule;
using detail::Builder;
using detail::ceil_div;

namespace {

constexpr const char* kAlgoNames[kCollAlgos] = {"ring", "tree", "nvls"};
constexpr const char* kProtoNames[kCollProtos] = {"ll", "ll128", "simple"};

void read_triple(const config::Node& n, const std::string& key, double (&out)[kCollProtos]) {
  const auto v = n.req_list<double>(key, Rule::non_negative());
  if (v.size() != kCollProtos) n.fail(key, std::to_string(v.size()) + " values", "three values: ll, ll128, simple");
  for (int p = 0; p < kCollProtos; ++p) out[p] = v[p];
}

// The choices the library has for `op` on this fabric.
bool algo_supports(CollAlgo a, KernelKind op, const FabricLimits& f) {
  if (a == CollAlgo::ring) return true;
  if (op != KernelKind::all_reduce) return false;  // tree and NVLS: all-reduce only, here
  return a == CollAlgo::tree || f.nvls;
}
bool proto_supports(CollAlgo a, CollProto p) { return a != CollAlgo::nvls || p == CollProto::simple; }

// What one GPU moves for `op` under algorithm `a`, as multiples of the message size S: its
// pipeline steps, the payload it sends over its links, and its local input and output.
struct Movement {
  uint32_t steps;
  double wire, in, out;
};
Movement movement(KernelKind op, CollAlgo a, uint32_t n, const FabricLimits& f) {
  const double share = double(n - 1) / n;
  switch (op) {
    case KernelKind::all_reduce:
      // Ring: reduce-scatter then all-gather, 2(n-1) steps of S/n. Tree (a chain inside one
      // domain): S up and S down. NVLS: each GPU sends its input once to the switch, which
      // reduces and multicasts; the multimem path carries nvls_wire_factor bytes a byte, and
      // the switch's reductions keep the links busy 1/nvls_efficiency as long as those bytes.
      if (a == CollAlgo::ring) return {2 * (n - 1), 2 * share, 1, 1};
      if (a == CollAlgo::tree) return {2 * (n - 1), 2.0, 1, 1};
      return {1, f.nvls_wire_factor / f.nvls_efficiency, 1, 1};
    case KernelKind::all_gather: return {n - 1, share, 1.0 / n, 1};
    case KernelKind::reduce_scatter: return {n - 1, share, 1, 1.0 / n};
    case KernelKind::all_to_all: return {1, share, 1, 1};  // point-to-point to every peer at once
    default: break;
  }
  throw std::invalid_argument(std::string("not a collective: ") + to_string(op));
}

// The bandwidth NCCL expects of a choice, as a share of the links' (tuning.cc's model refinements
// and ncclTopoGetAlgoTime's tree correction at floor(log2(bytes / 64))).
double nccl_share(CollAlgo a, CollProto p, uint64_t bytes, const FabricLimits& f) {
  if (a == CollAlgo::nvls) return 1;  // its efficiency is in its wire bytes already
  double share = f.nccl_share[int(a)][int(p)];
  const auto& corr = f.tree_correction[int(p)];
  if (a == CollAlgo::tree && !corr.empty()) {
    int i = -1;
    for (uint64_t v = bytes >> 6; v; v >>= 1) ++i;
    if (i < int(corr.size())) share *= corr[std::max(i, 0)];
  }
  return share;
}

double latency_us(CollAlgo a, CollProto p, uint32_t steps, uint32_t n, const FabricLimits& f) {
  // NCCL's model (tuning.cc): a ring pays a step latency per step; a chain 2(n-1) hops; NVLS one
  // switch operation, with no base term.
  if (a == CollAlgo::nvls) return f.step_latency_us[int(a)][int(p)];
  if (a == CollAlgo::tree) return f.base_latency_us[int(a)][int(p)] + 2.0 * (n - 1) * f.step_latency_us[int(a)][int(p)];
  return f.base_latency_us[int(a)][int(p)] + steps * f.step_latency_us[int(a)][int(p)];
}

// NCCL's NVLS all-reduce (src/enqueue.cc, the kernel in all_reduce.h): within one domain every GPU
// is a head that reduces one chunk of each loop iteration of a channel, so an iteration covers
// gpus x chunk bytes, and the chunk shrinks for small messages so that more of the channels x
// heads have work: 64 KiB below 64 iterations of all of them, then 32 KiB below 8, 16 KiB below 2.
uint64_t nvls_chunk_bytes(uint64_t bytes, uint32_t gpus, const FabricLimits& f) {
  const uint64_t ops = uint64_t(f.nvls_channels) * gpus;
  uint64_t chunk = f.nvls_chunk_bytes;
  if (bytes < 64 * ops * chunk && chunk > 65536) chunk = 65536;
  if (bytes < 8 * ops * chunk && chunk > 32768) chunk = 32768;
  if (bytes < 2 * ops * chunk && chunk > 16384) chunk = 16384;
  return chunk;
}

void check_group(uint32_t gpus, const FabricLimits& f, const char* what) {
  if (f.domain_gpus == 0)
    throw std::invalid_argument(std::string(what) + " over " + std::to_string(gpus) +
                                " GPUs needs a fabric: the hardware file has no fabric section");
  if (gpus < 2) throw std::invalid_argument(std::string(what) + ": a group of " + std::to_string(gpus) + " GPU needs no communication");
  if (gpus > f.domain_gpus)
    throw std::invalid_argument(std::string(what) + " over " + std::to_string(gpus) + " GPUs: the fabric connects " +
                                std::to_string(f.domain_gpus) +
                                " (fabric.gpus_per_switch_domain); traffic between domains (NICs) is not modelled");
}

void check_expert_parallel(const ExpertParallelShape& e, const FabricLimits& f) {
  check_group(e.gpus, f, to_string(e.op));
  if (e.op != KernelKind::ep_dispatch && e.op != KernelKind::ep_combine)
    throw std::invalid_argument(std::string("not an expert-parallel kernel: ") + to_string(e.op));
  if (e.tokens == 0 || e.hidden == 0) throw std::invalid_argument(e.name + ": no tokens or no hidden size");
  if (e.experts % e.gpus) throw std::invalid_argument(e.name + ": " + std::to_string(e.experts) + " experts do not divide over " + std::to_string(e.gpus) + " GPUs");
  if (e.load_skew < 1) throw std::invalid_argument(e.name + ": load skew " + std::to_string(e.load_skew) + " below 1");
}

// A contiguous run of `bytes` per CTA at `base`, CTA c `cta_stride` further; nothing when empty.
void run(Builder& b, uint32_t k, uint32_t tensor, bool write, uint32_t ctas, uint64_t bytes, uint64_t base,
         uint64_t cta_stride) {
  constexpr uint64_t kElem = 16;  // elements of 16 B, contiguous: the replay issues them as runs
  b.strided(k, tensor, write, 0, ctas, base, int64_t(cta_stride), kElem, ceil_div(bytes, kElem), kElem);
}

// What every channel does, slice by slice as NCCL's pipeline does (a slice is one of the receive
// buffer's NCCL_STEPS = 8 slots): read its input, send its outgoing bytes, read what the peers
// stored into its receive buffer (by symmetry as much as it sends), write its output. The peers'
// stores themselves are their SMs' work: they reach this GPU's memory without this GPU's SMs
// issuing them, and are not simulated (the memory has the headroom: NVLink is a tenth of HBM).
struct ChannelTraffic {
  uint64_t in, wire, incoming, out, fifo;  // bytes a channel; fifo: its receive buffer (0: none)
};
constexpr uint64_t kFifoSlots = 8;  // NCCL_STEPS
void grow(Builder& b, uint32_t tensor, uint64_t bytes) {
  auto& t = b.t.tensors[tensor];
  t.bytes = std::max(t.bytes, bytes);
}

void emit_channels(Builder& b, uint32_t k, uint32_t ctas, const ChannelTraffic& c, const CommBuffers& buf) {
  grow(b, buf.in, c.in * ctas);
  grow(b, buf.out, c.out * ctas);
  grow(b, buf.peer, c.wire * ctas);
  const bool fifo_used = c.fifo > 0 && c.incoming > 0;
  if (fifo_used) grow(b, buf.fifo, c.fifo * ctas);
  const uint64_t slot = std::max<uint64_t>(16, (c.fifo ? c.fifo : 4u << 20) / kFifoSlots);
  const uint64_t slices = std::max<uint64_t>(1, ceil_div(std::max({c.in, c.wire, c.incoming, c.out}), slot));
  const auto share = [&](uint64_t bytes, uint64_t j) {  // bytes of slice j, and where it starts
    const uint64_t per = ceil_div(bytes, slices), lo = std::min(bytes, j * per);
    return std::pair<uint64_t, uint64_t>{std::min(bytes, lo + per) - lo, lo};
  };
  for (uint64_t j = 0; j < slices; ++j) {
    if (auto [n, at] = share(c.in, j); n) run(b, k, buf.in, false, ctas, n, at, c.in);
    if (auto [n, at] = share(c.wire, j); n) run(b, k, buf.peer, true, ctas, n, at, c.wire);
    if (fifo_used)
      if (auto [n, at] = share(c.incoming, j); n)
        run(b, k, buf.fifo, false, ctas, std::min(n, c.fifo), (j % kFifoSlots) * slot % c.fifo, c.fifo);
    if (auto [n, at] = share(c.out, j); n) run(b, k, buf.out, true, ctas, n, at, c.out);
  }
}

}  // namespace

CommBuffers make_comm_buffers(Builder& b, const std::string& name, int layer) {
  CommBuffers c;
  c.in = b.tensor(name + ".in", TensorClass::activations, layer, 1);
  c.out = b.tensor(name + ".out", TensorClass::activations, layer, 1);
  c.peer = b.tensor(name + ".peer", TensorClass::peer, layer, 1);
  c.fifo = b.tensor(name + ".fifo", TensorClass::scratch, layer, 1);
  return c;
}

const char* to_string(CollAlgo a) { return kAlgoNames[int(a)]; }
const char* to_string(CollProto p) { return kProtoNames[int(p)]; }

FabricLimits read_fabric_limits(const config::Node& hw) {
  FabricLimits f;
  const auto fab = hw.opt_child("fabric");
  if (!fab) return f;
  f.domain_gpus = fab->req<uint32_t>("gpus_per_switch_domain", Rule::range(2, 1024));
  f.links = fab->req<uint32_t>("links", Rule::range(1, 64));
  f.link_effective_GBps = fab->req<double>("link_effective_GBps", Rule::positive());
  f.switch_latency_ns = fab->req<double>("switch_latency_ns", Rule::non_negative());
  f.nvls = fab->req<bool>("nvls");
  f.nvls_wire_factor = fab->req<double>("nvls_wire_factor", Rule::range(1, 4));
  // Only a switch with NVLS has an efficiency for it.
  f.nvls_efficiency = f.nvls ? fab->req<double>("nvls_efficiency", Rule::range(0.05, 1))
                             : fab->opt<double>("nvls_efficiency", 1.0, Rule::range(0.05, 1));
  const config::Node c = hw.child("collectives");
  for (int a = 0; a < kCollAlgos; ++a) {
    const config::Node al = c.child("latency_us").child(kAlgoNames[a]);
    read_triple(al, "base", f.base_latency_us[a]);
    read_triple(al, "step", f.step_latency_us[a]);
  }
  read_triple(c, "wire_bytes_per_payload_byte", f.wire_factor);
  for (int p = 0; p < kCollProtos; ++p)
    if (f.wire_factor[p] < 1) c.fail("wire_bytes_per_payload_byte", std::to_string(f.wire_factor[p]), "each at least 1");
  const config::Node share = c.child("nccl_bandwidth_share");
  for (int a : {int(CollAlgo::ring), int(CollAlgo::tree)}) {
    read_triple(share, kAlgoNames[a], f.nccl_share[a]);
    for (int p = 0; p < kCollProtos; ++p)
      if (f.nccl_share[a][p] <= 0 || f.nccl_share[a][p] > 1)
        share.fail(kAlgoNames[a], std::to_string(f.nccl_share[a][p]), "each in (0, 1]");
  }
  const config::Node corr = c.child("tree_correction");
  for (int p = 0; p < kCollProtos; ++p) {
    f.tree_correction[p] = corr.req_list<double>(kProtoNames[p], Rule::range(0.01, 1));
    if (f.tree_correction[p].empty() || f.tree_correction[p].size() > 64)
      corr.fail(kProtoNames[p], std::to_string(f.tree_correction[p].size()) + " values", "1 to 64 values, one per power of two from 64 B");
  }
  double v[kCollProtos];
  read_triple(c, "threads", v);
  for (int p = 0; p < kCollProtos; ++p) f.threads[p] = uint32_t(v[p]);
  read_triple(c, "thread_threshold_bytes", v);
  for (int p = 0; p < kCollProtos; ++p) f.thread_threshold_bytes[p] = uint32_t(v[p]);
  read_triple(c, "fifo_KiB", v);
  for (int p = 0; p < kCollProtos; ++p) f.fifo_bytes[p] = uint64_t(v[p] * 1024);
  f.max_channels = c.req<uint32_t>("max_channels", Rule::range(1, 128));
  const config::Node nv = c.child("nvls");
  f.nvls_channels = nv.req<uint32_t>("channels", Rule::range(1, 128));
  f.nvls_threads = nv.req<uint32_t>("threads", Rule::range(32, 1024));
  f.nvls_chunk_bytes = uint64_t(nv.req<uint32_t>("chunk_KiB", Rule::range(16, 65536))) * 1024;
  f.ep_sms = c.req<uint32_t>("expert_parallel_sms", Rule::range(2, 1024));
  if (f.ep_sms % 2) c.fail("expert_parallel_sms", std::to_string(f.ep_sms), "must be even (DeepEP pairs a sender and a receiver SM per channel)");
  const std::string algo = c.opt<std::string>("algorithm", "auto", Rule::choice({"auto", "ring", "tree", "nvls"}));
  const std::string proto = c.opt<std::string>("protocol", "auto", Rule::choice({"auto", "ll", "ll128", "simple"}));
  for (int a = 0; a < kCollAlgos; ++a)
    if (algo == kAlgoNames[a]) f.pinned_algo = a;
  for (int p = 0; p < kCollProtos; ++p)
    if (proto == kProtoNames[p]) f.pinned_proto = p;
  if (f.pinned_algo == int(CollAlgo::nvls) && !f.nvls) c.fail("algorithm", algo, "the fabric has no NVLS (fabric.nvls: false)");
  return f;
}

CollectivePlan plan_collective(KernelKind op, uint64_t bytes, uint32_t gpus, const FabricLimits& f) {
  check_group(gpus, f, to_string(op));
  if (bytes == 0) throw std::invalid_argument(std::string(to_string(op)) + ": message of 0 bytes");
  CollectivePlan best;
  best.predicted_us = INFINITY;
  for (int a = 0; a < kCollAlgos; ++a) {
    const CollAlgo algo = CollAlgo(a);
    if (!algo_supports(algo, op, f) || (f.pinned_algo >= 0 && f.pinned_algo != a)) continue;
    for (int p = 0; p < kCollProtos; ++p) {
      const CollProto proto = CollProto(p);
      if (!proto_supports(algo, proto) || (f.pinned_proto >= 0 && f.pinned_proto != p)) continue;
      // All-to-all goes point to point, which NCCL runs in its Simple protocol.
      if (op == KernelKind::all_to_all && proto != CollProto::simple) continue;
      const Movement m = movement(op, algo, gpus, f);
      CollectivePlan c;
      c.algo = algo;
      c.proto = proto;
      c.steps = m.steps;
      const double wf = algo == CollAlgo::nvls ? 1.0 : f.wire_factor[p];
      c.wire_bytes = uint64_t(std::ceil(double(bytes) * m.wire * wf));
      c.in_bytes = uint64_t(std::ceil(double(bytes) * m.in));
      c.out_bytes = uint64_t(std::ceil(double(bytes) * m.out));
      c.latency_us = latency_us(algo, proto, m.steps, gpus, f);
      c.predicted_us = c.latency_us + double(bytes) * m.wire / (f.total_GBps() * nccl_share(algo, proto, bytes, f) * 1e3);
      if (algo == CollAlgo::nvls) {
        // NVLS runs its own channels, and channel c's first iteration starts c x gpus x chunk
        // into the message: those past its end have nothing to do.
        c.threads = f.nvls_threads;
        c.chunk_bytes = nvls_chunk_bytes(bytes, gpus, f);
        c.channels = uint32_t(std::min<uint64_t>(f.nvls_channels, ceil_div(bytes, gpus * c.chunk_bytes)));
      } else {
        // As many channels as the message keeps busy (NCCL: bytes per thread above a threshold,
        // the ring LL threshold times the ranks), at most max_channels.
        c.threads = f.threads[p];
        const double per_thread = double(f.thread_threshold_bytes[p]) *
                                  (algo == CollAlgo::ring && proto == CollProto::ll ? gpus : 1);
        const double want = std::ceil(double(bytes) / (per_thread * f.threads[p]));
        c.channels = uint32_t(std::clamp(want, 1.0, double(f.max_channels)));
      }
      if (c.predicted_us < best.predicted_us) best = c;
    }
  }
  if (!std::isfinite(best.predicted_us))
    throw std::invalid_argument(std::string(to_string(op)) + ": the pinned algorithm/protocol (collectives.algorithm " +
                                (f.pinned_algo >= 0 ? kAlgoNames[f.pinned_algo] : "auto") + ", protocol " +
                                (f.pinned_proto >= 0 ? kProtoNames[f.pinned_proto] : "auto") + ") cannot run it");
  return best;
}

uint32_t emit_collective(Builder& b, const CollectiveShape& s, const FabricLimits& f, const CommBuffers& buf,
                         const std::vector<uint32_t>& deps, uint32_t stream, CollectivePlan* plan) {
  const CollectivePlan p = plan_collective(s.op, s.bytes, s.gpus, f);
  if (plan) *plan = p;
  KernelShape ks;
  ks.threads = p.threads;
  ks.regs_per_thread = 96;  // NCCL builds its device code with -maxrregcount=96
  const uint32_t k = b.kernel(s.name, s.op, s.layer, {p.channels, 1, 1}, ks, deps, stream);
  b.k(k).wait_ns = uint64_t(std::llround(p.latency_us * 1e3));
  b.k(k).double_buffered = false;
  b.k(k).flops[int(Precision::simt)] =
      s.op == KernelKind::all_reduce || s.op == KernelKind::reduce_scatter ? double(s.bytes) / 2 * (s.gpus - 1) / s.gpus : 0;
  const uint32_t c = p.channels;
  ChannelTraffic t{};
  t.in = ceil_div(p.in_bytes, c);
  t.wire = ceil_div(p.wire_bytes, c);
  t.out = ceil_div(p.out_bytes, c);
  // The peers send as much as this GPU (symmetry). NVLS multicasts straight into the output.
  t.incoming = p.algo == CollAlgo::nvls ? 0 : t.wire;
  t.fifo = f.fifo_bytes[int(p.proto)];
  emit_channels(b, k, c, t, buf);
  return k;
}

double ExpertParallelShape::expected_ranks() const {
  // Top-k of `experts` chosen uniformly, experts/gpus on each rank: a rank is missed with
  // probability C(E - E/n, k) / C(E, k).
  const double per_rank = double(experts) / gpus;
  double miss = 1;
  for (uint32_t i = 0; i < topk; ++i) miss *= std::max(0.0, (experts - per_rank - i) / (double(experts) - i));
  return gpus * (1 - miss);
}

uint64_t ExpertParallelShape::token_bytes() const {
  // DeepEP: dispatch in FP8 with one FP32 scale per 128 values, combine in BF16. A low-latency
  // dispatch message leads with an int4 of the token's source index (internode_ll.cu).
  if (op != KernelKind::ep_dispatch) return 2 * hidden;
  return hidden + ceil_div(hidden, 128) * 4 + (low_latency ? 16 : 0);
}

uint64_t ExpertParallelShape::received_bytes() const {
  const double copies = low_latency ? double(topk) : expected_ranks();
  return uint64_t(std::llround(double(tokens) * copies * double(token_bytes()) * load_skew));
}

uint32_t emit_expert_parallel(Builder& b, const ExpertParallelShape& e, const FabricLimits& f, const CommBuffers& buf,
                              const std::vector<uint32_t>& deps, uint32_t stream) {
  check_expert_parallel(e, f);
  if (e.low_latency) throw std::invalid_argument(e.name + ": a low-latency shape goes to emit_deepep");
  // DeepEP intranode kernels: 768 threads, 8 KiB of TMA buffer a warp (csrc/kernels/intranode.cu);
  // ep_sms CTAs, a sender and a receiver per channel.
  KernelShape ks;
  ks.threads = 768;
  ks.smem_bytes = 8192 * (768 / 32);
  ks.regs_per_thread = 64;
  const uint32_t ctas = f.ep_sms;
  const uint32_t k = b.kernel(e.name, e.op, e.layer, {ctas, 1, 1}, ks, deps, stream);
  // Two handshakes with every peer (counts, then completion), each a switch round trip.
  b.k(k).wait_ns = uint64_t(std::llround(4 * f.switch_latency_ns));
  b.k(k).double_buffered = false;
  // The busiest rank sets the time: its received bytes (skew times the mean) cross its links, and
  // symmetry makes its sent bytes the same. Its own tokens stay local.
  const uint64_t recv = e.received_bytes();
  const uint64_t wire = uint64_t(std::llround(double(recv) * (e.gpus - 1) / e.gpus));
  const uint64_t own = e.tokens * e.token_bytes();
  ChannelTraffic t{};
  t.in = ceil_div(e.op == KernelKind::ep_dispatch ? own : recv, ctas);
  t.out = ceil_div(e.op == KernelKind::ep_dispatch ? recv : own, ctas);
  t.wire = ceil_div(wire, ctas);
  t.incoming = t.wire;
  // DeepEP's NVLink buffers are read back as NCCL's receive buffers are; Simple's size stands for
  // their per-channel chunking.
  t.fifo = f.fifo_bytes[int(CollProto::simple)];
  emit_channels(b, k, ctas, t, buf);
  return k;
}

namespace {
uint32_t emit_deepep_low_latency(Builder& b, const ExpertParallelShape& e, const LaunchLimits& limits,
                                 const CommBuffers& buf, const std::vector<uint32_t>& deps, uint32_t stream) {
  const FabricLimits& f = limits.fabric;
  check_expert_parallel(e, f);
  // DeepEP's low-latency launch (csrc/kernels/internode_ll.cu, dispatch() and combine()): warp
  // groups of an SM = ceil(experts / SMs), 32 / groups warps each, ceil(experts / groups) CTAs of
  // 1024 threads (__launch_bounds__(1024, 1)); one warp group answers for one expert.
  const uint32_t groups = uint32_t(ceil_div(e.experts, limits.units));
  if (groups > 14)  // its receive phase asserts fewer than 15 warp groups an SM
    throw std::invalid_argument(e.name + ": " + std::to_string(e.experts) + " experts over " + std::to_string(limits.units) +
                                " SMs need " + std::to_string(groups) + " warp groups an SM; DeepEP's kernels take at most 14");
  const uint32_t ctas = uint32_t(ceil_div(e.experts, groups));
  KernelShape ks;
  ks.threads = groups * (32 / groups) * 32;
  ks.smem_bytes = 1024;      // its __shared__ counters and top-k staging: well under a KiB
  ks.regs_per_thread = 64;   // __launch_bounds__(1024, 1): 65,536 registers over 1,024 threads
  const double pairs = double(e.tokens) * e.topk * e.load_skew;  // (token, expert) messages
  const double remote = double(e.gpus - 1) / e.gpus;
  const uint64_t msg = e.token_bytes(), bf16 = 2 * e.hidden;
  const uint64_t fp8 = e.hidden + ceil_div(e.hidden, 128) * 4;
  ChannelTraffic send{}, recv{};
  if (e.op == KernelKind::ep_dispatch) {
    // Send: each token read once in BF16 and cast into the send buffer; a warp per top-k expert
    // reads the message back and stores it into the expert's rank (its own: a local store).
    send.in = ceil_div(uint64_t(double(e.tokens) * bf16 + pairs * msg), ctas);
    send.wire = ceil_div(uint64_t(pairs * msg * remote), ctas);
    send.out = ceil_div(uint64_t(double(e.tokens) * msg + pairs * msg / e.gpus), ctas);
    // Receive: each (expert, source rank) pair's messages are copied out of the receive buffer
    // into the expert's packed input (FP8 values and scales).
    recv.incoming = ceil_div(uint64_t(pairs * msg), ctas);
    recv.out = ceil_div(uint64_t(pairs * fp8), ctas);
  } else {
    // Send: each expert's outputs (BF16) go back to their tokens' ranks.
    send.in = ceil_div(uint64_t(pairs * bf16), ctas);
    send.wire = ceil_div(uint64_t(pairs * bf16 * remote), ctas);
    send.out = ceil_div(uint64_t(pairs * bf16 / e.gpus), ctas);
    // Receive: a token's top-k outputs read from the receive buffer, weighted and summed.
    recv.incoming = ceil_div(uint64_t(pairs * bf16), ctas);
    recv.out = ceil_div(e.tokens * bf16, ctas);
  }
  recv.fifo = recv.incoming;  // the receive buffer holds every message: read once, not a ring
  const uint32_t s = b.kernel(e.name + ".send", e.op, e.layer, {ctas, 1, 1}, ks, deps, stream);
  // The send phase ends with a release (its stores acknowledged: a switch round trip) before the
  // counts or flags go out; the receivers see them one way later, past the grid barrier.
  b.k(s).wait_ns = uint64_t(std::llround(2 * f.switch_latency_ns));
  b.k(s).double_buffered = false;
  emit_channels(b, s, ctas, send, buf);
  const uint32_t r = b.kernel(e.name + ".recv", e.op, e.layer, {ctas, 1, 1}, ks, {s}, stream);
  b.k(r).wait_ns = uint64_t(std::llround(f.switch_latency_ns));
  b.k(r).double_buffered = false;
  if (e.op == KernelKind::ep_combine) b.k(r).flops[int(Precision::simt)] = 2.0 * pairs * double(e.hidden);
  emit_channels(b, r, ctas, recv, buf);
  return r;
}
}  // namespace

uint32_t emit_deepep(Builder& b, const ExpertParallelShape& e, const LaunchLimits& limits, const CommBuffers& buf,
                     const std::vector<uint32_t>& deps, uint32_t stream) {
  return e.low_latency ? emit_deepep_low_latency(b, e, limits, buf, deps, stream)
                       : emit_expert_parallel(b, e, limits.fabric, buf, deps, stream);
}

TraceData emulate_collective(const CollectiveShape& c, const LaunchLimits& limits) {
  Builder b;
  CollectivePlan p;
  emit_collective(b, c, limits.fabric, make_comm_buffers(b, c.name, c.layer), {}, detail::Builder::kCurrentStream, &p);
  b.t.metadata = {{"source", "emulated"}, {"generator", kGeneratorVersion}, {"workload", to_string(c.op)},
                  {"bytes", c.bytes}, {"gpus", c.gpus},
                  {"launch", {{"library", "nccl"}, {"algorithm", to_string(p.algo)}, {"protocol", to_string(p.proto)},
                              {"channels", p.channels}, {"threads", p.threads}, {"chunk_bytes", p.chunk_bytes},
                              {"wire_bytes", p.wire_bytes}, {"latency_us", p.latency_us},
                              {"predicted_us", p.predicted_us}}}};
  return std::move(b.t);
}

TraceData emulate_expert_parallel(const ExpertParallelShape& e, const LaunchLimits& limits) {
  Builder b;
  emit_deepep(b, e, limits, make_comm_buffers(b, e.name, e.layer));
  b.t.metadata = {{"source", "emulated"}, {"generator", kGeneratorVersion}, {"workload", to_string(e.op)},
                  {"tokens", e.tokens}, {"hidden", e.hidden}, {"gpus", e.gpus},
                  {"launch", {{"library", "deepep"}, {"kernel", e.low_latency ? "low latency (NVLink)" : "intranode normal"},
                              {"ctas", b.t.kernels.front().grid[0]}, {"threads", b.t.kernels.front().block[0]},
                              {"expected_ranks", e.expected_ranks()}, {"received_bytes", e.received_bytes()}}}};
  return std::move(b.t);
}

}  // namespace indexsim::trace
