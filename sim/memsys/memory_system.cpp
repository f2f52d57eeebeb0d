// SPDX-License-Identifier: Apache-2.0
#include "sim/memsys/memory_system.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>

#include "models/common/port.hpp"

namespace indexsim::sim {

using config::Node;
using config::Rule;
using model::FrontDevice;
using model::kNever;
using model::MemCompletion;
using model::MemoryDevice;
using model::MemRequest;
using model::SharedDevice;
using model::Tick;

namespace {

constexpr uint64_t kWindowMask = (uint64_t{1} << kRegionWindowBits) - 1;

// Recursive on purpose: assigning a config::Node would assign its YAML::Node, and yaml-cpp's
// assignment rebinds the node inside the document rather than the handle.
Node section_node(const Node& at, const std::string& rest, const std::string& dotted, const Node& where) {
  const size_t dot = rest.find('.');
  const std::string part = rest.substr(0, dot);
  if (part.empty() || !at.has(part)) where.fail("regions", dotted, "must name an existing section of the hardware file");
  const Node next = at.child(part);
  return dot == std::string::npos ? next : section_node(next, rest.substr(dot + 1), dotted, where);
}

// Sends each address window to one port, translated to window-local addresses when the port is
// a region's device; the L2's port keeps global addresses so that it can route its misses.
class Router : public MemoryDevice {
 public:
  struct Route {
    int port = -1;
    bool translate = false;
  };
  size_t add_port(std::unique_ptr<MemoryDevice> d) {
    ports_.push_back(std::move(d));
    return ports_.size() - 1;
  }
  void route(size_t window, size_t port, bool translate) {
    if (routes_.size() <= window) routes_.resize(window + 1);
    routes_[window] = {static_cast<int>(port), translate};
  }
  bool try_enqueue(const MemRequest& req, Tick now) override {
    const uint64_t w = req.addr >> kRegionWindowBits;
    if (w >= routes_.size() || routes_[w].port < 0)
      throw std::out_of_range("address " + std::to_string(req.addr) + " lies in no region of this target");
    MemRequest r = req;
    if (routes_[w].translate) r.addr &= kWindowMask;
    last_port_ = routes_[w].port;
    return ports_[last_port_]->try_enqueue(r, now);
  }
  bool refused_per_source() const override { return last_port_ >= 0 && ports_[last_port_]->refused_per_source(); }
  // The port's own key, with the port in the bits above kPortKeyBits.
  static constexpr int kPortKeyBits = 48;
  static constexpr uint64_t kPortKeyMask = (uint64_t{1} << kPortKeyBits) - 1;
  uint64_t refused_queue() const override {
    const uint64_t k = last_port_ < 0 ? model::kAnyQueue : ports_[last_port_]->refused_queue();
    return k == model::kAnyQueue || k > kPortKeyMask ? model::kAnyQueue : uint64_t(last_port_) << kPortKeyBits | k;
  }
  bool may_take(uint64_t key) const override { return ports_[key >> kPortKeyBits]->may_take(key & kPortKeyMask); }
  uint64_t slots_freed() const override {
    uint64_t n = 0;
    for (const auto& p : ports_) {
      const uint64_t f = p->slots_freed();
      if (f == model::kAnyQueue) return model::kAnyQueue;
      n += f;
    }
    return n;
  }
  void warm(const MemRequest& req) override {
    const uint64_t w = req.addr >> kRegionWindowBits;
    if (w >= routes_.size() || routes_[w].port < 0) return;
    MemRequest r = req;
    if (routes_[w].translate) r.addr &= kWindowMask;
    ports_[routes_[w].port]->warm(r);
  }
  uint64_t warm_reach_bytes() const override {
    uint64_t b = 0;
    for (const auto& p : ports_) b = std::max(b, p->warm_reach_bytes());
    return b;
  }
  Tick next_event() const override {
    Tick t = kNever;
    for (const auto& p : ports_) t = std::min(t, p->next_event());
    return t;
  }
  Tick next_retry() const override {
    Tick t = kNever;
    for (const auto& p : ports_) t = std::min(t, p->next_retry());
    return t;
  }
  void advance(Tick now, std::vector<MemCompletion>& done) override {
    for (auto& p : ports_) p->advance(now, done);
  }
  double peak_bandwidth_GBps() const override {
    double b = 0;
    for (const auto& p : ports_) b += p->peak_bandwidth_GBps();
    return b;
  }
  Tick idle_read_latency_ps() const override { return ports_.empty() ? 0 : ports_[0]->idle_read_latency_ps(); }
  uint64_t capacity_bytes() const override {
    uint64_t c = 0;
    for (const auto& p : ports_) c += p->capacity_bytes();
    return c;
  }
  void report(model::StatSink&, const std::string&) const override {}  // parts report themselves

