// SPDX-License-Identifier: Apache-2.0
#include "sim/sweep/spec.hpp"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <stdexcept>

#include "models/common/params.hpp"

namespace indexsim::sim::sweep {

using config::ConfigError;
using config::Node;

namespace {

const char* kStepKeys[] = {"phase", "context", "batch", "queries", "chunk", "seed"};

bool parse_number(const std::string& s, double* out) {
  if (s.empty()) return false;
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size() || !std::isfinite(v)) return false;
  *out = v;
  return true;
}

const std::string* find(const Assignment& a, const std::string& path) {
  for (const auto& [p, v] : a)
    if (p == path) return &v;
  return nullptr;
}

// Numbers compare as numbers ("4096" == "4096.0"), everything else as text.
int compare(const std::string& a, const std::string& b) {
  double x, y;
  if (parse_number(a, &x) && parse_number(b, &y)) return x < y ? -1 : (x > y ? 1 : 0);
  return a.compare(b) < 0 ? -1 : (a == b ? 0 : 1);
}

// --- require: expressions ------------------------------------------------------------------
// grammar: or := and ('or' and)* ; and := unary ('and' unary)* ; unary := 'not' unary | '(' or ')' | cmp
//          cmp := operand OP operand ; operand := axis path | number | 'text' | "text"

struct Operand {
  bool is_ref = false;
  std::string text;  // the path for a reference, else the literal
  std::string value(const Assignment& a) const { return is_ref ? *find(a, text) : text; }
};

struct Cmp : Expr {
  Operand l, r;
  std::string op;
  bool eval(const Assignment& a) const override {
    const int c = compare(l.value(a), r.value(a));
    if (op == "==") return c == 0;
    if (op == "!=") return c != 0;
    if (op == "<") return c < 0;
    if (op == "<=") return c <= 0;
    if (op == ">") return c > 0;
    return c >= 0;
  }
};
struct Not : Expr {
  std::shared_ptr<const Expr> e;
  bool eval(const Assignment& a) const override { return !e->eval(a); }
};
// All the terms of one `a and b and c` (or `or`) in a list: as a chain of pairs, n terms were n
// frames deep in eval and in the destructor, and a spec of 10^6 `or`s overflowed the stack.
struct Junction : Expr {
  std::vector<std::shared_ptr<const Expr>> terms;
  bool is_and = true;
  bool eval(const Assignment& a) const override {
    // Left to right, stopping at the first term that decides, as && and || do.
    for (const auto& t : terms)
      if (t->eval(a) != is_and) return !is_and;
    return is_and;
  }
};

class Parser {
 public:
  Parser(const std::string& text, const std::vector<Axis>& axes, const Node& where, const std::string& key)
      : axes_(axes), where_(where), key_(key), text_(text) {
    tokenize();
  }
  std::shared_ptr<const Expr> parse() {
    auto e = parse_or();
    if (pos_ != toks_.size()) fail("unexpected '" + toks_[pos_] + "'");
    return e;
  }

