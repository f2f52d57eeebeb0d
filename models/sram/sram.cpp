// SPDX-License-Identifier: Apache-2.0
#include "models/sram/sram.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace indexsim::model {

using config::Rule;

SramParams SramParams::from(const config::Node& n) {
  SramParams p;
  p.clock_MHz = n.req<double>("clock_MHz", Rule::clock_MHz());
  p.capacity_KiB = n.req<double>("capacity_KiB", Rule::positive());
  p.banks = n.req<uint32_t>("banks", Rule::positive());
  p.bank_interleave_B = n.req<uint32_t>("bank_interleave_B", Rule::power_of_two());
  p.bank_bandwidth_Bpc = n.req<double>("bank_bandwidth_Bpc", Rule::positive());
  p.access_latency_cycles = n.req<uint32_t>("access_latency_cycles", Rule::non_negative());
  p.queue_depth_per_bank = n.req<uint32_t>("queue_depth_per_bank", Rule::positive());
  std::vector<std::string> policies = {kScratchpad};
  for (const auto& name : ReplacementRegistry::instance().names()) policies.push_back(name);
  p.policy = n.req<std::string>("policy", Rule::choice(policies));
  p.line_B = n.req<uint32_t>("line_B", Rule::power_of_two());
  p.ways = n.req<uint32_t>("ways", Rule::range(1, kMaxReplacementWays));
  const uint64_t lines = p.capacity_bytes() / p.line_B;
  if (p.capacity_bytes() % (uint64_t{p.line_B} * p.ways) != 0 || lines < p.ways)
    n.fail("capacity_KiB", std::to_string(p.capacity_KiB),
           "must be a whole number of sets of line_B x ways = " + std::to_string(uint64_t{p.line_B} * p.ways) + " bytes");
  return p;
}

NpuSram::NpuSram(const SramParams& p)
    : p_(p), clk_(p.clock_MHz), bank_free_(p.banks, 0), bank_in_flight_(p.banks, 0) {
  if (is_cache()) {
    sets_ = static_cast<uint32_t>(p_.capacity_bytes() / p_.line_B / p_.ways);
    ways_.resize(static_cast<size_t>(sets_) * p_.ways);
    policy_ = ReplacementRegistry::instance().make(p_.policy, 1);
  }
}

Tick NpuSram::serve_bank(uint32_t bank, uint32_t bytes, Tick t) {
  const Tick occ = clk_.cycles(static_cast<uint64_t>(std::ceil(bytes / p_.bank_bandwidth_Bpc - 1e-9)));
  const Tick start = std::max(t, bank_free_[bank]);
  bank_free_[bank] = start + occ;
  return start + occ + clk_.cycles(p_.access_latency_cycles);
}

bool NpuSram::lookup(uint64_t line, bool write, Tick now) {
  Way* set = &ways_[(mix64(line) % sets_) * p_.ways];
  for (uint32_t w = 0; w < p_.ways; ++w)
    if (set[w].tag == line + 1) {
      policy_->touch(set[w].repl);
      if (write && !set[w].dirty) dirty_held_ += p_.line_B;
      set[w].dirty |= write;
      return true;
    }
  // An invalid way first, else the policy's choice.
  Way* v = nullptr;
  for (uint32_t w = 0; w < p_.ways && !v; ++w)
    if (set[w].tag == 0) v = &set[w];
  if (!v) v = &set[policy_->victim(&set[0].repl, sizeof(Way), p_.ways == 64 ? ~uint64_t{0} : (uint64_t{1} << p_.ways) - 1)];
  if (v->tag != 0) {
    ++evictions_;
    if (v->dirty) {
      MemRequest wb;
      wb.id = (wb_ids_++ << 1) | 1;  // odd ids: writebacks; even ids: fills (line << 1)
      wb.addr = (v->tag - 1) * p_.line_B;
      wb.bytes = p_.line_B;
      wb.write = true;
      down_.send(wb, now);
      ++writebacks_;
      dirty_held_ -= p_.line_B;
    }
  }
  *v = Way{line + 1, 0, write};
  if (write) dirty_held_ += p_.line_B;
  policy_->insert(v->repl);
  return false;
}

