// SPDX-License-Identifier: Apache-2.0
#include "models/common/params.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <set>
#include <sstream>

#include "models/common/utf8.hpp"

namespace indexsim::config {

namespace {
std::string format_rule_number(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

std::vector<std::string> split_path(const std::string& path) {
  std::vector<std::string> parts;
  std::string cur;
  for (char c : path) {
    if (c == '.') {
      parts.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  parts.push_back(cur);
  return parts;
}
}  // namespace

ConfigError::ConfigError(const std::string& f, const std::string& p, const std::string& v,
                         const std::string& r)
    : std::runtime_error(f + ": " + (p.empty() ? std::string("<root>") : p) + " = '" + v + "': " + r),
      file(f), path(p), value(v), rule(r) {}

std::string Rule::describe() const {
  std::ostringstream os;
  if (!one_of.empty()) {
    os << "must be one of {";
    for (size_t i = 0; i < one_of.size(); ++i) os << (i ? ", " : "") << one_of[i];
    os << "}";
    return os.str();
  }
  if (integer_power_of_two) return max ? "must be a power of two, at most " + format_rule_number(*max) : "must be a positive power of two";
  if (min && max) return "must be in [" + format_rule_number(*min) + ", " + format_rule_number(*max) + "]";
  if (min) return std::string("must be ") + (min_exclusive ? "> " : ">= ") + format_rule_number(*min);
  if (max) return "must be <= " + format_rule_number(*max);
  return "any value";
}

std::string yaml_scalar_text(const YAML::Node& n) {
  if (!n || n.IsNull()) return "";
  if (n.IsScalar()) return n.Scalar();
  YAML::Emitter e;
  e << YAML::Flow << n;
  return e.c_str();
}

Node::Node(std::shared_ptr<Document> doc, YAML::Node node, std::string path)
    : doc_(std::move(doc)), node_(std::move(node)), path_(std::move(path)) {}

const std::string& Node::file() const { return doc_->file(); }

void Node::fail(const std::string& key, const std::string& value, const std::string& rule) const {
  throw ConfigError(doc_->file(), key.empty() ? path_ : key_path(key), value, rule);
}

// yaml-cpp's operator[] on a non-const node inserts the key: every lookup goes through a const node.
static YAML::Node lookup(const YAML::Node& map, const std::string& key) {
  if (!map.IsMap()) return YAML::Node(YAML::NodeType::Undefined);
  const YAML::Node& cmap = map;
  return cmap[key];
}

bool Node::has(const std::string& key) const {
  YAML::Node v = lookup(node_, key);
  return v.IsDefined() && !v.IsNull();
}

std::vector<std::string> Node::keys() const {
  std::vector<std::string> out;
  if (node_.IsMap())
    for (const auto& kv : node_) out.push_back(kv.first.as<std::string>());
  return out;
}

YAML::Node Node::get(const std::string& key, bool required) const {
  if (!node_.IsMap()) fail("", yaml_scalar_text(node_), "must be a mapping");
  YAML::Node v = lookup(node_, key);
  if (!v.IsDefined() || v.IsNull()) {
    if (required) fail(key, "", "required key is missing");
    return YAML::Node(YAML::NodeType::Undefined);
  }
  doc_->mark_used(key_path(key));
  return v;
}

void Node::note(const std::string& key) const {
  YAML::Node v = lookup(node_, key);
  if (!v.IsDefined()) return;
  std::function<void(const YAML::Node&, const std::string&)> mark = [&](const YAML::Node& n, const std::string& p) {
    doc_->mark_used(p);
    if (n.IsMap())
      for (const auto& kv : n) mark(kv.second, p + "." + kv.first.as<std::string>());
    if (n.IsSequence())
      for (size_t i = 0; i < n.size(); ++i) mark(n[i], p + "." + std::to_string(i));
  };
  mark(v, key_path(key));
}

template <class T>
T Node::convert(const std::string& key, const YAML::Node& v, const Rule& rule) const {
  const std::string text = yaml_scalar_text(v);
  if (!v.IsScalar()) fail(key, text, "must be a scalar");
  T out{};
  if constexpr (std::is_same_v<T, bool>) {
    if (text == "true" || text == "True" || text == "1") out = true;
    else if (text == "false" || text == "False" || text == "0") out = false;
    else fail(key, text, "must be true or false");
  } else if constexpr (std::is_same_v<T, std::string>) {
    out = text;
    if (!rule.one_of.empty() &&
        std::find(rule.one_of.begin(), rule.one_of.end(), out) == rule.one_of.end())
      fail(key, text, rule.describe());
  } else {
    // Numbers: parse strictly, so "12ns" or "1e" is an error rather than 12.
    double d = 0;
    size_t used = 0;
    try {
      d = std::stod(text, &used);
    } catch (...) {
      used = 0;
    }
    if (used == 0 || used != text.size() || !std::isfinite(d)) fail(key, text, "must be a number");
    if constexpr (std::is_integral_v<T>) {
      if (std::floor(d) != d) fail(key, text, "must be an integer");
      if (std::is_unsigned_v<T> && d < 0) fail(key, text, "must be >= 0 (a size or count)");
      // Never narrow silently: 2^32 into a 32-bit count would wrap to 0 (and divide by it).
      const double limit = std::ldexp(1.0, std::numeric_limits<T>::digits);   // 2^bits (2^31 signed)
      if (d >= limit || d < -limit)
        fail(key, text, "out of range: at most " + std::to_string(std::numeric_limits<T>::max()));
    }
    if (rule.min && (rule.min_exclusive ? d <= *rule.min : d < *rule.min)) fail(key, text, rule.describe());
    if (rule.max && d > *rule.max) fail(key, text, rule.describe());
    if (rule.integer_power_of_two) {
      const auto u = static_cast<uint64_t>(d);
      if (d < 1 || (u & (u - 1)) != 0) fail(key, text, rule.describe());
    }
    out = static_cast<T>(d);
  }
  return out;
}

template <class T>
T Node::req(const std::string& key, const Rule& rule) const {
  T v = convert<T>(key, get(key, true), rule);
  doc_->record(key_path(key), v);
  return v;
}

template <class T>
T Node::opt(const std::string& key, const T& fallback, const Rule& rule) const {
  YAML::Node n = get(key, false);
  T v = n.IsDefined() ? convert<T>(key, n, rule) : fallback;
  doc_->record(key_path(key), v);
  return v;
}

template <class T>
std::vector<T> Node::req_list(const std::string& key, const Rule& rule) const {
  YAML::Node n = get(key, true);
  if (!n.IsSequence()) fail(key, yaml_scalar_text(n), "must be a list");
  std::vector<T> out;
  nlohmann::json arr = nlohmann::json::array();
  for (size_t i = 0; i < n.size(); ++i) {
    doc_->mark_used(key_path(key) + "." + std::to_string(i));
    out.push_back(convert<T>(key + "." + std::to_string(i), n[i], rule));
    arr.push_back(out.back());
  }
  doc_->record(key_path(key), arr);
  return out;
}

Node Node::child(const std::string& key) const {
  YAML::Node n = get(key, true);
  if (!n.IsMap()) fail(key, yaml_scalar_text(n), "must be a mapping");
  return Node(doc_, n, key_path(key));
}

std::optional<Node> Node::opt_child(const std::string& key) const {
  YAML::Node n = get(key, false);
  if (!n.IsDefined()) return std::nullopt;
  if (!n.IsMap()) fail(key, yaml_scalar_text(n), "must be a mapping");
  return Node(doc_, n, key_path(key));
}

std::vector<Node> Node::children(const std::string& key) const {
  YAML::Node n = get(key, true);
  if (!n.IsSequence()) fail(key, yaml_scalar_text(n), "must be a list of mappings");
  std::vector<Node> out;
  for (size_t i = 0; i < n.size(); ++i) {
    const std::string p = key_path(key) + "." + std::to_string(i);
    doc_->mark_used(p);
    if (!n[i].IsMap()) throw ConfigError(doc_->file(), p, yaml_scalar_text(n[i]), "must be a mapping");
    out.emplace_back(doc_, n[i], p);
  }
  return out;
}

template bool Node::req<bool>(const std::string&, const Rule&) const;
template int Node::req<int>(const std::string&, const Rule&) const;
template int64_t Node::req<int64_t>(const std::string&, const Rule&) const;
template uint32_t Node::req<uint32_t>(const std::string&, const Rule&) const;
template uint64_t Node::req<uint64_t>(const std::string&, const Rule&) const;
template double Node::req<double>(const std::string&, const Rule&) const;
template std::string Node::req<std::string>(const std::string&, const Rule&) const;
template bool Node::opt<bool>(const std::string&, const bool&, const Rule&) const;
template int Node::opt<int>(const std::string&, const int&, const Rule&) const;
template int64_t Node::opt<int64_t>(const std::string&, const int64_t&, const Rule&) const;
template uint32_t Node::opt<uint32_t>(const std::string&, const uint32_t&, const Rule&) const;
template uint64_t Node::opt<uint64_t>(const std::string&, const uint64_t&, const Rule&) const;
template double Node::opt<double>(const std::string&, const double&, const Rule&) const;
template std::string Node::opt<std::string>(const std::string&, const std::string&, const Rule&) const;
template std::vector<int> Node::req_list<int>(const std::string&, const Rule&) const;
template std::vector<uint32_t> Node::req_list<uint32_t>(const std::string&, const Rule&) const;
template std::vector<double> Node::req_list<double>(const std::string&, const Rule&) const;
template std::vector<std::string> Node::req_list<std::string>(const std::string&, const Rule&) const;

namespace {
YAML::Node merged(const YAML::Node& base, const YAML::Node& over);

// A mapping with `preset: NAME` is the file NAME.yaml (beside the file that names it: a path
// relative to its folder) with the mapping's other keys laid over it, so that a section shared by
// several presets is written once (`cxl: {preset: sections/cxl-type3-x16}`). Presets may name
// presets, eight deep.
bool contains_preset(const YAML::Node& n) {
  if (n.IsMap()) {
    for (const auto& kv : n)
      if (kv.first.as<std::string>() == "preset" || contains_preset(kv.second)) return true;
  } else if (n.IsSequence()) {
    for (const auto& e : n)
      if (contains_preset(e)) return true;
  }
  return false;
}

// Aliases make a YAML graph that expands to a tree exponentially larger than its text (ten lists
// of ten aliases, seven levels deep: 10^7 nodes from 300 bytes). Every reader walks the tree, so
// a document whose expansion passes kMaxNodes is refused before anything walks it; the count stops
// at the limit, so checking costs at most kMaxNodes steps. Real configs have a few thousand nodes.
// An alias inside the node it names (`&b {x: 1, y: *b}`) makes a cycle: the walk also stops
// beyond kMaxDepth levels, where a configuration has fewer than ten (the fuzzer found the cycle:
// a stack overflow in every reader).
constexpr uint64_t kMaxNodes = 1'000'000;
constexpr int kMaxDepth = 256;
constexpr uint64_t kTooDeep = kMaxNodes + 2;  // the count a walk returns when it hits the depth limit
uint64_t count_nodes(const YAML::Node& n, uint64_t count, int depth) {
  if (depth > kMaxDepth) return kTooDeep;
  if (++count > kMaxNodes) return count;
  if (n.IsMap()) {
    for (const auto& kv : n) {
      count = count_nodes(kv.first, count, depth + 1);
      if (count > kMaxNodes) return count;
      count = count_nodes(kv.second, count, depth + 1);
      if (count > kMaxNodes) return count;
    }
  } else if (n.IsSequence()) {
    for (const auto& v : n) {
      count = count_nodes(v, count, depth + 1);
      if (count > kMaxNodes) return count;
    }
  }
  return count;
}
// Every scalar must be UTF-8: the resolved document is stored as JSON (walked after
// refuse_oversized, so the walk is bounded).
void refuse_invalid_utf8(const YAML::Node& n, const std::string& file, const std::string& path, int depth = 0) {
  if (depth > kMaxDepth) return;
  if (n.IsScalar()) {
    if (!valid_utf8(n.Scalar())) throw ConfigError(file, path, "", "the value is not valid UTF-8 text");
  } else if (n.IsMap()) {
    for (const auto& kv : n) {
      const std::string k = kv.first.IsScalar() ? kv.first.Scalar() : "?";
      if (!valid_utf8(k)) throw ConfigError(file, path, "", "a key is not valid UTF-8 text");
      refuse_invalid_utf8(kv.second, file, path.empty() ? k : path + "." + k, depth + 1);
    }
  } else if (n.IsSequence()) {
    for (size_t i = 0; i < n.size(); ++i) refuse_invalid_utf8(n[i], file, path + "." + std::to_string(i), depth + 1);
  }
}

void refuse_oversized(const YAML::Node& n, const std::string& file, const std::string& key = "") {
  const uint64_t count = count_nodes(n, 0, 0);
  if (count == kTooDeep)
    throw ConfigError(file, key, "", "nested deeper than " + std::to_string(kMaxDepth) +
                                         " levels (an alias inside the node it names?)");
  if (count > kMaxNodes)
    throw ConfigError(file, key, "", "the document expands to more than " + std::to_string(kMaxNodes) +
                                         " nodes (aliases of aliases: an alias bomb?); a configuration has a few thousand");
}

// YAML leaves duplicate keys to the reader, and yaml-cpp keeps the first silently: a second
// `ways:` in a section would be ignored. A duplicate is an error naming the key.
void refuse_duplicate_keys(const YAML::Node& n, const std::string& file, const std::string& path, int depth = 0) {
  if (depth > 64) return;   // deeper is not a configuration; the readers refuse it by key
  if (n.IsMap()) {
    std::set<std::string> seen;
    for (const auto& kv : n) {
      const std::string k = kv.first.IsScalar() ? kv.first.Scalar() : yaml_scalar_text(kv.first);
      const std::string at = path.empty() ? k : path + "." + k;
      if (!seen.insert(k).second) throw ConfigError(file, at, "", "the key appears twice in one mapping");
      refuse_duplicate_keys(kv.second, file, at, depth + 1);
    }
  } else if (n.IsSequence()) {
    for (size_t i = 0; i < n.size(); ++i) refuse_duplicate_keys(n[i], file, path + "." + std::to_string(i), depth + 1);
  }
}

YAML::Node expand_presets(const YAML::Node& n, const std::string& file, const std::string& path, int depth) {
  if (!contains_preset(n)) return n;  // rebuilding a subtree costs yaml-cpp a deep copy: only along a preset's path
  if (n.IsSequence()) {
    YAML::Node out(YAML::NodeType::Sequence);
    for (size_t i = 0; i < n.size(); ++i) out.push_back(expand_presets(n[i], file, path + "." + std::to_string(i), depth));
    return out;
  }
  if (!n.IsMap()) return n;
  YAML::Node out(YAML::NodeType::Map);
  for (const auto& kv : n) {
    const std::string k = kv.first.as<std::string>();
    if (k == "preset") continue;
    out[k] = expand_presets(kv.second, file, path.empty() ? k : path + "." + k, depth);
  }
  const YAML::Node preset = n["preset"];
  if (!preset.IsDefined()) return out;
  const std::string key = path.empty() ? "preset" : path + ".preset";
  if (!preset.IsScalar()) throw ConfigError(file, key, yaml_scalar_text(preset), "must name a preset file");
  if (depth >= 8) throw ConfigError(file, key, preset.Scalar(), "presets nested deeper than 8 (a cycle?)");
  const std::string preset_file =
      (std::filesystem::path(file).parent_path() / (preset.Scalar() + ".yaml")).lexically_normal().string();
  std::ifstream in(preset_file);
  if (!in) throw ConfigError(file, key, preset.Scalar(), "no preset file " + preset_file);
  YAML::Node body;
  try {
    body = YAML::Load(in);
  } catch (const YAML::Exception& e) {
    throw ConfigError(preset_file, "", "", std::string("YAML syntax error: ") + e.what());
  }
  if (!body.IsMap()) throw ConfigError(preset_file, "", "", "a preset's top level must be a mapping (the section's keys)");
  refuse_oversized(body, preset_file);
  refuse_invalid_utf8(body, preset_file, "");
  refuse_duplicate_keys(body, preset_file, "");
  return merged(expand_presets(body, preset_file, "", depth + 1), out);
}
}  // namespace

std::shared_ptr<Document> Document::load_file(const std::string& file) {
  std::ifstream in(file);
  if (!in) throw ConfigError(file, "", "", "cannot open file");
  std::stringstream ss;
  ss << in.rdbuf();
  auto d = load_string(ss.str(), file);
  d->tree_ = expand_presets(d->tree_, file, "", 0);
  return d;
}

std::shared_ptr<Document> Document::load_string(const std::string& text, const std::string& name) {
  auto d = std::make_shared<Document>();
  d->file_ = name;
  try {
    d->tree_ = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw ConfigError(name, "", "", std::string("YAML syntax error: ") + e.what());
  }
  if (!d->tree_.IsMap()) throw ConfigError(name, "", "", "top level must be a mapping");
  refuse_oversized(d->tree_, name);
  refuse_invalid_utf8(d->tree_, name, "");
  refuse_duplicate_keys(d->tree_, name, "");
  return d;
}

void Document::set(const std::string& assignment) {
  const auto eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0)
    throw ConfigError(file_, assignment, "", "--set needs path=value");
  const std::string path = assignment.substr(0, eq);
  const std::string value = assignment.substr(eq + 1);
  auto parts = split_path(path);
  for (const auto& p : parts)
    if (p.empty()) throw ConfigError(file_, path, value, "--set path has an empty key (two dots, or a dot at an end)");
  YAML::Node cur = tree_;
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    YAML::Node next = lookup(cur, parts[i]);
    if (!next.IsDefined() || next.IsNull()) {
      // A section the file does not have: made here, and its keys are then checked like any
      // (an unknown one is an error naming it). A fresh handle: the node a missing key returns is
      // invalid, and touching it is yaml-cpp's "invalid node".
      cur[parts[i]] = YAML::Node(YAML::NodeType::Map);
      YAML::Node made = cur[parts[i]];
      cur.reset(made);
      continue;
    }
    if (!next.IsMap()) throw ConfigError(file_, path, value, "--set path crosses a non-mapping value");
    cur.reset(next);
  }
  YAML::Node parsed;
  try {
    parsed = YAML::Load(value);
  } catch (const YAML::Exception&) {
    parsed = YAML::Node(value);
  }
  refuse_oversized(parsed, file_, path);
  refuse_invalid_utf8(parsed, file_, path);
  cur[parts.back()] = parsed;
}

namespace {
YAML::Node merged(const YAML::Node& base, const YAML::Node& over) {
  if (!base.IsMap() || !over.IsMap()) return YAML::Clone(over);
  YAML::Node out = YAML::Clone(base);
  for (const auto& kv : over) {
    const std::string k = kv.first.as<std::string>();
    YAML::Node b = lookup(out, k);
    out[k] = b.IsDefined() ? merged(b, kv.second) : YAML::Clone(kv.second);
  }
  return out;
}
}  // namespace

void Document::inherit(const std::function<std::string(const std::string&)>& resolve, int depth) {
  YAML::Node b = lookup(tree_, "base");
  if (!b.IsDefined()) return;
  if (!b.IsScalar()) throw ConfigError(file_, "base", yaml_scalar_text(b), "must name another config");
  if (depth > 8) throw ConfigError(file_, "base", b.Scalar(), "base chain deeper than 8 (a cycle?)");
  std::string path;
  try {
    path = resolve(b.Scalar());
  } catch (const std::exception& e) {
    throw ConfigError(file_, "base", b.Scalar(), e.what());
  }
  auto parent = load_file(path);
  parent->inherit(resolve, depth + 1);
  YAML::Node mine = YAML::Clone(tree_);
  mine.remove("base");
  tree_ = merged(parent->tree_, mine);
  record("base", b.Scalar());
}

Node Document::root() { return Node(shared_from_this(), tree_, ""); }

void Document::record(const std::string& path, const nlohmann::json& value) {
  nlohmann::json* cur = &resolved_;
  auto parts = split_path(path);
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    auto& next = (*cur)[parts[i]];
    if (!next.is_object()) next = nlohmann::json::object();
    cur = &next;
  }
  (*cur)[parts.back()] = value;
}

void Document::check_unused_rec(const YAML::Node& n, const std::string& path) const {
  if (!path.empty() && !used_.count(path))
    throw ConfigError(file_, path, yaml_scalar_text(n), "unknown key (not read by any model; misspelt?)");
  if (n.IsMap()) {
    for (const auto& kv : n)
      check_unused_rec(kv.second, path.empty() ? kv.first.as<std::string>() : path + "." + kv.first.as<std::string>());
  } else if (n.IsSequence()) {
    for (size_t i = 0; i < n.size(); ++i) check_unused_rec(n[i], path + "." + std::to_string(i));
  }
}

void Document::check_unused() const { check_unused_rec(tree_, ""); }

std::string stable_hash(const nlohmann::json& j) {
  const std::string s = j.dump();  // nlohmann::json objects keep keys sorted: the dump is canonical
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

}  // namespace indexsim::config