 private:
  [[noreturn]] void fail(const std::string& why) { where_.fail(key_, text_, "constraint expression: " + why); }
  void tokenize() {
    size_t i = 0;
    while (i < text_.size()) {
      const char c = text_[i];
      if (std::isspace(static_cast<unsigned char>(c))) {
        ++i;
      } else if (c == '\'' || c == '"') {
        const size_t end = text_.find(c, i + 1);
        if (end == std::string::npos) fail("unterminated string");
        toks_.push_back(text_.substr(i, end - i + 1));
        i = end + 1;
      } else if (c == '(' || c == ')') {
        toks_.push_back(std::string(1, c));
        ++i;
      } else if (c == '=' || c == '!' || c == '<' || c == '>') {
        std::string op(1, c);
        if (i + 1 < text_.size() && text_[i + 1] == '=') op += '=';
        if (op == "=" || op == "!") fail("unknown operator '" + op + "' (use == != < <= > >=)");
        toks_.push_back(op);
        i += op.size();
      } else {
        size_t j = i;
        while (j < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[j])) || std::string("._-+").find(text_[j]) != std::string::npos)) ++j;
        if (j == i) fail(std::string("unexpected character '") + c + "'");
        toks_.push_back(text_.substr(i, j - i));
        i = j;
      }
    }
  }
  bool accept(const std::string& t) {
    if (pos_ < toks_.size() && toks_[pos_] == t) {
      ++pos_;
      return true;
    }
    return false;
  }
  std::shared_ptr<const Expr> parse_or() {
    auto first = parse_and();
    if (!accept("or")) return first;
    auto j = std::make_shared<Junction>();
    j->is_and = false;
    j->terms.push_back(first);
    do j->terms.push_back(parse_and());
    while (accept("or"));
    return j;
  }
  std::shared_ptr<const Expr> parse_and() {
    auto first = parse_unary();
    if (!accept("and")) return first;
    auto j = std::make_shared<Junction>();
    j->terms.push_back(first);
    do j->terms.push_back(parse_unary());
    while (accept("and"));
    return j;
  }
  // Nesting is bounded: each level is a frame here, in evaluation and in the tree's destructor, and
  // 75,000 `not`s overflowed the stack. No real constraint comes near.
  static constexpr int kMaxDepth = 64;
  struct Deeper {
    Parser& p;
    explicit Deeper(Parser& q) : p(q) {
      if (++p.depth_ > kMaxDepth) p.fail("nested deeper than " + std::to_string(kMaxDepth) + " levels of not/parentheses");
    }
    ~Deeper() { --p.depth_; }
  };
  std::shared_ptr<const Expr> parse_unary() {
    if (accept("not")) {
      Deeper d(*this);
      auto n = std::make_shared<Not>();
      n->e = parse_unary();
      return n;
    }
    if (accept("(")) {
      Deeper d(*this);
      auto e = parse_or();
      if (!accept(")")) fail("missing ')'");
      return e;
    }
    auto c = std::make_shared<Cmp>();
    c->l = operand();
    if (pos_ >= toks_.size()) fail("expected a comparison operator after '" + c->l.text + "'");
    c->op = toks_[pos_++];
    if (c->op != "==" && c->op != "!=" && c->op != "<" && c->op != "<=" && c->op != ">" && c->op != ">=")
      fail("expected a comparison operator, found '" + c->op + "'");
    c->r = operand();
    return c;
  }
  Operand operand() {
    if (pos_ >= toks_.size()) fail("expression ends early");
    const std::string t = toks_[pos_++];
    Operand o;
    double d;
    if (t.front() == '\'' || t.front() == '"') {
      o.text = t.substr(1, t.size() - 2);
    } else if (parse_number(t, &d)) {
      o.text = t;
    } else {
      for (const auto& a : axes_)
        if (a.path == t) {
          o.is_ref = true;
          o.text = t;
          return o;
        }
      std::string names;
      for (const auto& a : axes_) names += (names.empty() ? "" : ", ") + a.path;
      fail("'" + t + "' is neither an axis (" + names + ") nor a number; quote text as '" + t + "'");
    }
    return o;
  }

  const std::vector<Axis>& axes_;
  const Node& where_;
  std::string key_, text_;
  std::vector<std::string> toks_;
  size_t pos_ = 0;
  int depth_ = 0;
};

std::string scalar(const Node& n, const std::string& key, const YAML::Node& v) {
  if (!v.IsScalar()) n.fail(key, config::yaml_scalar_text(v), "must be a scalar");
  return v.Scalar();
}

