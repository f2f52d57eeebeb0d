// SPDX-License-Identifier: Apache-2.0
// Collectives as kernels: what NCCL (all-reduce, all-gather, reduce-scatter, all-to-all) and
// DeepEP (expert-parallel dispatch and combine) launch on one GPU of a symmetric group, shaped
// from the fabric the library detects (traces/launch_limits.hpp, FabricLimits).
//
// A collective is one kernel of `channels` CTAs. Each CTA reads its share of the input from local
// memory, writes its share of the outgoing bytes into the peers' memory (a peer tensor, which
// placement puts behind the fabric), reads back what the peers stored into its receive buffer (by
// symmetry as many bytes as it sends) and writes the output. It then waits wait_ns on its
// peers' handshakes: the library's latency model (a base per operation plus one term per step).
//
// The algorithm and protocol are NCCL's choice (tuning.cc): the least predicted time,
// latency + bytes / the bandwidth NCCL's own model expects (its refinements per protocol, its tree
// correction), over those the fabric supports, unless the hardware file pins one.
#pragma once

#include <cstdint>
#include <string>

#include "models/common/params.hpp"
#include "traces/generators/trace_builder.hpp"
#include "traces/launch_limits.hpp"
#include "traces/trace_data.hpp"

namespace indexsim::trace {

const char* to_string(CollAlgo a);
const char* to_string(CollProto p);

// Reads the hardware's `fabric` and `collectives` sections; both absent: domain_gpus = 0.
FabricLimits read_fabric_limits(const config::Node& hw_root);

struct CollectivePlan {
  CollAlgo algo = CollAlgo::ring;
  CollProto proto = CollProto::simple;
  uint32_t channels = 1;         // CTAs that carry data
  uint32_t threads = 0;          // per CTA
  uint64_t chunk_bytes = 0;      // NVLS: what one head reduces per loop iteration; 0 otherwise
  uint32_t steps = 0;            // pipeline steps of the algorithm (2(n-1) for a ring all-reduce)
  uint64_t wire_bytes = 0;       // bytes this GPU puts on its links, protocol overhead included
  uint64_t in_bytes = 0, out_bytes = 0;  // local input read and output written
  double latency_us = 0;         // the library's latency term: the kernel's wait
  double predicted_us = 0;       // latency + bytes over the bandwidth NCCL expects: its estimate, which it chooses by
};

// `op` is all_reduce, all_gather, reduce_scatter or all_to_all; `bytes` the message size as
// nccl-tests counts it (the full buffer). std::invalid_argument on an op it does not know, a
// group of fewer than 2 or more GPUs than the fabric connects, or a pinned algorithm the op or
// the fabric lacks.
CollectivePlan plan_collective(KernelKind op, uint64_t bytes, uint32_t gpus, const FabricLimits& f);

// The tensors a communication kernel touches: its input and output in this GPU's memory, the
// peers' buffers behind the fabric, and the receive buffers of its channels (a communicator's, as
// NCCL allocates them once and every call reuses them). Emission grows each to what it touches.
struct CommBuffers {
  uint32_t in = 0, out = 0, peer = 0, fifo = 0;
};
// Four new tensors named after `name`: in and out activations, peer, fifo scratch.
CommBuffers make_comm_buffers(detail::Builder& b, const std::string& name, int layer);

// Appends the collective's kernel to the trace `b` builds, on `stream` after `deps`, over `buf`;
// returns its id, and the plan it followed in `plan` when given.
struct CollectiveShape {
  KernelKind op = KernelKind::all_reduce;
  uint64_t bytes = 0;
  uint32_t gpus = 8;
  std::string name = "all_reduce";
  int layer = -1;
};
uint32_t emit_collective(detail::Builder& b, const CollectiveShape& c, const FabricLimits& f, const CommBuffers& buf,
                         const std::vector<uint32_t>& deps = {}, uint32_t stream = detail::Builder::kCurrentStream, CollectivePlan* plan = nullptr);

// DeepEP's intranode normal kernels: every token goes once to every rank that holds one of its
// top-k experts (dispatch, FP8 with a scale per 128 values), and comes back from each (combine,
// BF16, reduced at its rank). Routing is uniform: a token reaches `expected_ranks` distinct ranks.
//
// Low-latency kernels (DeepEP's decode path, intranode over NVLink: `low_latency`): every (token,
// expert) pair is a message of its own, not deduplicated by rank, and the kernel runs in two
// phases across a grid barrier; they are emitted as two kernels, the second after the first.
struct ExpertParallelShape {
  KernelKind op = KernelKind::ep_dispatch;  // ep_dispatch or ep_combine
  uint64_t tokens = 0;                      // this rank's tokens
  uint64_t hidden = 0;
  uint32_t topk = 8, experts = 256, gpus = 8;
  double load_skew = 1.0;                   // the busiest rank receives this multiple of the mean
  bool low_latency = false;
  std::string name = "ep_dispatch";
  int layer = -1;
  double expected_ranks() const;            // distinct ranks a token's top-k experts live on
  // One token's bytes: FP8 + scales (dispatch; low latency: and a 16-byte header) or BF16 (combine).
  uint64_t token_bytes() const;
  // Token bytes this rank receives, its own included (low latency: one message a pair).
  uint64_t received_bytes() const;
};
uint32_t emit_expert_parallel(detail::Builder& b, const ExpertParallelShape& e, const FabricLimits& f,
                              const CommBuffers& buf, const std::vector<uint32_t>& deps = {}, uint32_t stream = detail::Builder::kCurrentStream);
// What DeepEP launches for `e`: the normal kernel above, or with `low_latency` its pair of kernels,
// shaped from the SM count as DeepEP's launch is. Returns the last kernel.
uint32_t emit_deepep(detail::Builder& b, const ExpertParallelShape& e, const LaunchLimits& limits, const CommBuffers& buf,
                     const std::vector<uint32_t>& deps = {}, uint32_t stream = detail::Builder::kCurrentStream);

// One collective alone, as `indexsim bench collective` and the published cases run it.
TraceData emulate_collective(const CollectiveShape& c, const LaunchLimits& limits);
TraceData emulate_expert_parallel(const ExpertParallelShape& e, const LaunchLimits& limits);

}  // namespace indexsim::trace
