// SPDX-License-Identifier: Apache-2.0
// `bench memory --engine systemc`: the synthetic closed-loop load of run_memory_bench, issued by a
// TLM-2.0 initiator in the approximately-timed base protocol (BEGIN_REQ, END_REQ, BEGIN_RESP,
// END_RESP) into the memory's SystemC face (models/dram/dram_sc.hpp, which wraps any memory unit's
// timing core) and run by the SystemC kernel, in a fresh simulation context. The same slots,
// addresses and retry order as the native loop. The figures agree bit for bit on the HBM, CXL and
// SRAM targets and on the whole memory system; on a target that refuses requests in bursts at one
// instant (the L2 alone) the kernel's delta cycles may order a completion, a retry and the next
// request of that instant differently, within 0.1 % (tests/cpp/test_bench_sc.cpp). What it measures
// beside them is the cost of the kernel's events: requests per wall second.
#pragma once

#include "sim/memsys/bench.hpp"

namespace indexsim::sim {

BenchResult run_memory_bench_systemc(model::MemoryDevice& dev, const BenchSpec& spec);

}  // namespace indexsim::sim