SweepSpec parse(std::shared_ptr<config::Document> doc) {
  SweepSpec s;
  s.file = doc->file();
  Node root = doc->root();
  s.name = root.opt<std::string>("name", "sweep");
  root.note("description");
  s.share_segments = root.opt<bool>("share_segments", false);

  Node base = root.child("base");
  s.base.hardware = base.req<std::string>("hardware");
  s.base.trace = base.opt<std::string>("trace", "");
  s.base.workload = base.opt<std::string>("workload", "");
  if (s.base.workload.empty() == s.base.trace.empty())
    base.fail("workload", s.base.workload, "give exactly one of base.workload and base.trace");
  s.base.techniques = base.opt<std::string>("techniques", "baseline");
  s.base.fast = base.opt<bool>("fast", false);
  if (base.has("sets")) {
    s.base.sets = base.req_list<std::string>("sets");
    base.note("sets");
  }
  for (const auto& set : s.base.sets) {
    try {
      split_set(set);
    } catch (const std::invalid_argument& e) {
      base.fail("sets", set, e.what());
    }
  }
  if (auto step = base.opt_child("step")) {
    // A sweep point is one step: a decode step or one prefill chunk. A whole prefill (every chunk,
    // time to first token) is `indexsim run --phase prefill`, not a sweep axis yet.
    const auto phase = step->opt<std::string>("phase", "decode", config::Rule::choice({"decode", "chunk"}));
    s.base.step.phase = phase == "decode" ? trace::Phase::decode : trace::Phase::prefill;
    s.base.step.context = step->opt<uint64_t>("context", s.base.step.context, config::Rule::positive());
    s.base.step.batch = step->opt<uint32_t>("batch", s.base.step.batch, config::Rule::positive());
    s.base.step.queries = step->opt<uint32_t>("queries", s.base.step.queries, config::Rule::positive());
    s.base.step.chunk_tokens = step->opt<uint32_t>("chunk", s.base.step.chunk_tokens, config::Rule::positive());
    s.base.step.seed = step->opt<uint64_t>("seed", s.base.step.seed);
  }

  if (auto axes = root.opt_child("axes")) {
    for (const auto& path : axes->keys()) {
      std::string why;
      if (!valid_axis_path(path, &why)) axes->fail(path, path, "unknown axis path: " + why);
      Axis ax{path, {}};
      const YAML::Node v = axes->raw()[path];
      YAML::Node list;
      if (v.IsSequence()) {
        list = v;
      } else if (v.IsMap()) {
        Node a = axes->child(path);
        if (a.has("values")) {
          list = a.raw()["values"];
          a.note("values");
          if (!list.IsSequence()) a.fail("values", config::yaml_scalar_text(list), "must be a list");
          for (const char* k : {"from", "to", "step", "factor"})
            if (a.has(k)) a.fail(k, "", "give either values or a range, not both");
        } else {
          const double from = a.req<double>("from"), to = a.req<double>("to");
          const double step = a.opt<double>("step", 0), factor = a.opt<double>("factor", 0);
          if ((step != 0) == (factor != 0)) a.fail("step", number_text(step), "a range needs exactly one of step and factor");
          if (step != 0 && (step < 0) != (to < from) && to != from) a.fail("step", number_text(step), "must move from `from` towards `to`");
          if (factor != 0 && (from <= 0 || to <= 0 || factor <= 0 || factor == 1 || (factor > 1) != (to >= from)))
            a.fail("factor", number_text(factor), "needs positive from/to and a factor (≠ 1) that moves from `from` towards `to`");
          ax.values = expand_range(from, to, step, factor);
          if (ax.values.size() > 100000) a.fail("to", number_text(to), "range has more than 100000 values");
        }
      } else {
        axes->fail(path, config::yaml_scalar_text(v), "an axis is a list of values, {values: [...]}, {from, to, step} or {from, to, factor}");
      }
      if (list.IsDefined()) {
        for (size_t i = 0; i < list.size(); ++i) ax.values.push_back(scalar(*axes, path + "." + std::to_string(i), list[i]));
        axes->note(path);
      }
      if (ax.values.empty()) axes->fail(path, "", "an axis needs at least one value");
      for (const auto& other : s.axes)
        if (other.path == path) axes->fail(path, path, "axis given twice");
      s.axes.push_back(std::move(ax));
    }
  }

  if (root.has("constraints")) {
    const YAML::Node cs = root.raw()["constraints"];
    if (!cs.IsSequence()) root.fail("constraints", config::yaml_scalar_text(cs), "must be a list");
    doc->mark_used("constraints");
    for (size_t i = 0; i < cs.size(); ++i) {
      const std::string key = "constraints." + std::to_string(i);
      Constraint c;
      if (cs[i].IsScalar()) {
        c.text = cs[i].Scalar();
        c.require = Parser(c.text, s.axes, root, key).parse();
        doc->mark_used(key);
      } else if (cs[i].IsMap()) {
        Node cn(doc, cs[i], key);
        doc->mark_used(key);
        if (cn.has("require")) {
          c.text = cn.req<std::string>("require");
          c.require = Parser(c.text, s.axes, cn, "require").parse();
        }
        if (cn.has("skip")) {
          const YAML::Node sk = cs[i]["skip"];
          cn.note("skip");
          if (!sk.IsSequence()) cn.fail("skip", config::yaml_scalar_text(sk), "must be a list of partial assignments");
          for (size_t j = 0; j < sk.size(); ++j) {
            const std::string where = "skip." + std::to_string(j);
            if (!sk[j].IsMap()) cn.fail(where, config::yaml_scalar_text(sk[j]), "must be a mapping of axis path → value");
            Assignment part;
            for (const auto& kv : sk[j]) {
              const std::string p = kv.first.as<std::string>();
              bool known = false;
              for (const auto& a : s.axes) known = known || a.path == p;
              if (!known) cn.fail(where + "." + p, p, "not an axis of this sweep");
              part.emplace_back(p, scalar(cn, where + "." + p, kv.second));
            }
            c.skip.push_back(std::move(part));
          }
          c.text += (c.text.empty() ? "" : "; ") + std::string("skip ") + std::to_string(c.skip.size()) + " partial assignment(s)";
        }
        if (!c.require && c.skip.empty()) cn.fail("", "", "a constraint needs require: or skip:");
      } else {
        root.fail(key, config::yaml_scalar_text(cs[i]), "a constraint is an expression or {require: ..., skip: [...]}");
      }
      s.constraints.push_back(std::move(c));
    }
  }
  doc->check_unused();
  return s;
}

