// SPDX-License-Identifier: Apache-2.0
// The step: what one simulated inference step is (phase, context, batch, queries, chunk, seed), as
// a declared document with its defaults here and nowhere else. `run`'s flags, `--set step.K=V`,
// sweep axes `step.K` and the Python core all fill this one struct.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace indexsim::trace {

enum class Phase { decode, prefill };
const char* to_string(Phase p);

struct StepParams {
  Phase phase = Phase::decode;
  // Tokens of each sequence in the cache at the end of the step, the step's new tokens included:
  // the last new token attends to all `context` tokens.
  uint64_t context = 4096;
  uint32_t batch = 1;           // sequences this GPU serves attention for
  uint32_t queries = 1;         // decode: new tokens per sequence (>1: MTP / speculative decoding)
  uint32_t chunk_tokens = 4096; // prefill: new tokens per sequence in this chunk (chunked prefill)
  uint64_t seed = 1;
  uint32_t new_tokens() const { return phase == Phase::decode ? queries : chunk_tokens; }
  nlohmann::json to_json() const;
};

// Throws std::invalid_argument naming the parameter when a value is out of range.
void validate(const StepParams& p);
// A context beyond the model's positions (`model.max_position_embeddings`, 0: unstated) is refused,
// in every phase: the model was not trained to attend that far. std::invalid_argument naming both
// values and the override (--set workload.model.max_position_embeddings=N, recorded in the run).
void check_positions(const StepParams& p, uint64_t max_positions, const std::string& model);

// The step as a document: sets one parameter by its name (phase, context, batch, queries, chunk,
// seed), as `--set step.K=V` and sweep axes `step.K` do; std::invalid_argument naming the key and
// the value when either is not one of them.
void set_step_param(StepParams& p, const std::string& key, const std::string& value);

}  // namespace indexsim::trace
