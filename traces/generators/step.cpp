// SPDX-License-Identifier: Apache-2.0
#include "traces/generators/step.hpp"

#include <cmath>
#include <cstdlib>
#include <stdexcept>

namespace indexsim::trace {

const char* to_string(Phase p) { return p == Phase::decode ? "decode" : "prefill"; }

nlohmann::json StepParams::to_json() const {
  return {{"phase", to_string(phase)}, {"context", context},           {"batch", batch},
          {"queries", queries},        {"chunk_tokens", chunk_tokens}, {"seed", seed}};
}

void set_step_param(StepParams& p, const std::string& key, const std::string& v) {
  auto count = [&]() -> uint64_t {
    // Sweep ranges write their points as numbers ("1.048576e+06"): any integral value is a count.
    char* end = nullptr;
    const double d = v.empty() ? -1 : std::strtod(v.c_str(), &end);
    if (!end || *end != '\0' || d < 0 || d != std::floor(d) || d > 1.8e19)
      throw std::invalid_argument("step." + key + " = '" + v + "': not a non-negative integer");
    return uint64_t(d);
  };
  auto narrow = [&](uint64_t n) -> uint32_t {
    if (n > UINT32_MAX) throw std::invalid_argument("step." + key + " = '" + v + "': too large");
    return uint32_t(n);
  };
  if (key == "phase") {
    // A step is a decode step or one prefill chunk ("chunk" and "prefill" both name the latter).
    if (v != "decode" && v != "prefill" && v != "chunk")
      throw std::invalid_argument("step.phase = '" + v + "': must be decode, chunk or prefill (one chunk)");
    p.phase = v == "decode" ? Phase::decode : Phase::prefill;
  } else if (key == "context") p.context = count();
  else if (key == "batch") p.batch = narrow(count());
  else if (key == "queries") p.queries = narrow(count());
  else if (key == "chunk") p.chunk_tokens = narrow(count());
  else if (key == "seed") p.seed = count();
  else throw std::invalid_argument("step." + key + ": unknown step parameter (phase, context, batch, queries, chunk, seed)");
}

void validate(const StepParams& p) {
  auto bad = [](const std::string& what, uint64_t v, const std::string& rule) {
    throw std::invalid_argument(what + " = " + std::to_string(v) + ": " + rule);
  };
  if (p.batch == 0) bad("batch", p.batch, "must be >= 1");
  if (p.new_tokens() == 0) bad(p.phase == Phase::decode ? "queries" : "chunk_tokens", 0, "must be >= 1");
  if (p.context < p.new_tokens())
    bad("context", p.context, "must be >= the step's new tokens (" + std::to_string(p.new_tokens()) + ")");
  if (p.context > (1ull << 31)) bad("context", p.context, "must be <= 2^31 tokens");
}

void check_positions(const StepParams& p, uint64_t max_positions, const std::string& model) {
  if (max_positions > 0 && p.context > max_positions)
    throw std::invalid_argument("context " + std::to_string(p.context) + " is beyond " + model +
                                "'s model.max_position_embeddings " + std::to_string(max_positions) +
                                " (override, recorded in the run: --set workload.model.max_position_embeddings=N)");
}

}  // namespace indexsim::trace