void apply(RunSpec& r, const std::string& path, const std::string& v) {
  if (path == "hardware") r.hardware = v;
  else if (path == "workload") r.workload = v;
  else if (path == "techniques") r.techniques = v;
  else if (path == "fast") r.fast = v == "true" || v == "1";
  else if (path.rfind("step.", 0) == 0) trace::set_step_param(r.step, path.substr(5), v);
  else r.sets.push_back(path + "=" + v);
}

}  // namespace

std::vector<size_t> SweepSpec::segment_seeds(const std::vector<Assignment>& points) const {
  const auto shared_axis = [](const std::string& p) {
    return p == "step.context" || p == "techniques" || p.rfind("techniques.", 0) == 0;
  };
  std::map<Assignment, size_t> first;  // by the values of the other axes
  std::vector<size_t> seeds;
  for (size_t i = 0; i < points.size(); ++i) {
    Assignment rest;
    for (const auto& pv : points[i])
      if (!shared_axis(pv.first)) rest.push_back(pv);
    seeds.push_back(first.emplace(rest, i).first->second);
  }
  return seeds;
}

bool Constraint::keeps(const Assignment& a) const {
  if (require && !require->eval(a)) return false;
  for (const auto& part : skip) {
    bool all = true;
    for (const auto& [p, v] : part) all = all && compare(*find(a, p), v) == 0;
    if (all) return false;
  }
  return true;
}

bool valid_axis_path(const std::string& path, std::string* why) {
  if (path == "hardware" || path == "workload" || path == "techniques" || path == "fast") return true;
  for (const char* k : kStepKeys)
    if (path == std::string("step.") + k) return true;
  for (const char* head : {"hardware.", "workload.", "techniques."})
    if (path.rfind(head, 0) == 0 && path.size() > std::string(head).size()) return true;
  if (why)
    *why = "expected hardware, workload or techniques (a preset name), a config key under hardware., workload. or "
           "techniques., fast, or step.{phase,context,batch,queries,chunk,seed}";
  return false;
}

