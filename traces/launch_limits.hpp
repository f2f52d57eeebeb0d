// SPDX-License-Identifier: Apache-2.0
// What a kernel library asks of the device before it picks a launch shape: the number of SMs, the
// shared memory one CTA may opt into, and which tensor precisions run natively. DeepGEMM, FlashMLA
// and CUTLASS size their grids, tiles and pipeline stages from exactly these (cudaDeviceProp's
// multiProcessorCount and sharedMemPerBlockOptin, the compute capability); the emulated kernels of
// traces/generators/ do the same, so that one kernel launches differently on an A100 and an H200.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "traces/records.hpp"

namespace indexsim::trace {

// Collective algorithms and protocols, in NCCL's terms (src/graph/tuning.cc).
enum class CollAlgo : uint8_t { ring = 0, tree = 1, nvls = 2 };
enum class CollProto : uint8_t { ll = 0, ll128 = 1, simple = 2 };
constexpr int kCollAlgos = 3, kCollProtos = 3;

// What a collective library reads from the topology (NCCL's topology detection: links, their
// bandwidth, an NVSwitch with or without NVLS) and the latency model it tunes with, from the
// hardware file's fabric and collectives sections. domain_gpus == 0: the hardware has no fabric.
struct FabricLimits {
  uint32_t domain_gpus = 0;            // GPUs one NVSwitch domain connects
  uint32_t links = 0;                  // NVLink links per GPU
  double link_effective_GBps = 0;      // one link, one direction, payload
  double switch_latency_ns = 0;        // one way through the switch
  bool nvls = false;
  double nvls_wire_factor = 1;         // bytes on the wire per payload byte of a multimem operation
  double nvls_efficiency = 1;          // fraction of the links' bandwidth NVLS's multimem operations reach
  // NCCL's NVLS kernel: its own channel count (comm->nvlsChannels, not the rings'), its threads per
  // channel, and the largest chunk one head reduces per loop iteration (NCCL_NVLS_CHUNKSIZE).
  uint32_t nvls_channels = 16;
  uint32_t nvls_threads = 640;
  uint64_t nvls_chunk_bytes = 128 * 1024;
  // The library's latency model: per operation (base) and per step over NVLink, microseconds.
  double base_latency_us[kCollAlgos][kCollProtos] = {};
  double step_latency_us[kCollAlgos][kCollProtos] = {};
  double wire_factor[kCollProtos] = {2.0, 1.0, 1.0};  // bytes on the wire per payload byte
  // NCCL's own expectation of a choice's bandwidth, which it chooses by (not what is simulated):
  // the share of the links' bandwidth per algorithm and protocol, and the tree's correction per
  // power of two of bytes / 64.
  double nccl_share[kCollAlgos][kCollProtos] = {{1, 1, 1}, {1, 1, 1}, {1, 1, 1}};
  std::vector<double> tree_correction[kCollProtos];
  uint32_t threads[kCollProtos] = {512, 512, 512};    // threads per channel (CTA)
  uint32_t thread_threshold_bytes[kCollProtos] = {8, 8, 64};  // bytes per thread before one more channel
  uint32_t max_channels = 0;                          // CTAs of one collective at most
  uint64_t fifo_bytes[kCollProtos] = {};              // receive buffer per channel
  int pinned_algo = -1, pinned_proto = -1;            // -1: chosen by message size
  uint32_t ep_sms = 0;                                // SMs an expert-parallel dispatch/combine occupies
  double total_GBps() const { return links * link_effective_GBps; }
};

struct LaunchLimits {
  uint32_t units = 132;                      // SMs
  uint64_t smem_per_cta_bytes = 227 * 1024;  // largest dynamic shared memory of one CTA (opt-in)
  uint64_t smem_per_unit_bytes = 228 * 1024;
  uint32_t max_threads_per_unit = 2048;
  uint32_t registers_per_unit = 65536;
  // Tensor precisions the hardware runs natively (FP8 from Hopper and Ada on, FP4 from Blackwell).
  std::array<bool, kPrecisionCount> native{true, true, true, true, true, false, true};
  // Hopper's asynchronous warpgroup MMA (wgmma) and TMA: the DeepGEMM/FlashMLA kernel designs.
  bool warpgroup_mma = true;
  // CUDA-core work of dequantising one FP8 value to BF16 (convert, scale), in the simt FLOPs a
  // kernel record counts: the GPU's cycles per value x its simt FLOPs per clock. The default is
  // the cost of one FMA-rate convert and one multiply, for processors that do not say.
  double simt_flops_per_fp8_value = 2.0;
  FabricLimits fabric;  // the GPU's place in its NVLink domain; collectives are shaped from it
};

}  // namespace indexsim::trace
