// SPDX-License-Identifier: Apache-2.0
// Typed, validated access to YAML configuration.
//
// Every value is read through a Node, which knows the file and the key path it came from, so an
// error can say exactly where it is. Every key that is read (or defaulted) is recorded in the
// Document's resolved tree; after loading, Document::check_unused() reports any key nobody read:
// a misspelt key is an error, never a silent default.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

namespace indexsim::config {

// One error, naming the file, the key path, the value and the rule it broke.
class ConfigError : public std::runtime_error {
 public:
  ConfigError(const std::string& file, const std::string& path, const std::string& value,
              const std::string& rule);
  const std::string file, path, value, rule;
};

// A validation rule for numbers and strings. Build with the helpers below.
struct Rule {
  std::optional<double> min, max;
  bool min_exclusive = false;
  std::vector<std::string> one_of;
  bool integer_power_of_two = false;

  static Rule any() { return {}; }
  static Rule positive() { Rule r; r.min = 0; r.min_exclusive = true; return r; }
  // A digital part's clock: 1 MHz to 100 GHz. Outside that a value is a typo or a unit slip (1e-300
  // MHz ran a 10^13-microsecond step to exit 0), and time in picoseconds loses its meaning.
  static Rule clock_MHz() { return range(1, 1e5); }
  static Rule non_negative() { Rule r; r.min = 0; return r; }
  static Rule range(double lo, double hi) { Rule r; r.min = lo; r.max = hi; return r; }
  static Rule fraction() { return range(0.0, 1.0); }
  static Rule power_of_two() { Rule r = positive(); r.integer_power_of_two = true; return r; }
  static Rule power_of_two_up_to(double hi) { Rule r = power_of_two(); r.max = hi; return r; }
  static Rule choice(std::vector<std::string> v) { Rule r; r.one_of = std::move(v); return r; }
  std::string describe() const;
};

class Document;

// A view of one mapping in a document.
class Node {
 public:
  Node(std::shared_ptr<Document> doc, YAML::Node node, std::string path);

  template <class T> T req(const std::string& key, const Rule& rule = Rule::any()) const;
  template <class T> T opt(const std::string& key, const T& fallback, const Rule& rule = Rule::any()) const;
  template <class T> std::vector<T> req_list(const std::string& key, const Rule& rule = Rule::any()) const;

  Node child(const std::string& key) const;                 // a required mapping
  std::optional<Node> opt_child(const std::string& key) const;
  std::vector<Node> children(const std::string& key) const; // a required list of mappings
  bool has(const std::string& key) const;
  std::vector<std::string> keys() const;                    // keys present, in file order

  // Marks a whole subtree as read without interpreting it (e.g. free-form `source:` notes).
  void note(const std::string& key) const;

  std::string path() const { return path_; }
  std::string key_path(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }
  const std::string& file() const;
  [[noreturn]] void fail(const std::string& key, const std::string& value, const std::string& rule) const;
  const YAML::Node& raw() const { return node_; }

 private:
  YAML::Node get(const std::string& key, bool required) const;
  template <class T> T convert(const std::string& key, const YAML::Node& v, const Rule& rule) const;
  std::shared_ptr<Document> doc_;
  YAML::Node node_;
  std::string path_;
};

// A loaded YAML file with its overrides, the set of keys read, and the resolved values.
class Document : public std::enable_shared_from_this<Document> {
 public:
  static std::shared_ptr<Document> load_file(const std::string& file);
  static std::shared_ptr<Document> load_string(const std::string& text, const std::string& name);

  // `a.b.c=value`: replaces or adds a scalar. The value is parsed as YAML (numbers stay numbers).
  void set(const std::string& assignment);

  Node root();
  // `base: NAME` at the top level: the file named by resolve(NAME) is loaded (recursively) and this
  // file's keys are laid over it, mapping by mapping. Call before set() and before reading.
  void inherit(const std::function<std::string(const std::string&)>& resolve, int depth = 0);
  // Throws ConfigError for the first key that was never read.
  void check_unused() const;

  // The values read, defaults included, as JSON with sorted keys: the resolved configuration.
  const nlohmann::json& resolved() const { return resolved_; }
  const std::string& file() const { return file_; }

  // Internal bookkeeping used by Node.
  void mark_used(const std::string& path) { used_.insert(path); }
  void record(const std::string& path, const nlohmann::json& value);

 private:
  void check_unused_rec(const YAML::Node& n, const std::string& path) const;
  std::string file_;
  YAML::Node tree_;
  std::set<std::string> used_;
  nlohmann::json resolved_ = nlohmann::json::object();
};

// Stable 64-bit FNV-1a hash of a JSON value's canonical dump (sorted keys), as 16 hex digits.
std::string stable_hash(const nlohmann::json& j);

// Parses "12.5" style text to double, naming file/path on failure (for CLI --set values).
std::string yaml_scalar_text(const YAML::Node& n);

}  // namespace indexsim::config