 private:
  std::vector<std::unique_ptr<MemoryDevice>> ports_;
  std::vector<Route> routes_;
  int last_port_ = -1;  // the port of the latest try_enqueue
};

// The target handed to callers: forwards to its top device and reports every part by name.
class MemorySystem : public BuiltTarget {
 public:
  std::unique_ptr<MemoryDevice> top;
  MemoryDevice* peak_source = nullptr;  // whose peak bandwidth and latency describe the target
  std::vector<std::pair<std::string, const MemoryDevice*>> parts;
  std::vector<std::shared_ptr<SharedDevice>> shared;
  std::vector<std::unique_ptr<MemoryDevice>> owned;  // built parts no route leads to (kept for their reports)
  // A write-back cache's dirty bytes for one region: reported as writes pending to it. Named once
  // here: the report runs at every idle moment of a replay (sim/engine/counter_windows.hpp).
  struct Pending {
    const MemoryDevice* holder;
    std::string holder_name;
    uint32_t account;
    std::string region, statistic, description;
  };
  std::vector<Pending> pending;
  void add_pending(const MemoryDevice* holder, const std::string& holder_name, uint32_t account,
                   const std::string& region) {
    pending.push_back({holder, holder_name, account, region, "dirty_bytes." + region,
                       "bytes of " + region + "'s data written here and not yet written back: their growth counts in " +
                           region + "'s bytes_written, so that a write counts when it is made (docs/metrics.md)"});
  }

  bool try_enqueue(const MemRequest& r, Tick now) override { return top->try_enqueue(r, now); }
  bool refused_per_source() const override { return top->refused_per_source(); }
  uint64_t refused_queue() const override { return top->refused_queue(); }
  bool may_take(uint64_t key) const override { return top->may_take(key); }
  uint64_t slots_freed() const override { return top->slots_freed(); }
  Tick next_event() const override { return top->next_event(); }
  Tick next_retry() const override { return top->next_retry(); }
  void advance(Tick now, std::vector<MemCompletion>& done) override { top->advance(now, done); }
  void warm(const MemRequest& r) override { top->warm(r); }
  uint64_t warm_reach_bytes() const override { return top->warm_reach_bytes(); }
  double peak_bandwidth_GBps() const override { return peak_source->peak_bandwidth_GBps(); }
  Tick idle_read_latency_ps() const override { return top->idle_read_latency_ps(); }
  uint64_t capacity_bytes() const override { return peak_source->capacity_bytes(); }
  // The last write to reach any medium of the target (a write absorbed by the L2 reaches none).
  Tick last_write_issued_ps() const override {
    Tick t = 0;
    for (const auto& part : parts) t = std::max(t, part.second->last_write_issued_ps());
    return t;
  }
  void report(model::StatSink& sink, const std::string& component) const override {
    const auto named = [&component](const std::string& n) { return component.empty() ? n : component + "." + n; };
    for (const auto& [name, dev] : parts) dev->report(sink, named(name));
    for (const auto& p : pending)
      sink.pending(named(p.holder_name), p.statistic, double(p.holder->dirty_bytes(p.account)), "bytes",
                   named(p.region), "bytes_written", p.description);
  }
  const MemoryDevice* part(const std::string& name) const override {
    for (const auto& [p, dev] : parts)
      if (p == name) return dev;
    return nullptr;
  }
};

struct Builder {
  const Node& root;
  const Node interconnect;
  std::vector<RegionSpec> regions;
  std::vector<std::unique_ptr<MemoryDevice>> devices;  // by region index; moved out when used
  std::vector<MemoryDevice*> raw;
  std::map<size_t, std::shared_ptr<SharedDevice>> shared;
  MemorySystem* sys;
  const DeviceLink& link;

  // What a parent holds of a child: the child, or the link to it.
  std::unique_ptr<MemoryDevice> to(std::unique_ptr<MemoryDevice> child, const std::string& name) const {
    return link ? link(std::move(child), name) : std::move(child);
  }

  size_t index_of(const std::string& name) const {
    for (size_t i = 0; i < regions.size(); ++i)
      if (regions[i].name == name) return i;
    throw std::out_of_range(name);
  }