std::string number_text(double v) {
  if (v == std::floor(v) && std::fabs(v) < 9.007199254740992e15) {
    char b[32];
    std::snprintf(b, sizeof b, "%.0f", v);
    return b;
  }
  char b[40];
  for (int prec = 6; prec <= 17; ++prec) {
    std::snprintf(b, sizeof b, "%.*g", prec, v);
    if (std::strtod(b, nullptr) == v) break;
  }
  return b;
}

std::vector<std::string> expand_range(double from, double to, double step, double factor) {
  std::vector<std::string> out;
  // Values are computed from the index, not accumulated, so 0.1 steps do not drift; the relative
  // tolerance keeps `to` itself when it is a whole number of steps away.
  const double tol = 1e-9 * std::max(std::fabs(from), std::fabs(to));
  for (size_t i = 0; out.size() <= 100000; ++i) {
    const double v = step != 0 ? from + double(i) * step : from * std::pow(factor, double(i));
    const bool past = (step > 0 || factor > 1) ? v > to + tol : v < to - tol;
    if (past) break;
    // 12 significant digits drop the binary residue (0.1 + 2 x 0.1 = 0.30000000000000004 → 0.3)
    // that would otherwise leak into the config and its hash.
    char b[32];
    std::snprintf(b, sizeof b, "%.12g", v);
    out.push_back(number_text(std::strtod(b, nullptr)));
    if (step == 0 && factor == 0) break;
  }
  return out;
}

SweepSpec SweepSpec::load_file(const std::string& path) { return parse(config::Document::load_file(path)); }

SweepSpec SweepSpec::load_string(const std::string& text, const std::string& name) {
  return parse(config::Document::load_string(text, name));
}

std::vector<Assignment> SweepSpec::points() const {
  std::vector<Assignment> out;
  if (axes.empty()) {
    out.push_back({});
    return out;
  }
  std::vector<size_t> idx(axes.size(), 0);
  for (;;) {
    Assignment a;
    for (size_t i = 0; i < axes.size(); ++i) a.emplace_back(axes[i].path, axes[i].values[idx[i]]);
    bool keep = true;
    for (const auto& c : constraints) keep = keep && c.keeps(a);
    if (keep) out.push_back(std::move(a));
    // The last axis varies fastest, like nested loops written in file order.
    size_t d = axes.size();
    while (d > 0) {
      if (++idx[d - 1] < axes[d - 1].values.size()) break;
      idx[d - 1] = 0;
      --d;
    }
    if (d == 0) break;
  }
  return out;
}

RunSpec SweepSpec::run_spec(const Assignment& a) const {
  RunSpec r = base;
  for (const auto& [p, v] : a) apply(r, p, v);
  return r;
}

std::vector<std::string> SweepSpec::run_args(const Assignment& a) const {
  const RunSpec r = run_spec(a);
  std::vector<std::string> args{"--hardware", r.hardware};
  if (!r.trace.empty()) {
    args.insert(args.end(), {"--trace", r.trace});
  } else {
    args.insert(args.end(), {"--workload", r.workload, "--phase", r.step.phase == trace::Phase::decode ? "decode" : "chunk", "--context",
                             std::to_string(r.step.context), "--batch", std::to_string(r.step.batch), "--queries",
                             std::to_string(r.step.queries), "--chunk", std::to_string(r.step.chunk_tokens), "--seed",
                             std::to_string(r.step.seed)});
  }
  args.insert(args.end(), {"--techniques", r.techniques});
  for (const auto& s : r.sets) args.insert(args.end(), {"--set", s});
  if (r.fast) args.push_back("--fast");
  return args;
}

}  // namespace indexsim::sim::sweep
