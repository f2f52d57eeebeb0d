// SPDX-License-Identifier: Apache-2.0
// Two-batch overlap (workload deployment.two_batch_overlap, SGLang's --enable-two-batch-overlap):
// how a step is split into two micro-batches, and the order their kernels are enqueued in. The
// step emulator (emulate.cpp) builds each micro-batch's chain; techniques find a kernel's
// micro-batch by its name.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "traces/generators/model_shape.hpp"
#include "traces/generators/step.hpp"
#include "traces/trace_data.hpp"

namespace indexsim::trace {

// The second micro-batch's kernels and its own tensors carry this prefix; micro_batch_of() reads
// it back (0 or 1).
constexpr const char* kSecondMicroBatchPrefix = "mb1.";
inline uint32_t micro_batch_of(const std::string& name) { return name.rfind(kSecondMicroBatchPrefix, 0) == 0 ? 1 : 0; }

struct MicroBatchSplit {
  std::vector<StepParams> parts;        // the whole step alone, or the two micro-batches
  uint64_t second_first_sequence = 0;   // the second's first sequence in the whole batch
  bool by_tokens = false;               // one sequence's tokens split: the halves share its caches
  std::string how;                      // for the trace metadata
};

// The split as SGLang's batch_overlap/two_batch_overlap.py makes it (compute_split_seq_index,
// _split_extend_seqs): a decode batch at B / 2 sequences (the first micro-batch takes the smaller
// half; one sequence is not split); a prefill of an even number of equal sequences at half of
// them; a prefill of one sequence, whose split by sequences would leave one side empty, at half
// its tokens ("two-chunk"), the second half attending to the first's keys. An odd number of
// prefill sequences SGLang splits at half the tokens too, inside the middle sequence; here the
// first micro-batch takes that sequence whole (an approximation). SGLang does not split a prefill
// whose dispatch runs DeepEP's low-latency kernels. Without the option: the whole step.
MicroBatchSplit split_micro_batches(const ModelShape& m, const StepParams& step);

// Reorders a trace whose micro-batch i was built on stream i, each a chain of its own. SGLang runs
// both on one compute stream, alternating at each communication: a micro-batch runs until it has
// launched its dispatch, combine or collective, then the other runs while that communication
// proceeds (the YieldOperation after each dispatch and combine launch of its DeepSeek prefill
// strategy, batch_overlap/operations_strategy.py; its decode strategy's finer stages are not
// modelled). So a micro-batch's kernels are cut into stages, each ending with a run of
// communication kernels, and enqueued stage by stage, first micro-batch first: compute on stream 0
// in that order, micro-batch i's communication on stream 1 + i, each kernel still waiting for the
// one before it in its own micro-batch. Kernel ids and access records are renumbered to match.
void interleave_stages(TraceData& t);

}  // namespace indexsim::trace
