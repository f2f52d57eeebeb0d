// SPDX-License-Identifier: Apache-2.0
// A design-space sweep: a base run, axes over config paths, and constraints that skip combinations.
// The spec only names points; what a point means is decided by resolve() (sim/engine), so a sweep
// can vary any key a config file holds without this file knowing it.
//
//   base:   {hardware: h200, workload: glm-5, techniques: baseline,
//            step: {phase: decode, context: 4096, batch: 1, queries: 1, chunk: 4096, seed: 1},
//            fast: true, sets: ["hardware.gpu.sm_count=66"]}
//   axes:                                   # in file order; the first axis varies slowest
//     hardware: {values: [h100, h200]}      # a preset name
//     step.context: {from: 16384, to: 1048576, factor: 2}
//     hardware.memory.hbm.stacks: {from: 4, to: 6, step: 1}
//   constraints:
//     - require: "step.context <= 262144 or hardware != 'a100'"
//     - skip: [{hardware: h100, step.context: 1048576}]
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "sim/engine/simulation.hpp"

namespace indexsim::sim::sweep {

// One point of the design space: an axis path → its value as text, in axis order.
using Assignment = std::vector<std::pair<std::string, std::string>>;

struct Axis {
  std::string path;
  std::vector<std::string> values;
};

// A parsed `require:` expression: comparisons of axis paths with literals, joined by and/or/not.
class Expr {
 public:
  virtual ~Expr() = default;
  virtual bool eval(const Assignment& a) const = 0;
};

struct Constraint {
  std::string text;                    // as written, for messages and --dry-run
  std::shared_ptr<const Expr> require; // keep a point only when true
  std::vector<Assignment> skip;        // drop a point that matches every pair of any entry
  bool keeps(const Assignment& a) const;
};

struct SweepSpec {
  std::string file;   // where it came from, for messages
  std::string name;
  RunSpec base;
  std::vector<Axis> axes;
  std::vector<Constraint> constraints;
  // share_segments: points that differ only in the context and the techniques (axes step.context,
  // techniques, techniques.*) repeat the same weight GEMMs; each starts from the segment memos of
  // the first such point in the spec's order (its seed: `run --segments-to`, the others
  // `--segments-from`), recorded in its configuration (segments_from). Off: every point alone.
  bool share_segments = false;
  // The index in points() of the seed of points()[i] (i itself for a seed): with share_segments.
  std::vector<size_t> segment_seeds(const std::vector<Assignment>& points) const;

  static SweepSpec load_file(const std::string& path);
  static SweepSpec load_string(const std::string& text, const std::string& name);

  // The cartesian product of the axes in order, without the points a constraint drops.
  std::vector<Assignment> points() const;
  // The run of one point: the base with the point's values applied.
  RunSpec run_spec(const Assignment& a) const;
  // The same run as `indexsim run` arguments (without --db), so that a worker process can make it.
  std::vector<std::string> run_args(const Assignment& a) const;
};

// Whether `path` is something an axis may vary; when not, `why` says what is accepted.
bool valid_axis_path(const std::string& path, std::string* why = nullptr);
// Expands {from, to, step} (arithmetic) or {from, to, factor} (geometric), `to` included.
std::vector<std::string> expand_range(double from, double to, double step, double factor);
// Shortest text of a number that reads back to the same double ("4096", "0.25").
std::string number_text(double v);

}  // namespace indexsim::sim::sweep
