// SPDX-License-Identifier: Apache-2.0
// The machine state a captured trace's measurements started from (RunSpec::l2_start). The capture
// harness flushes the L2 before each repetition (trace metadata timing.l2_flush_MiB and
// l2_flush_mode, traces/FORMAT.md); a memset flush leaves the L2 full of the flush buffer's dirty
// lines, which the step's misses write back (traces/captured/README.md measures it). The replay
// gives the flush buffer a tensor of its own and warms its lines into the L2 dirty.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "models/common/memory_device.hpp"
#include "traces/trace_data.hpp"

namespace indexsim::sim {

// Throws std::invalid_argument unless `l2_start` is "capture" or "clean".
void check_l2_start(const std::string& l2_start);

// The bytes of a memset flush whose dirty lines the capture left in the L2; 0 for a clean start
// (l2_start "clean", a read flush, no flush, not a captured trace). A corrupt size or mode is
// refused by name.
uint64_t capture_dirty_flush_bytes(const nlohmann::json& metadata, const std::string& l2_start);

// Appends the flush buffer to the trace's tensors; returns its id.
uint32_t add_flush_tensor(trace::TraceData& td, uint64_t bytes);

// Leaves the memory's caches as a memset of `bytes` at `base` does: written in order, line by line.
void warm_dirty(model::MemoryDevice& memory, uint64_t base, uint64_t bytes, uint32_t line_bytes);

}  // namespace indexsim::sim
