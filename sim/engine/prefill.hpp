// SPDX-License-Identifier: Apache-2.0
// A whole chunked prefill: the time to first token of a `context`-token prompt processed in
// chunks of `chunk` tokens, each chunk a step whose last token attends to everything before it.
//
// Chunk sampling: a chunk's time is modelled as a + b · (its end position), the weight GEMMs and
// appends being the constant and the indexer scan the part linear in position. Sparse attention
// grows with position only until the queries see top-k tokens: the chunks that begin before then
// are off the line and always simulated. A few chunks at spread positions are simulated (the
// first and the last always); the line is fitted by least squares to the full chunks among them
// that begin at or after top-k; every other chunk takes the line's value.
// The estimate's uncertainty is each sampled interior chunk's error when the line is fitted
// without it (leave one out). sampled_chunks = 0 simulates every chunk.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "sim/engine/run_result.hpp"
#include "sim/engine/simulation.hpp"

namespace indexsim::sim {

struct PrefillSpec {
  RunSpec run;                   // step.context: the prompt; step.chunk_tokens: the chunk
  uint32_t sampled_chunks = 4;   // chunks simulated (0: every chunk)
  // Chunks simulated side by side, one a thread; each is an independent run, collected by chunk
  // index, so the result is the same bit for bit whatever the count.
  uint32_t workers = 1;
  // progress(i, n, chunk index) before each simulated chunk
  std::function<void(size_t, size_t, uint64_t)> progress;
};

struct PrefillChunk {
  uint64_t index = 0, begin = 0, end = 0;  // tokens [begin, end) of the prompt
  double time_ns = 0;
  bool simulated = false;
  double loo_error = 0;                    // simulated interior chunks: (fit without it - simulated) / simulated
};

// The chunks of a prompt and which of them are simulated. std::invalid_argument naming the values
// when the chunk is 0 or larger than the context.
std::vector<PrefillChunk> plan_prefill_chunks(uint64_t context, uint64_t chunk, uint32_t sampled);

// Runs the sampled chunks and integrates the rest. The result's step time is the time to first
// token; its kernels are the simulated chunks' (named "C<index>.<kernel>", placed at the chunk's
// start); metrics: ttft, chunks, simulated_chunks, fit_max_error, and per kernel kind the time
// summed over all chunks (prefill_<kind>_time). A context beyond the workload's
// model.max_position_embeddings is refused naming both values and the override.
RunResult simulate_prefill(const PrefillSpec& spec, std::vector<PrefillChunk>* chunks_out = nullptr);

}  // namespace indexsim::sim
