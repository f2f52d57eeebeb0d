// SPDX-License-Identifier: Apache-2.0
#include "sim/engine/prefill.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <set>
#include <mutex>
#include <stdexcept>

#include "models/common/params.hpp"
#include "sim/core/config_load.hpp"
#include "sim/core/parallel.hpp"
#include "traces/generators/model_shape.hpp"

namespace indexsim::sim {

namespace {

// The workload's shape, its prompt checked against the model's positions.
trace::ModelShape checked_shape(const RunSpec& spec) {
  if (spec.workload.empty()) throw std::invalid_argument("a whole prefill needs a workload (--workload), not a trace");
  auto doc = load_document("workloads", spec.workload, spec.sets);
  const trace::ModelShape m = trace::load_model_shape(doc->root());
  trace::check_positions(spec.step, m.max_position_embeddings, m.name);
  return m;
}

// A run's kernels of one kind, their durations summed.
double kind_time(const RunResult& r, const std::string& kind) {
  double s = 0;
  for (const auto& k : r.kernels)
    if (k.kind == kind) s += k.duration_ns();
  return s;
}

}  // namespace

std::vector<PrefillChunk> plan_prefill_chunks(uint64_t context, uint64_t chunk, uint32_t sampled) {
  if (chunk == 0) throw std::invalid_argument("chunk of 0 tokens");
  if (chunk > context)
    throw std::invalid_argument("chunk " + std::to_string(chunk) + " is larger than the context " + std::to_string(context));
  const uint64_t n = (context + chunk - 1) / chunk;
  std::vector<PrefillChunk> c(n);
  for (uint64_t i = 0; i < n; ++i) {
    c[i].index = i;
    c[i].begin = i * chunk;
    c[i].end = std::min(context, (i + 1) * chunk);
  }
  if (sampled == 0 || sampled >= n) {
    for (auto& x : c) x.simulated = true;
    return c;
  }
  // Spread: the first, the last and evenly between; a partial last chunk is simulated besides,
  // since the line describes full chunks.
  const uint64_t full = c.back().end - c.back().begin == chunk ? n : n - 1;
  const uint32_t k = std::max<uint32_t>(2, sampled);
  for (uint32_t j = 0; j < k && full > 0; ++j)
    c[uint64_t(std::llround(double(j) * double(full - 1) / double(k - 1)))].simulated = true;
  c.back().simulated = true;
  return c;
}

ChunkLine refine_chunks(std::vector<PrefillChunk>& chunks, const std::function<bool(const PrefillChunk&)>& on_line,
                        const PrefillSpec& spec, const std::function<void(const std::vector<size_t>&)>& simulate) {
  ChunkLine line;
  std::vector<size_t> todo;
  for (size_t i = 0; i < chunks.size(); ++i)
    if (chunks[i].simulated) todo.push_back(i);
  size_t simulated = 0;
  for (;;) {
    simulate(todo);
    simulated += todo.size();
    // Each interior simulated chunk against the line through its neighbours.
    line.at.clear();
    for (size_t i = 0; i < chunks.size(); ++i)
      if (chunks[i].simulated && on_line(chunks[i])) line.at.push_back(i);
    for (size_t j = 1; j + 1 < line.at.size(); ++j) {
      const PrefillChunk &a = chunks[line.at[j - 1]], &b = chunks[line.at[j + 1]];
      PrefillChunk& c = chunks[line.at[j]];
      const double f = double(c.end - a.end) / double(b.end - a.end);
      c.loo_error = (a.time_ns + f * (b.time_ns - a.time_ns) - c.time_ns) / c.time_ns;
    }
    todo.clear();
    if (spec.sampled_chunks == 0) break;
    // What a chunk off its neighbours' line may move the time to first token by: its error, half
    // of it on average over the chunks of the gaps on both sides, against the estimate so far.
    // (Per chunk, sampled kernels jitter by a few per cent; that averages out and is not a bend.)
    double ttft = 0;
    for (const auto& c : chunks) ttft += c.simulated ? c.time_ns : line.between(chunks, c, [](const PrefillChunk& x) { return x.time_ns; });
    std::set<size_t> more;  // the middles of the gaps around each chunk that matters
    for (size_t j = 1; j + 1 < line.at.size(); ++j) {
      const PrefillChunk& c = chunks[line.at[j]];
      const double moved = std::abs(c.loo_error) * c.time_ns * double(line.at[j + 1] - line.at[j - 1] - 1) / 2;
      if (moved <= spec.refine_tolerance * ttft) continue;
      for (size_t g : {j - 1, j})
        if (line.at[g + 1] - line.at[g] > 1) more.insert((line.at[g] + line.at[g + 1]) / 2);
    }
    for (size_t i : more)
      if (simulated + todo.size() < spec.max_simulated_chunks) todo.push_back(i);
    if (todo.empty()) break;
    for (size_t i : todo) chunks[i].simulated = true;
    ++line.rounds;
  }
  return line;
}

double ChunkLine::max_error(const std::vector<PrefillChunk>& chunks) const {
  double e = 0;
  for (size_t j = 1; j + 1 < at.size(); ++j) e = std::max(e, std::abs(chunks[at[j]].loo_error));
  return e;
}

namespace {

// The prefill's step and its chunks, those to simulate first marked: what simulate_prefill runs and
// prefill_key hashes, computed once for both.
struct Planned {
  RunSpec base;
  std::vector<PrefillChunk> chunks;
  uint64_t T = 0;
  std::function<bool(const PrefillChunk&)> on_line;
};

Planned plan_of(const PrefillSpec& spec) {
  Planned p;
  p.base = spec.run;
  apply_step_sets(p.base.step, p.base.sets);
  p.base.step.phase = trace::Phase::prefill;
  const trace::ModelShape shape = checked_shape(p.base);
  p.T = p.base.step.chunk_tokens;
  p.chunks = plan_prefill_chunks(p.base.step.context, p.T, spec.sampled_chunks);
  // Until its queries see top-k tokens, a chunk's sparse attention grows with its position and
  // then stays: those first chunks are off the line, so they are simulated, and the others are
  // interpolated between the simulated ones on it.
  const uint64_t onset = shape.indexer.topk, T = p.T;
  p.on_line = [onset, T](const PrefillChunk& c) { return c.end - c.begin == T && c.begin >= onset; };
  size_t line_chunks = 0;
  for (auto& c : p.chunks) {
    if (c.begin < onset) c.simulated = true;
    line_chunks += p.on_line(c) && c.simulated;
  }
  // The line needs two chunks: the first one on it, besides the last.
  if (line_chunks < 2)
    for (auto& c : p.chunks)
      if (p.on_line(c)) {
        c.simulated = true;
        break;
      }
  return p;
}

// The run of the chunk [end - tokens, end).
RunSpec chunk_spec(const RunSpec& base, uint64_t end, uint64_t tokens) {
  RunSpec s = base;
  s.step.context = end;
  s.step.chunk_tokens = uint32_t(tokens);
  s.timeline.clear();
  s.sets.erase(std::remove_if(s.sets.begin(), s.sets.end(), [](const std::string& a) { return a.rfind("step.", 0) == 0; }),
               s.sets.end());  // applied already; a chunk's own context and size win
  return s;
}

// The whole prefill's configuration: its last chunk's, with the prompt's context and how it was
// sampled. Only inputs: what the sampling found (chunks simulated, refinement rounds) is in the
// metrics, so the key is known before anything runs (a study reuses a stored prefill by it).
nlohmann::json prefill_config(nlohmann::json config, const Planned& p, const PrefillSpec& spec) {
  uint64_t first = 0;  // the chunk whose segment memos the others start from: the first simulated
  for (const auto& c : p.chunks)
    if (c.simulated) {
      first = c.index;
      break;
    }
  config["prefill"] = {{"context", p.base.step.context}, {"chunk", p.T}, {"chunks", p.chunks.size()},
                       {"sampled_chunks", spec.sampled_chunks}, {"refine_tolerance", spec.refine_tolerance},
                       {"max_simulated_chunks", spec.max_simulated_chunks},
                       {"segment_memos_from_chunk", p.base.reuse ? nlohmann::json(first) : nlohmann::json()}};
  config["step"]["context"] = p.base.step.context;  // the prompt's, not its last chunk's
  config["step"]["chunk_tokens"] = p.T;
  config["step"]["prefill_whole"] = true;
  return config;
}

}  // namespace

std::string prefill_key(const PrefillSpec& spec) {
  const Planned p = plan_of(spec);
  const PrefillChunk& last = p.chunks.back();
  return run_key(prefill_config(resolve(chunk_spec(p.base, last.end, last.end - last.begin)), p, spec));
}

RunResult simulate_prefill(const PrefillSpec& spec, std::vector<PrefillChunk>* chunks_out) {
  const auto t0 = std::chrono::steady_clock::now();
  Planned planned = plan_of(spec);
  const RunSpec& base = planned.base;
  std::vector<PrefillChunk>& chunks = planned.chunks;
  const auto& on_line = planned.on_line;

  // Simulate the sampled chunks: the first alone, then the others on `workers` threads, each result
  // stored under its chunk's index (the same result whatever the count). The others start from the
  // first one's segment memos: its weight GEMMs repeat in theirs, kernels over the context do not
  // (their tensors' sizes differ). The first error is rethrown.
  std::map<uint64_t, RunResult> runs;
  auto first_memos = std::make_shared<SegmentLibrary>();
  size_t started = 0;
  const auto simulate_round = [&](const std::vector<size_t>& todo) {
    std::vector<RunResult> results(todo.size());
    std::vector<std::exception_ptr> errors(todo.size());
    std::mutex progress_mutex;
    const bool seeds = runs.empty();  // the prefill's first chunk leaves its memos for the others
    const auto run_one = [&](size_t j) {
      const PrefillChunk& c = chunks[todo[j]];
      if (spec.progress) {
        std::lock_guard<std::mutex> lock(progress_mutex);
        spec.progress(started++, c.index);
      }
      RunSpec s = chunk_spec(base, c.end, c.end - c.begin);
      if (seeds && j == 0) s.kept_segments = first_memos;
      else s.inherited_segments = first_memos;
      try {
        results[j] = simulate(s);
      } catch (...) {
        errors[j] = std::current_exception();
      }
    };
    size_t first = 0;
    if (seeds && !todo.empty()) run_one(0), first = 1;
    for_each_index(first, todo.size(), spec.workers, run_one);
    for (const auto& e : errors)
      if (e) std::rethrow_exception(e);
    for (size_t j = 0; j < todo.size(); ++j) {
      chunks[todo[j]].time_ns = results[j].step_ns;
      runs[chunks[todo[j]].index] = std::move(results[j]);
    }
  };

  // The last chunk holds the most context: built and placed first, so that a prompt that does not
  // fit (or exceeds the work budget) fails in seconds, not after the chunks before it ran.
  RunSpec largest = chunk_spec(base, chunks.back().end, chunks.back().end - chunks.back().begin);
  largest.plan_only = true;
  simulate(largest);

  const ChunkLine line = refine_chunks(chunks, on_line, spec, simulate_round);

  // Per kernel kind, as per chunk: each full chunk between two simulated ones on the line takes
  // the interpolation between them.
  std::set<std::string> kinds;
  for (const auto& [i, r] : runs)
    for (const auto& k : r.kernels) kinds.insert(k.kind);
  const double max_err = line.max_error(chunks);

  // The last chunk's record: its config, components, and the metrics of the state at the full
  // context (footprints, placement); its per-step times are replaced by the prefill's.
  RunResult R = runs.at(chunks.back().index);
  R.kernels.clear();
  static const std::set<std::string> kPerStep = {"step_time", "roofline_time", "tokens_per_second", "communication_time",
                                                 "communication_share", "communication_exposed_time", "bytes_read", "bytes_written", "requests"};
  R.metrics.erase(std::remove_if(R.metrics.begin(), R.metrics.end(), [](const Metric& m) { return kPerStep.count(m.name) > 0; }),
                  R.metrics.end());
  double t = 0;
  std::map<std::string, double> kind_total;
  double exposed = 0;  // communication no other kernel overlaps, over the chunks
  for (auto& c : chunks) {
    if (!c.simulated) c.time_ns = line.between(chunks, c, [](const PrefillChunk& x) { return x.time_ns; });
    if (c.simulated) {
      for (auto k : runs[c.index].kernels) {
        // Every chunk numbers its kernels from 0: renumbered, so that a run's kernel ids stay unique
        // (the store's key; a whole prefill with --db failed on it after simulating).
        k.id = uint32_t(R.kernels.size());
        k.name = "C" + std::to_string(c.index) + "." + k.name;
        k.start_ns += t;
        k.end_ns += t;
        R.kernels.push_back(std::move(k));
      }
      for (const auto& kind : kinds) kind_total[kind] += kind_time(runs[c.index], kind);
      exposed += exposed_communication_ns(runs[c.index].kernels);
    } else {
      for (const auto& kind : kinds)
        kind_total[kind] += line.between(chunks, c, [&](const PrefillChunk& x) { return kind_time(runs.at(x.index), kind); });
      exposed += line.between(chunks, c, [&](const PrefillChunk& x) { return exposed_communication_ns(runs.at(x.index).kernels); });
    }
    t += c.time_ns;
  }
  R.step_ns = t;
  double roof = 0;
  for (const auto& [i, r] : runs) roof += r.roofline_ns;  // of the simulated chunks only: a lower bound
  R.roofline_ns = roof;
  R.config = prefill_config(std::move(R.config), planned, spec);
  R.key = run_key(R.config);
  R.metric("refine_rounds", double(line.rounds), "count");
  R.metric("ttft", t / 1e3, "us");
  R.metric("step_time", t / 1e3, "us");
  R.metric("chunks", double(chunks.size()), "count");
  R.metric("simulated_chunks", double(runs.size()), "count");
  R.metric("fit_max_error", max_err, "fraction");
  R.metric("chunk_time_first", chunks.front().time_ns / 1e3, "us");
  R.metric("chunk_time_last", chunks.back().time_ns / 1e3, "us");
  R.metric("tokens_per_second", double(base.step.context) * base.step.batch / (t * 1e-9), "tokens/s");
  for (const auto& [kind, v] : kind_total) R.metric("prefill_" + kind + "_time", v / 1e3, "us");
  double comm = 0;
  for (const auto& [kind, v] : kind_total)
    if (trace::is_communication(trace::kernel_kind(kind))) comm += v;
  R.metric("communication_time", comm / 1e3, "us");
  R.metric("communication_share", t > 0 ? comm / t : 0, "fraction");
  R.metric("communication_exposed_time", exposed / 1e3, "us");
  R.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (chunks_out) *chunks_out = chunks;
  return R;
}

}  // namespace indexsim::sim
