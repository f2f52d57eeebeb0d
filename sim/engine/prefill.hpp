// SPDX-License-Identifier: Apache-2.0
// A whole chunked prefill: the time to first token of a `context`-token prompt processed in
// chunks of `chunk` tokens, each chunk a step whose last token attends to everything before it.
//
// Chunk sampling: a chunk's time grows with its end position, the weight GEMMs and appends being
// constant and the indexer scan and its top-k linear in position; sparse attention grows only until
// the queries see top-k tokens, so the chunks that begin before then are always simulated. A few
// chunks at spread positions are simulated (the first and the last always); between two simulated
// full chunks every other one takes the linear interpolation of their times. Where the cost bends
// (the KV cache spilling to another tier) an interior simulated chunk lies off the line through its
// neighbours; if that error, over the chunks of the gaps on both sides (half of it on average),
// would move the time to first token by more than `refine_tolerance` of it, the gaps get their
// middle chunk simulated, round after round, up to `max_simulated_chunks`. The estimate's
// uncertainty is the largest chunk error left (fit_max_error). sampled_chunks = 0 simulates every
// chunk.
#pragma once

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/engine/run_result.hpp"
#include "sim/engine/simulation.hpp"

namespace indexsim::sim {

struct PrefillSpec {
  RunSpec run;                   // step.context: the prompt; step.chunk_tokens: the chunk
  uint32_t sampled_chunks = 4;   // chunks simulated at first (0: every chunk)
  double refine_tolerance = 0.005;    // refine around a chunk whose bend would move the TTFT by this share
  uint32_t max_simulated_chunks = 16; // refinement stops here
  // Chunks simulated side by side, one a thread; each is an independent run, collected by chunk
  // index, so the result is the same bit for bit whatever the count.
  uint32_t workers = 1;
  // progress(i, chunk index) before the i-th simulated chunk (0-based)
  std::function<void(size_t, uint64_t)> progress;
};

struct PrefillChunk {
  uint64_t index = 0, begin = 0, end = 0;  // tokens [begin, end) of the prompt
  double time_ns = 0;
  bool simulated = false;
  double loo_error = 0;                    // simulated interior chunks: (its neighbours' line - simulated) / simulated
};

// The chunks of a prompt and which of them are simulated. std::invalid_argument naming the values
// when the chunk is 0 or larger than the context.
std::vector<PrefillChunk> plan_prefill_chunks(uint64_t context, uint64_t chunk, uint32_t sampled);

// The simulated full chunks on the line, in order of position (indices into the chunks), and the
// refinement rounds that chose them.
struct ChunkLine {
  std::vector<size_t> at;
  uint32_t rounds = 0;
  // value(chunk) at chunk c: interpolated linearly in end position between the simulated chunks
  // around it (the nearest one's beyond either end).
  template <class F>
  double between(const std::vector<PrefillChunk>& chunks, const PrefillChunk& c, F&& value) const {
    if (at.empty()) throw std::logic_error("ChunkLine: no simulated chunk on the line");
    size_t hi = 0;
    while (hi < at.size() && chunks[at[hi]].end < c.end) ++hi;
    if (hi == at.size()) return value(chunks[at.back()]);
    if (hi == 0) return value(chunks[at[0]]);
    const PrefillChunk &a = chunks[at[hi - 1]], &b = chunks[at[hi]];
    const double f = double(c.end - a.end) / double(b.end - a.end);
    return value(a) + f * (value(b) - value(a));
  }
  // The largest |loo_error| of an interior simulated chunk: the estimate's uncertainty.
  double max_error(const std::vector<PrefillChunk>& chunks) const;
};

// The sampling and refinement, apart from how a chunk is simulated: `simulate(indices)` sets
// chunks[i].time_ns for each index given (one round; the chunks marked simulated at the call are
// the first round). Returns the line through the simulated full chunks (`on_line`).
ChunkLine refine_chunks(std::vector<PrefillChunk>& chunks, const std::function<bool(const PrefillChunk&)>& on_line,
                        const PrefillSpec& spec, const std::function<void(const std::vector<size_t>&)>& simulate);

// Runs the sampled chunks and integrates the rest. The result's step time is the time to first
// token; its kernels are the simulated chunks' (named "C<index>.<kernel>", placed at the chunk's
// start); metrics: ttft, chunks, simulated_chunks, fit_max_error, and per kernel kind the time
// summed over all chunks (prefill_<kind>_time). A context beyond the workload's
// model.max_position_embeddings is refused naming both values and the override.
RunResult simulate_prefill(const PrefillSpec& spec, std::vector<PrefillChunk>* chunks_out = nullptr);

// The key simulate_prefill(spec) stores its result under, without simulating (the configuration
// holds only inputs; refine_rounds and simulated_chunks are metrics).
std::string prefill_key(const PrefillSpec& spec);

}  // namespace indexsim::sim
