// SPDX-License-Identifier: Apache-2.0
// An attention trace (.itr) expanded into plain memory requests, so that the same attention work
// can be fed to DRAMsim3, Ramulator 2 or DRAMSys.
//
// The tensors that the selected kernels touch are laid out by the placement policy (sim/placement)
// in one HBM region at address 0, and each CTA's access records are expanded by the SM model's AccessCursor, exactly as a replay
// issues them in the detailed mode (line-sized requests, rounded to sectors; a GEMM's loads in K
// steps, its stores after them). The order is kernel
// by kernel in trace order, CTA by CTA: the stream one SM would issue for the whole step, without
// the interleaving of a parallel run. Each request is then cut into aligned `bytes` pieces, the
// transaction size of the simulator that will read the file.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "sim/memtrace/plain_trace.hpp"
#include "traces/trace_data.hpp"

namespace indexsim::sim::memtrace {

struct ExportOptions {
  std::string kernel;           // empty: every kernel; else a kernel's name or kind
  bool have_layer = false;
  int32_t layer = 0;
  uint64_t limit = 0;           // 0: no limit; else stop after this many requests
  uint32_t bytes = 64;          // transaction size of the target simulator
  uint32_t line_bytes = 128;    // the SM model's line and sector (gpu.line_bytes, gpu.sector_bytes)
  uint32_t sector_bytes = 32;
  uint64_t capacity_bytes = 0;  // 0: unbounded; else the placement must fit (the target's capacity)
  uint64_t interval_cycles = 0; // time stamp of request i is i x interval (0: all due at once)
};

struct ExportStats {
  uint64_t requests = 0, reads = 0, writes = 0, kernels = 0;
};

ExportStats expand_accesses(const trace::TraceData& t, const ExportOptions& o,
                            const std::function<void(const PlainRequest&)>& emit);

}  // namespace indexsim::sim::memtrace
