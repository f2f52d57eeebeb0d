// SPDX-License-Identifier: Apache-2.0
#include "sim/cli/cli.hpp"

#include <cmath>
#include <cstdio>
#include <map>
#include <stdexcept>

#include <CLI/CLI.hpp>

namespace indexsim::cli {

namespace {

// CLI11's usage line, in the tool's spelling ("usage: indexsim run [OPTIONS]"), which the tests and
// the top-level help share.
class Formatter : public CLI::Formatter {
 public:
  std::string make_usage(const CLI::App* app, std::string name) const override {
    std::string s = CLI::Formatter::make_usage(app, std::move(name));
    const std::string cap = "Usage:";
    const size_t at = s.find(cap);
    if (at != std::string::npos) s.replace(at, cap.size(), "usage:");
    return s;
  }
};

// CLI11's parse errors in the tool's words, each naming the argument (tests/python/test_bad_input.py).
[[noreturn]] void refuse(const CLI::ParseError& e, const CLI::App& app, const std::vector<std::string>& args) {
  const std::string what = e.what();
  // CLI11 names an option by its long name; say the one the user typed ("-o", not "--output").
  const auto typed = [&](std::string name) {
    if (const CLI::Option* o = app.get_option_no_throw(name)) {
      for (const auto& s : o->get_snames())
        for (const auto& a : args)
          if (a == "-" + s) return "-" + s;
    }
    return name;
  };
  if (dynamic_cast<const CLI::ExtrasError*>(&e)) {
    const auto rest = app.remaining();
    throw std::invalid_argument("unknown argument '" + (rest.empty() ? what : rest.front()) + "'");
  }
  if (dynamic_cast<const CLI::ArgumentMismatch*>(&e)) {
    const std::string name = typed(what.substr(0, what.find(':')));
    if (what.find("At Most") != std::string::npos) throw std::invalid_argument(name + " is given more than once");
    if (what.find("missing") != std::string::npos) throw std::invalid_argument(name + " needs a value");
  }
  throw std::invalid_argument(what);
}

// "--hardware NAME|FILE": the option's name and what its value is, for the help.
std::pair<std::string, std::string> split_meta(const std::string& spec) {
  const size_t sp = spec.find(' ');
  if (sp == std::string::npos) return {spec, "VALUE"};
  return {spec.substr(0, sp), spec.substr(sp + 1)};
}

}  // namespace

uint64_t parse_count(const std::string& name, const std::string& v, uint64_t max) {
  size_t used = 0;
  long double d = 0;
  try {
    d = std::stold(v, &used);
  } catch (...) {
    used = 0;
  }
  // Range before the cast: converting 1e30 or nan to an integer is undefined.
  if (v.empty() || used != v.size() || !(d >= 0) || d >= 18446744073709551616.0L || d != std::floor(d))
    throw std::invalid_argument(name + " = '" + v + "': must be a non-negative integer");
  if (d > static_cast<long double>(max))
    throw std::invalid_argument(name + " = '" + v + "': out of range (at most " + std::to_string(max) + ")");
  return static_cast<uint64_t>(d);
}

double parse_finite(const std::string& name, const std::string& v) {
  size_t used = 0;
  double d = 0;
  try {
    d = std::stod(v, &used);
  } catch (...) {
    used = 0;
  }
  // No option takes nan or inf, and none a negative value: 0 is each one's "unset" or floor.
  if (v.empty() || used != v.size() || !std::isfinite(d)) throw std::invalid_argument(name + " = '" + v + "': must be a finite number");
  if (d < 0) throw std::invalid_argument(name + " = '" + v + "': must be >= 0");
  return d;
}

struct Cli::Impl {
  CLI::App app;
  std::map<std::string, CLI::Option*> opts;
  std::vector<std::string> words;
  std::vector<std::pair<std::string, std::string>> free;
  bool free_on = false;
  explicit Impl(const std::string& description) : app(description) {}
  void keep(const std::string& names, CLI::Option* o) {
    // "-o,--output": either name reads it.
    size_t start = 0;
    for (size_t comma; (comma = names.find(',', start)) != std::string::npos; start = comma + 1) opts[names.substr(start, comma - start)] = o;
    opts[names.substr(start)] = o;
  }
  const CLI::Option* get(const std::string& name) const {
    auto it = opts.find(name);
    // A command asking for an option it did not declare is a defect of the command, not bad input.
    if (it == opts.end()) throw std::logic_error("option " + name + " is read but not declared");
    return it->second;
  }
};

Cli::Cli(const std::string& command, const std::string& description, const std::string& footer)
    : impl_(std::make_unique<Impl>(description)) {
  impl_->app.name("indexsim " + command);
  impl_->app.formatter(std::make_shared<Formatter>());
  if (!footer.empty()) impl_->app.footer(footer);
}

Cli::~Cli() = default;

Cli& Cli::option(const std::string& spec, const std::string& help, bool required) {
  const auto [name, meta] = split_meta(spec);
  CLI::Option* o = impl_->app.add_option(name, help)->multi_option_policy(CLI::MultiOptionPolicy::Throw)->type_name(meta);
  if (required) o->required();
  impl_->keep(name, o);
  return *this;
}

Cli& Cli::repeated(const std::string& spec, const std::string& help) {
  const auto [name, meta] = split_meta(spec);
  // One value an occurrence: `--set a --set b`, never `--set a b`.
  impl_->keep(name, impl_->app.add_option(name, help)->expected(1)->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
                          ->allow_extra_args(false)->type_name(meta + " ..."));
  return *this;
}

Cli& Cli::flag(const std::string& name, const std::string& help) {
  impl_->keep(name, impl_->app.add_flag(name, help)->multi_option_policy(CLI::MultiOptionPolicy::Throw));
  return *this;
}

Cli& Cli::optional(const std::string& spec, const std::string& help) {
  const auto [name, meta] = split_meta(spec);
  impl_->keep(name,
              impl_->app.add_option(name, help)->expected(0, 1)->multi_option_policy(CLI::MultiOptionPolicy::Throw)->type_name("[" + meta + "]"));
  return *this;
}

Cli& Cli::positionals(const std::string& spec, const std::string& help) {
  const auto [name, meta] = split_meta(spec);
  impl_->app.add_option(name, impl_->words, help)->type_name(meta == "VALUE" ? "" : meta);
  return *this;
}

Cli& Cli::free_options(const std::string& help) {
  impl_->app.allow_extras();
  impl_->free_on = true;
  impl_->app.footer(impl_->app.get_footer() + (impl_->app.get_footer().empty() ? "" : "\n") + help);
  return *this;
}

bool Cli::parse(const Args& args) {
  // CLI11 reads the arguments from the back.
  std::vector<std::string> rev(args.rbegin(), args.rend());
  try {
    impl_->app.parse(rev);
  } catch (const CLI::CallForHelp&) {
    std::fputs(impl_->app.help().c_str(), stdout);
    return false;
  } catch (const CLI::ParseError& e) {
    refuse(e, impl_->app, args);
  }
  if (impl_->free_on) {
    // What no declared option took, in order: `--key value`, `--key=value`, and bare words.
    const std::vector<std::string> rest = impl_->app.remaining();
    for (size_t i = 0; i < rest.size(); ++i) {
      const std::string& a = rest[i];
      if (a.rfind("--", 0) != 0) {
        impl_->words.push_back(a);
        continue;
      }
      const size_t eq = a.find('=');
      if (eq != std::string::npos) {
        impl_->free.emplace_back(a.substr(2, eq - 2), a.substr(eq + 1));
      } else {
        if (i + 1 >= rest.size() || rest[i + 1].rfind("--", 0) == 0) throw std::invalid_argument(a + " needs a value");
        impl_->free.emplace_back(a.substr(2), rest[++i]);
      }
    }
  }
  return true;
}

std::string Cli::help() const { return impl_->app.help(); }

bool Cli::has(const std::string& name) const { return impl_->get(name)->count() > 0; }

std::string Cli::value(const std::string& name, const std::string& fallback) const {
  const CLI::Option* o = impl_->get(name);
  return o->count() == 0 || o->results().empty() ? fallback : o->results().front();
}

std::vector<std::string> Cli::values(const std::string& name) const {
  const CLI::Option* o = impl_->get(name);
  return o->count() == 0 ? std::vector<std::string>{} : o->results();
}

uint64_t Cli::u64(const std::string& name, uint64_t fallback) const {
  return has(name) ? parse_count(name, value(name), UINT64_MAX) : fallback;
}

uint32_t Cli::u32(const std::string& name, uint32_t fallback) const {
  return has(name) ? static_cast<uint32_t>(parse_count(name, value(name), UINT32_MAX)) : fallback;
}

uint32_t Cli::threads(const std::string& name, uint32_t fallback) const {
  const uint32_t n = u32(name, fallback);
  if (n < 1 || n > 256) throw std::invalid_argument(name + " " + std::to_string(n) + ": must be between 1 and 256 threads");
  return n;
}

double Cli::f64(const std::string& name, double fallback) const {
  return has(name) ? parse_finite(name, value(name)) : fallback;
}

std::optional<std::string> Cli::optional_value(const std::string& name) const {
  if (!has(name)) return std::nullopt;
  return value(name);
}

const std::vector<std::string>& Cli::positional() const { return impl_->words; }

void Cli::only_for(const std::vector<const char*>& names, const std::string& what) const {
  for (const char* n : names)
    if (has(n)) throw std::invalid_argument(std::string(n) + " applies to " + what);
}

const std::vector<std::pair<std::string, std::string>>& Cli::free() const { return impl_->free; }

}  // namespace indexsim::cli