bool NpuSram::try_enqueue(const MemRequest& req, Tick now) {
  const uint32_t bank = bank_of(req.addr);
  if (bank_in_flight_[bank] >= p_.queue_depth_per_bank) {
    ++refused_;
    return false;
  }
  ++bank_in_flight_[bank];
  bank_of_id_[req.id] = bank;
  if (!is_cache()) {
    if (req.addr + req.bytes > p_.capacity_bytes())
      throw std::out_of_range("NPU SRAM scratchpad: access at " + std::to_string(req.addr) +
                              " lies outside the placed capacity of " + std::to_string(p_.capacity_bytes()) + " bytes");
    ++hits_;
    if (!req.write) by_tag_.read(req.tag, req.bytes, req.bytes);
    events_.push(serve_bank(bank, req.bytes, now), req.id);
    return true;
  }
  if (!down_.connected()) throw std::logic_error("NPU SRAM cache has no downstream device attached");
  // Every line the request spans (a fast-mode chunk spans several) is looked up on its own and
  // counted as an access; the request is served once the last of its missing lines has arrived.
  uint32_t slot;
  if (!free_waits_.empty()) {
    slot = free_waits_.back();
    free_waits_.pop_back();
  } else {
    slot = static_cast<uint32_t>(waits_.size());
    waits_.emplace_back();
  }
  Wait& w = waits_[slot];
  w = Wait{req.id, req.bytes, bank, 0, now};
  const uint64_t first = req.addr / p_.line_B, last = (req.addr + std::max<uint32_t>(req.bytes, 1) - 1) / p_.line_B;
  for (uint64_t line = first; line <= last; ++line) {
    // This line's share of the request's bytes, for the reads-by-tag figures.
    const uint64_t lo = std::max<uint64_t>(req.addr, line * p_.line_B);
    const uint64_t share = std::min<uint64_t>(req.addr + std::max<uint32_t>(req.bytes, 1), (line + 1) * p_.line_B) - lo;
    auto pend = pending_.find(line);
    if (pend != pending_.end() && !req.write) {  // the line is being fetched: wait for that fill
      ++merged_;
      by_tag_.read(req.tag, share, 0);
      pend->second.push_back(slot);
      ++w.lines_left;
      continue;
    }
    const bool hit = lookup(line, req.write, now);
    ++(hit ? hits_ : misses_);
    if (!req.write) by_tag_.read(req.tag, share, hit ? share : 0);
    if (hit || req.write) continue;  // a write miss allocates without fetching
    MemRequest fill;
    fill.id = line << 1;
    fill.addr = line * p_.line_B;
    fill.bytes = p_.line_B;
    down_.send(fill, now);
    pending_[line].push_back(slot);
    ++w.lines_left;
  }
  if (w.lines_left == 0) {
    events_.push(serve_bank(bank, req.bytes, now), req.id);
    free_waits_.push_back(slot);
  }
  return true;
}

void NpuSram::advance(Tick now, std::vector<MemCompletion>& done) {
  run_until(
      now, down_, events_, buf_,
      [&](const std::vector<MemCompletion>& batch) {
        for (const auto& c : batch) {
          if (c.id & 1) continue;
          auto it = pending_.find(c.id >> 1);
          for (uint32_t slot : it->second) {
            Wait& w = waits_[slot];
            w.ready = std::max(w.ready, c.done);
            if (--w.lines_left > 0) continue;
            events_.push(serve_bank(w.bank, w.bytes, w.ready), w.id);
            free_waits_.push_back(slot);
          }
          pending_.erase(it);
        }
      },
      [&](Tick te) {
        const uint64_t id = events_.pop();
        auto it = bank_of_id_.find(id);
        --bank_in_flight_[it->second];
        bank_of_id_.erase(it);
        done.push_back({id, te});
      });
}

double NpuSram::peak_bandwidth_GBps() const { return p_.banks * p_.bank_bandwidth_Bpc * p_.clock_MHz * 1e6 / 1e9; }

Tick NpuSram::idle_read_latency_ps() const {
  const uint64_t one = static_cast<uint64_t>(std::ceil(p_.line_B / p_.bank_bandwidth_Bpc - 1e-9));
  return clk_.cycles(one + p_.access_latency_cycles);
}

uint64_t NpuSram::capacity_bytes() const {
  if (is_cache() && down_.connected()) return down_.get()->capacity_bytes();
  return p_.capacity_bytes();
}

void NpuSram::report(StatSink& sink, const std::string& c) const {
  sink.add(c, "hits", static_cast<double>(hits_), "count", "accesses served from the SRAM");
  sink.add(c, "misses", static_cast<double>(misses_), "count", "accesses whose line was absent (reads fetch it, writes allocate it)");
  sink.add(c, "merged_misses", static_cast<double>(merged_), "count", "reads that waited for a fill in flight");
  sink.ratio(c, "hit_rate", {"hits"}, {"hits", "misses", "merged_misses"}, "hits / accesses");
  sink.add(c, "evictions", static_cast<double>(evictions_), "count", "valid lines replaced");
  sink.add(c, "writebacks", static_cast<double>(writebacks_), "count", "dirty lines written downstream");
  sink.add(c, "refused", static_cast<double>(refused_), "count", "requests refused: bank queue full");
  by_tag_.report(sink, c);
}

INDEXSIM_REGISTER(MemoryRegistry, "memory", "npu_sram",
                  [](const config::Node& n) -> std::unique_ptr<MemoryDevice> {
                    return std::make_unique<NpuSram>(SramParams::from(n));
                  });

}  // namespace indexsim::model