  // Builds region i (and, through `backing`, the regions it needs); records it as a part.
  void build(size_t i, std::vector<int>& state) {
    if (state[i] == 2) return;
    if (state[i] == 1) interconnect.fail("regions", regions[i].name, "backing regions form a cycle");
    state[i] = 1;
    const Node node = section_node(root, regions[i].section, regions[i].section, interconnect);
    devices[i] = model::make_memory_device(node);
    raw[i] = devices[i].get();
    auto* front = dynamic_cast<FrontDevice*>(devices[i].get());
    if (front && front->needs_downstream()) {
      if (regions[i].backing.empty())
        interconnect.fail("regions", regions[i].name,
                               "region '" + regions[i].name + "' sends misses downstream: it needs a `backing` region");
      const size_t b = index_of(regions[i].backing);
      build(b, state);
      front->attach(to(port_of(b), regions[b].name));
      sys->add_pending(raw[i], regions[i].name, 0, regions[b].name);
    }
    sys->parts.push_back({regions[i].name, raw[i]});
    state[i] = 2;
  }

  // A handle on region i's device: the device itself for its first user, a shared port when a
  // backing relation gives it a second user.
  std::unique_ptr<MemoryDevice> port_of(size_t i) {
    auto it = shared.find(i);
    if (it == shared.end()) {
      auto s = std::make_shared<SharedDevice>(std::move(devices[i]));
      sys->shared.push_back(s);
      it = shared.emplace(i, s).first;
    }
    return it->second->port();
  }
  std::unique_ptr<MemoryDevice> take(size_t i) {
    if (devices[i]) return std::move(devices[i]);
    return port_of(i);
  }
};

}  // namespace

SystemLayout read_layout(const Node& root) {
  const Node sys = root.child("system");
  SystemLayout l;
  l.interconnect = sys.req<std::string>("interconnect");
  l.cache = sys.opt<std::string>("cache", "");
  if (sys.has("processors"))
    for (const Node& p : sys.children("processors")) {
      ProcessorSlot slot;
      slot.section = p.req<std::string>("section");
      slot.local_region = p.opt<std::string>("local_region", "");
      if (!root.has(slot.section) || !root.child(slot.section).has("impl"))
        p.fail("section", slot.section, "must name a section of the hardware file with an `impl`");
      l.processors.push_back(slot);
    }
  for (const auto& [key, section] : {std::pair<const char*, const std::string&>{"interconnect", l.interconnect}, {"cache", l.cache}})
    if (!section.empty() && !root.has(section)) sys.fail(key, section, "must name a section of the hardware file");
  return l;
}

std::vector<RegionSpec> read_regions(const Node& root) {
  const SystemLayout layout = read_layout(root);
  const Node noc = root.child(layout.interconnect);
  std::vector<RegionSpec> out;
  for (const Node& r : noc.children("regions")) {
    RegionSpec s;
    s.name = r.req<std::string>("name");
    s.section = r.req<std::string>("section");
    s.cached = r.req<bool>("cached");
    s.backing = r.opt<std::string>("backing", "");
    s.tier = r.req<std::string>("tier", Rule::choice({"primary", "overflow", "pinned", "fabric"}));
    for (const auto& o : out)
      if (o.name == s.name) r.fail("name", s.name, "region names must be unique");
    if (s.name == "system" || (!layout.cache.empty() && s.name == layout.cache))
      r.fail("name", s.name, "'system' and the cache's section name are reserved target names");
    out.push_back(s);
  }
  if (out.empty()) noc.fail("regions", "", "needs at least one region");
  if (out.size() > (size_t{1} << (64 - kRegionWindowBits))) noc.fail("regions", "", "too many regions");
  for (const auto& s : out)
    if (!s.backing.empty() &&
        std::none_of(out.begin(), out.end(), [&](const RegionSpec& o) { return o.name == s.backing; }))
      noc.fail("regions", s.backing, "backing of '" + s.name + "' must name another region");
  return out;
}

uint64_t region_base(const Node& root, const std::string& region) {
  const auto regions = read_regions(root);
  std::vector<std::string> names;
  for (size_t i = 0; i < regions.size(); ++i) {
    if (regions[i].name == region) return uint64_t{i} << kRegionWindowBits;
    names.push_back(regions[i].name);
  }
  root.child(read_layout(root).interconnect).fail("regions", region, Rule::choice(names).describe());
}

std::vector<std::string> target_names(const Node& root) {
  std::vector<std::string> names;
  for (const auto& r : read_regions(root)) names.push_back(r.name);
  const SystemLayout layout = read_layout(root);
  if (!layout.cache.empty()) {
    names.push_back(layout.cache);
    names.push_back("system");
  }
  return names;
}

// The crossbar has one port per cache slice (its port per requester: sim/memsys/machine.cpp). A port
// count that disagrees with the count it stands for leaves slices unreachable without a word, so the
// two must agree: a `--set hardware.l2.slices=128` needs its `noc.memory_ports=128`.
namespace {
void check_cache_ports(const Node& root, const SystemLayout& layout) {
  const Node noc = root.child(layout.interconnect), cache = root.child(layout.cache);
  const auto ports = noc.req<uint32_t>("memory_ports", Rule::positive());
  const auto slices = cache.req<uint32_t>("slices", Rule::positive());
  if (ports != slices)
    noc.fail("memory_ports", std::to_string(ports),
             "must equal " + cache.key_path("slices") + " (" + std::to_string(slices) + "): one port per cache slice");
}
}  // namespace

std::unique_ptr<BuiltTarget> make_target(const Node& root, const std::string& target, const DeviceLink& link) {
  auto sys = std::make_unique<MemorySystem>();
  const SystemLayout layout = read_layout(root);
  Builder b{root, root.child(layout.interconnect), read_regions(root), {}, {}, {}, sys.get(), link};
  const size_t n = b.regions.size();
  b.devices.resize(n);
  b.raw.assign(n, nullptr);
  std::vector<int> state(n, 0);

  const auto names = target_names(root);
  if (std::find(names.begin(), names.end(), target) == names.end())
    throw std::invalid_argument("unknown target '" + target + "': " + Rule::choice(names).describe());

  if (target != layout.cache && target != "system") {
    const size_t i = b.index_of(target);
    b.build(i, state);
    sys->peak_source = b.raw[i];
    sys->top = b.take(i);
    return sys;
  }

  // The cache over every cached region; for "system", the interconnect in front and the uncached
  // regions beside.
  const Node cache_node = root.child(layout.cache);
  auto l2_dev = model::make_memory_device(cache_node);
  auto* l2 = dynamic_cast<FrontDevice*>(l2_dev.get());
  if (!l2) cache_node.fail("impl", "", "must name a cache that takes a downstream device");
  auto below = std::make_unique<Router>();
  auto above = std::make_unique<Router>();
  const size_t l2_port = 0;
  for (size_t i = 0; i < n; ++i)
    if (b.regions[i].cached || target == "system") b.build(i, state);
  MemoryDevice* first_cached = nullptr;
  for (size_t i = 0; i < n; ++i) {
    if (b.regions[i].cached) {
      below->route(i, below->add_port(b.to(b.take(i), b.regions[i].name)), true);
      above->route(i, l2_port, false);
      if (!first_cached) first_cached = b.raw[i];
    }
  }
  if (!first_cached) b.interconnect.fail("regions", "", "no region is cached: the cache would have nothing behind it");
  l2->attach(std::move(below));
  // The cache sees global addresses: a line's region is its address window.
  l2_dev->set_write_accounts([](uint64_t addr) { return static_cast<uint32_t>(addr >> kRegionWindowBits); },
                             static_cast<uint32_t>(n));
  for (size_t i = 0; i < n; ++i)
    if (b.regions[i].cached)
      sys->add_pending(l2_dev.get(), layout.cache, static_cast<uint32_t>(i), b.regions[i].name);
  sys->parts.insert(sys->parts.begin(), {layout.cache, l2_dev.get()});
  if (target == layout.cache) {
    for (auto& d : b.devices)
      if (d) sys->owned.push_back(std::move(d));
    sys->peak_source = first_cached;
    sys->top = std::move(l2_dev);
    return sys;
  }
  above->add_port(b.to(std::move(l2_dev), layout.cache));
  for (size_t i = 0; i < n; ++i)
    if (!b.regions[i].cached) above->route(i, above->add_port(b.to(b.take(i), b.regions[i].name)), true);
  auto noc_dev = model::make_memory_device(b.interconnect);
  check_cache_ports(root, layout);
  auto* noc = dynamic_cast<FrontDevice*>(noc_dev.get());
  if (!noc) b.interconnect.fail("impl", "", "must name an interconnect that takes a downstream device");
  noc->attach(std::move(above));
  sys->parts.insert(sys->parts.begin(), {layout.interconnect, noc_dev.get()});
  sys->peak_source = first_cached;
  sys->top = std::move(noc_dev);
  return sys;
}

}  // namespace indexsim::sim
