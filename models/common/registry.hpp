// SPDX-License-Identifier: Apache-2.0
// Name → factory registries. A model file registers its implementation with INDEXSIM_REGISTER;
// a config picks it by name (`impl: hbm3e`). The registry records the source file of each entry so
// that a test can check that every model file under models/ is registered.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace indexsim::config {

struct RegistryEntryInfo {
  std::string kind;   // the interface, e.g. "memory"
  std::string name;   // the impl name, e.g. "hbm3e"
  std::string file;   // the registering source file, relative to the repo root
};

// Every registration of every registry, for the "is every model file registered" test.
std::vector<RegistryEntryInfo>& all_registrations();

template <class Base, class... Args>
class Registry {
 public:
  using Factory = std::function<std::unique_ptr<Base>(Args...)>;
  static Registry& instance() {
    static Registry r;
    return r;
  }
  bool add(const std::string& kind, const std::string& name, const std::string& file, Factory f) {
    factories_[name] = std::move(f);
    all_registrations().push_back({kind, name, file});
    return true;
  }
  bool has(const std::string& name) const { return factories_.count(name) != 0; }
  std::unique_ptr<Base> make(const std::string& name, Args... args) const {
    auto it = factories_.find(name);
    if (it == factories_.end()) throw std::out_of_range(name);
    return it->second(std::forward<Args>(args)...);
  }
  std::vector<std::string> names() const {
    std::vector<std::string> v;
    for (const auto& kv : factories_) v.push_back(kv.first);
    return v;
  }

 private:
  std::map<std::string, Factory> factories_;
};

std::string repo_relative(const char* file);

}  // namespace indexsim::config

#define INDEXSIM_CONCAT_(a, b) a##b
#define INDEXSIM_CONCAT(a, b) INDEXSIM_CONCAT_(a, b)
// INDEXSIM_REGISTER(RegistryType, "kind", "name", factory-lambda)
#define INDEXSIM_REGISTER(REG, KIND, NAME, ...)                                            \
  static const bool INDEXSIM_CONCAT(indexsim_registered_, __LINE__) =                     \
      REG::instance().add(KIND, NAME, ::indexsim::config::repo_relative(__FILE__), __VA_ARGS__)
