// SPDX-License-Identifier: Apache-2.0
// IndexShare: one top-k serves a group of layers. Only "full" layers keep an indexer cache and run
// the indexer; "shared" layers reuse the latest full layer's top-k (GLM-5.2: full iff layer < 3 or
// (layer - 2) % 4 == 0, i.e. full_first_layers 3, group 4).
//  - overlap: each sparse-attention layer's KV rows are prefetched into the L2 on a second stream as
//    soon as its top-k is known, while the previous layer's last kernel runs, so the attention
//    kernel's gather hits in the L2;
//  - first_layer_sram: the first full layer's indexer cache is pinned to the region the file names
//    (`first_layer_region`, the NPU SRAM's row of the hardware's noc.regions);
//  - index_compression: hashed index storage at `compression_ratio` of the bytes, paid for with
//    CUDA-core work per scored element (the hash decode);
//  - first_layer_npu_share: the seeds' first-layer specialisation, "offloads 40 % of index loading
//    tasks to NPU compute units": the first full layer's scoring is cut page by page (page_split.hpp:
//    the first `share` of every page of indexer_tile_tokens entries), so both halves keep every CTA
//    busy. The NPU scores its part from its own copy of those entries, pinned to
//    `first_layer_region` (its SRAM; what does not fit is read by DMA from where placement puts it),
//    while the SMs score the rest; top-k waits for both.
#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>
#include <tuple>
#include <unordered_set>

#include "sim/techniques/page_split.hpp"

#include "traces/generators/micro_batches.hpp"
#include "traces/kernel_geometry.hpp"
#include "sim/techniques/technique.hpp"

namespace indexsim::sim {

namespace {

using config::Rule;
using trace::AttentionKind;
using trace::IndexerMode;

// A prefetch brings each selected row into the L2 once. The attention's gathers repeat rows: the
// CTAs of one query tile share theirs (a record's cta_count), and a prefill chunk's queries select
// mostly the same rows of the context. So the prefetch gathers the distinct rows of `gathers`, in
// the order they first appear, `per_cta` to a CTA (as many as one attention CTA gathers), its CTAs
// numbered from 0. A decode step at batch 1 repeats no row: its splits' records come out as they
// went in, and the grid is those CTAs only (the attention's other head blocks had no records).
std::vector<trace::AccessRecord> distinct_row_gathers(const std::vector<trace::AccessRecord>& gathers) {
  using Key = std::tuple<uint32_t, uint64_t, uint32_t, uint64_t>;  // tensor, base, row bytes, pitch
  std::vector<Key> order;
  std::map<Key, std::pair<std::vector<uint32_t>, std::unordered_set<uint32_t>>> rows;
  size_t per_cta = 1;
  for (const auto& a : gathers) {
    const Key key{a.tensor, a.base, a.row_bytes, a.row_pitch_bytes};
    auto [it, fresh] = rows.try_emplace(key);
    if (fresh) order.push_back(key);
    per_cta = std::max(per_cta, a.rows.size());
    for (uint32_t r : a.rows)
      if (it->second.second.insert(r).second) it->second.first.push_back(r);
  }
  std::vector<trace::AccessRecord> out;
  for (const Key& key : order) {
    const std::vector<uint32_t>& all = rows[key].first;
    for (size_t lo = 0; lo < all.size(); lo += per_cta) {
      trace::AccessRecord a;
      a.kind = trace::AccessRecord::Kind::gather;
      std::tie(a.tensor, a.base, a.row_bytes, a.row_pitch_bytes) = key;
      a.cta_first = uint32_t(out.size());
      a.rows.assign(all.begin() + long(lo), all.begin() + long(std::min(all.size(), lo + per_cta)));
      out.push_back(std::move(a));
    }
  }
  return out;
}

// A layer's indexer cache as the scan sees it: a row of `entries` entries of `entry_bytes` a
// sequence, scored in pages of `page` entries (the indexer's tile). `why` says what is missing when
// it is not that (no emulated step, no such tensor, a size that is not batch x entries x bytes).
struct CacheRows {
  uint32_t tensor = UINT32_MAX;
  uint64_t batch = 0, entry_bytes = 0, entries = 0, page = 0;
  std::string why;
};
// The emulated trace's name of a layer's indexer cache.
std::string indexer_cache_name(int layer) { return "L" + std::to_string(layer) + ".indexer_cache"; }

CacheRows cache_rows(const Workload& w, int layer, const TechniqueContext& ctx) {
  CacheRows c;
  const std::string name = indexer_cache_name(layer);
  for (const auto& t : w.tensors())
    if (t.name == name) c.tensor = t.id;
  if (!ctx.shape || !w.metadata().contains("step")) {
    c.why = "no emulated step (a captured trace)";
    return c;
  }
  c.batch = w.metadata()["step"].value("batch", uint64_t(1));
  c.entry_bytes = ctx.shape->indexer.bytes_per_entry();
  c.page = std::max<uint32_t>(2, ctx.shape->kernels.indexer_tile_tokens);
  if (c.tensor == UINT32_MAX || c.batch == 0 || c.entry_bytes == 0 || w.tensors()[c.tensor].bytes % (c.batch * c.entry_bytes) != 0) {
    c.why = "the first full layer's indexer cache is not batch x entries x entry bytes";
    return c;
  }
  c.entries = w.tensors()[c.tensor].bytes / (c.batch * c.entry_bytes);
  return c;
}

class IndexShare : public Technique {
 public:
  explicit IndexShare(const config::Node& n) {
    group_ = n.req<uint32_t>("group", Rule::range(1, 1024));
    full_first_ = n.opt<uint32_t>("full_first_layers", 1, Rule::range(1, 1024));
    overlap_ = n.opt<bool>("overlap", true);
    first_layer_sram_ = n.opt<bool>("first_layer_sram", false);
    if (first_layer_sram_ || n.has("first_layer_region")) first_layer_region_ = n.req<std::string>("first_layer_region");
    compression_ = n.opt<bool>("index_compression", false);
    compression_ratio_ = n.opt<double>("compression_ratio", 1.0 / 3.0, Rule::range(0.01, 1.0));
    lookup_flops_ = n.opt<double>("lookup_simt_flops_per_element", 4.0, Rule::non_negative());
    npu_share_ = n.opt<double>("first_layer_npu_share", 0.0, Rule::range(0.0, 0.99));
    if (npu_share_ > 0) {
      if (first_layer_region_.empty()) first_layer_region_ = n.req<std::string>("first_layer_region");
      share_file_ = n.file();
      share_key_ = n.key_path("first_layer_npu_share");
    }
  }

  void reshape(trace::ModelShape& m) const override {
    int last_full = -1;
    for (auto& l : m.layers) {
      if (l.attention != AttentionKind::dsa) continue;
      const uint32_t i = uint32_t(l.index);
      const bool full = i < full_first_ || (i - (full_first_ - 1)) % group_ == 0 || last_full < 0;
      l.indexer = full ? IndexerMode::full : IndexerMode::shared;
      if (full) last_full = l.index;
      l.topk_source = last_full;
    }
    if (compression_) m.indexer.storage_ratio *= compression_ratio_;
  }

  void transform(Workload& w, TechniqueContext& ctx) const override {
    auto& rep = (*ctx.report)["index_share"];
    // A step split for two-batch overlap has a chain of kernels a micro-batch, each with its own
    // top-k and attention kernels (and, split by sequences, its own caches, which the first layer's
    // pin and NPU copy do not know of).
    const uint32_t parts = micro_batches(w.metadata());
    if (parts > 1 && (first_layer_sram_ || npu_share_ > 0))
      throw std::invalid_argument(std::string("techniques.index_share.") + (first_layer_sram_ ? "first_layer_sram" : "first_layer_npu_share") +
                                  " with workload deployment.two_batch_overlap = true: not modelled (the first layer's cache is a micro-batch's)");
    int first_full = -1;
    // A layer's top-k is a chain of kernels (kernels/topk.cu): the last one writes the indices.
    TopkOf topk_of(parts);
    for (size_t v = 0; v < w.kernels().size(); ++v) {
      const auto& k = w.kernels()[v];
      if (k.removed || k.rec.kind != trace::KernelKind::topk) continue;
      topk_of[trace::micro_batch_of(k.rec.name)][k.rec.layer] = v;
      if (first_full < 0 || k.rec.layer < first_full) first_full = k.rec.layer;
    }
    rep["full_layers"] = topk_of[0].size();
    // With an NPU share, the NPU's copy of its part of the first layer's index is pinned first.
    const uint64_t npu_copy = npu_share_ > 0 && first_full >= 0 ? offload_first_layer(w, first_full, ctx, rep) : 0;
    // The first full layer's index cache in the SRAM: whole where it fits (beside the NPU's copy, if
    // any); else, without an NPU copy, the part that fits (pin_what_fits); with one, the SMs read
    // their part from where placement puts it.
    if (first_layer_sram_ && first_full >= 0) {
      const bool whole = npu_copy > 0 ? fits_beside(w, first_full, npu_copy, ctx, rep) : !pin_what_fits(w, first_full, ctx, rep);
      if (whole) {
        const std::string t = indexer_cache_name(first_full);
        ctx.placement->pins[t] = first_layer_region_;
        rep["first_layer_pin"] = t;   // asked for; techniques.pins says whether it fitted
      }
    }
    if (compression_) {
      for (auto& k : w.kernels())
        if (!k.removed && k.rec.kind == trace::KernelKind::indexer_score && ctx.shape) {
          // Every scored element is decoded from its hash bucket before the dot product.
          const double elems = k.rec.total_flops() / (2.0 * ctx.shape->local_index_heads());
          k.rec.flops[int(trace::Precision::simt)] += elems * lookup_flops_;
        }
    }
    if (overlap_) add_prefetches(w, topk_of, ctx, rep);
  }

 private:
  // Each micro-batch's top-k kernels by layer (one map without two-batch overlap).
  using TopkOf = std::vector<std::map<int, size_t>>;

  void add_prefetches(Workload& w, const TopkOf& topk_of, const TechniqueContext& ctx, nlohmann::json& rep) const {
    // Kernels of each micro-batch's layers in launch order, to find the one a prefetch should overlap.
    std::vector<std::map<int, std::vector<size_t>>> by_layer(topk_of.size());
    for (size_t v : w.topological_order())
      if (!w.kernels()[v].removed) by_layer[trace::micro_batch_of(w.kernels()[v].rec.name)][w.kernels()[v].rec.layer].push_back(v);
    // A stream beside the SMs' kernels (a split step: one a micro-batch).
    const uint32_t first_stream = side_stream(w, 1);
    int prefetches = 0;
    const size_t n = w.kernels().size();
    for (size_t v = 0; v < n; ++v) {
      const auto& k = w.kernels()[v];
      // The attention kernel itself, not its combine (which gathers nothing).
      if (k.removed || k.rec.kind != trace::KernelKind::sparse_attn || k.rec.name.find("combine") != std::string::npos) continue;
      const int L = k.rec.layer;
      const uint32_t mb = trace::micro_batch_of(k.rec.name);
      // The top-k this layer reads: its own or the latest full layer's, of its own micro-batch.
      auto it = topk_of[mb].upper_bound(L);
      if (it == topk_of[mb].begin()) continue;
      --it;
      const size_t topk = it->second;
      // One copy of the gather: the records of the first head block, all of its splits
      // (geometry::sparse_attn_head_block knows how the emulated kernel numbers its CTAs).
      const uint64_t head_blocks =
          ctx.shape ? std::max<uint64_t>(1, (ctx.shape->local_heads() + trace::geometry::kAttnHeadsPerCta - 1) /
                                                trace::geometry::kAttnHeadsPerCta)
                    : 1;
      const uint64_t queries = k.rec.grid[1], splits = std::max<uint64_t>(1, k.rec.grid[0] / head_blocks);
      std::vector<trace::AccessRecord> gathers;
      for (const auto& a : k.accesses)
        if (a.kind == trace::AccessRecord::Kind::gather && !a.write &&
            trace::geometry::sparse_attn_head_block(a.cta_first, queries, head_blocks, splits) == 0)
          gathers.push_back(a);
      std::vector<trace::AccessRecord> rows = distinct_row_gathers(gathers);
      if (rows.empty()) continue;
      trace::KernelRecord r;
      r.name = name_beside(k.rec, "kv_prefetch");
      r.kind = trace::KernelKind::kv_prefetch;
      r.layer = L;
      r.stream = first_stream + mb;
      r.grid = {uint32_t(rows.size()), 1, 1};
      r.block = {128, 1, 1};
      r.regs_per_thread = 32;
      const size_t pv = w.add_kernel(r, rows);
      w.add_edge(topk, pv);
      // Overlap the previous layer's last kernel: start after the one before it (later would
      // overlap nothing; earlier lets that layer's weight stream evict the prefetched rows).
      auto prev = by_layer[mb].find(L - 1);
      if (prev != by_layer[mb].end() && prev->second.size() >= 2) {
        const size_t anchor = prev->second[prev->second.size() - 2];
        if (anchor != topk && !w.has_edge(pv, anchor)) w.add_edge(anchor, pv);
      }
      ++prefetches;
    }
    rep["kv_prefetch_kernels"] = prefetches;
  }

  // Returns the bytes of the NPU's copy it pinned (0: skipped, the report says why).
  uint64_t offload_first_layer(Workload& w, int layer, const TechniqueContext& ctx, nlohmann::json& rep) const;
  bool pin_what_fits(Workload& w, int layer, const TechniqueContext& ctx, nlohmann::json& rep) const;
  bool fits_beside(const Workload& w, int layer, uint64_t copy_bytes, const TechniqueContext& ctx, nlohmann::json& rep) const;
  // The first layer's region in whole placement pages (nothing else is pinned there; if something
  // were, a copy would spill and warn like any pin); 0 when the region or placement is unknown.
  uint64_t room(const TechniqueContext& ctx) const {
    if (ctx.regions && ctx.placement)
      for (const RegionInfo& r : *ctx.regions)
        if (r.name == first_layer_region_) return r.capacity_bytes / ctx.placement->page_bytes * ctx.placement->page_bytes;
    return 0;
  }
  // A copy of `cache` named with `suffix`, `bytes` long, pinned to the first layer's region; the
  // records `on_copy` of `acc` read it instead of the cache. Returns the copy's name.
  std::string pin_copy(Workload& w, uint32_t cache, const std::string& suffix, uint64_t bytes,
                       std::vector<trace::AccessRecord>& acc, const std::vector<size_t>& on_copy,
                       const TechniqueContext& ctx) const {
    trace::TensorRecord copy = w.tensors()[cache];
    copy.name += suffix;
    copy.bytes = bytes;
    const uint32_t id = w.add_tensor(copy);
    for (size_t i : on_copy) acc[i].tensor = id;
    ctx.placement->pins[copy.name] = first_layer_region_;
    return copy.name;
  }

  uint32_t group_ = 4, full_first_ = 1;
  bool overlap_ = true, first_layer_sram_ = false, compression_ = false;
  double compression_ratio_ = 1.0 / 3.0, lookup_flops_ = 4.0;
  std::string first_layer_region_;  // noc.regions name the first full layer's indexer cache is pinned to
  double npu_share_ = 0;
  std::string share_file_, share_key_;
};

// A first-layer cache larger than the SRAM (GLM-5 at 128K: 16.5 MiB of index against 12 MiB) is
// pinned in part: the SRAM holds a copy of the first `head` entries of every page of
// indexer_tile_tokens entries, the most that fits in whole placement pages, and the layer's scan
// reads those from the copy and the rest from the cache in HBM (page_split.hpp: every CTA keeps
// its share of both, as the NPU offload's cut does). False, changing nothing, when the whole cache
// fits, the region's size is unknown, or the scan is not the page-aligned read the cut needs; the
// caller then pins the whole cache (placement spills it with a warning if it does not fit).
// The step's new entries are still appended to the HBM cache only.
bool IndexShare::pin_what_fits(Workload& w, int layer, const TechniqueContext& ctx, nlohmann::json& rep) const {
  const uint64_t room = this->room(ctx);
  const size_t v = w.find(layer, trace::KernelKind::indexer_score);
  const CacheRows c = cache_rows(w, layer, ctx);
  if (room == 0 || v == Workload::npos || !c.why.empty()) return false;
  const PlacementPolicy& policy = *ctx.placement;
  const auto pages = [&](uint64_t b) { return policy.allocated_bytes(b); };
  const uint64_t bytes = w.tensors()[c.tensor].bytes;
  if (pages(bytes) <= room) return false;
  PageSplit cut{c.entry_bytes, c.page, 0, c.entries * c.entry_bytes};
  // The largest head whose copy fits: start from the capacity's share of a page and step down.
  cut.head = std::min<uint64_t>(c.page - 1, c.page * room / bytes);
  while (cut.head > 0 && pages(c.batch * cut.copy_row_bytes()) > room) --cut.head;
  if (cut.head == 0) return false;
  const uint32_t cache = c.tensor;
  const std::string cache_name = w.tensors()[cache].name;
  std::vector<trace::AccessRecord> acc;
  std::vector<size_t> on_copy;
  for (const auto& a : w.kernels()[v].accesses) {
    std::vector<trace::AccessRecord> h, t;
    if (a.tensor == cache && !a.write && split_pages(a, cut, h, t)) {
      for (size_t i = 0; i < h.size(); ++i) on_copy.push_back(acc.size() + i);
      acc.insert(acc.end(), h.begin(), h.end());
      acc.insert(acc.end(), t.begin(), t.end());
    } else if (a.tensor == cache && !a.write) {
      return false;  // a read of the cache the cut cannot follow: pin nothing in part
    } else {
      acc.push_back(a);
    }
  }
  if (on_copy.empty()) return false;
  const std::string copy = pin_copy(w, cache, ".sram", c.batch * cut.copy_row_bytes(), acc, on_copy, ctx);
  w.kernels()[v].accesses = std::move(acc);
  rep["first_layer_pin"] = copy;   // techniques.pins says whether it fitted
  rep["first_layer_pin_of"] = cache_name;
  rep["first_layer_pin_page_entries"] = c.page;
  rep["first_layer_pin_head_entries"] = cut.head;
  rep["first_layer_pin_share"] = double(cut.head) / double(c.page);
  return true;
}

// With the NPU's copy in the region, the whole cache is pinned beside it only if both fit in whole
// placement pages (the region's size unknown: asked, as before, and placement says). Otherwise the
// SMs' part stays where placement puts it: asking would only spill the pin and warn.
bool IndexShare::fits_beside(const Workload& w, int layer, uint64_t copy_bytes, const TechniqueContext& ctx,
                             nlohmann::json& rep) const {
  const uint64_t room = this->room(ctx);
  const CacheRows c = cache_rows(w, layer, ctx);
  if (room == 0 || !c.why.empty()) return true;
  const PlacementPolicy& policy = *ctx.placement;
  const uint64_t whole = policy.allocated_bytes(w.tensors()[c.tensor].bytes), copy = policy.allocated_bytes(copy_bytes);
  if (whole + copy <= room) return true;
  rep["first_layer_pin_not_asked"] = "the whole cache (" + std::to_string(whole) + " B) does not fit beside the NPU's copy (" +
                                     std::to_string(copy) + " B) in " + first_layer_region_ + " (" + std::to_string(room) +
                                     " B): the SMs read their part from where placement puts it";
  return false;
}

uint64_t IndexShare::offload_first_layer(Workload& w, int layer, const TechniqueContext& ctx, nlohmann::json& rep) const {
  auto& out = rep["npu_offload"];
  out["share_asked"] = npu_share_;
  if (ctx.processors < 2)
    throw config::ConfigError(share_file_, share_key_, std::to_string(npu_share_),
                              "needs hardware with an NPU (an npu: section, e.g. configs/hardware/h200-npu.yaml)");
  const size_t v = w.find(layer, trace::KernelKind::indexer_score);
  if (v == Workload::npos || !ctx.shape) {
    out["skipped"] = "no emulated indexer scoring in the first full layer";
    return 0;
  }
  const CacheRows c = cache_rows(w, layer, ctx);
  if (!c.why.empty()) {
    out["skipped"] = c.why;
    return 0;
  }
  const auto& md = w.metadata();
  const trace::ModelShape& m = *ctx.shape;
  const uint32_t cache = c.tensor;
  const uint64_t batch = c.batch, eb = c.entry_bytes, cap = c.entries, page = c.page;
  const uint64_t head = std::clamp<uint64_t>(uint64_t(std::llround(npu_share_ * double(page))), 1, page - 1);
  // The NPU's copy of its entries of every sequence's cache (rows of cap entries); the logits rows
  // are cut in the same proportion.
  const PageSplit cut{eb, page, head, cap * eb};
  const double fraction = double(head) / double(page);
  Workload::Kernel& gpu = w.kernels()[v];
  std::vector<trace::AccessRecord> npu_acc, gpu_acc;
  std::vector<size_t> on_copy;  // npu_acc records that read the copy (its tensor is added below)
  uint64_t npu_bytes = 0, all_bytes = 0, shared_bytes = 0;
  for (const auto& a : gpu.accesses) {
    std::vector<trace::AccessRecord> h, t;
    const bool scan = a.tensor == cache && !a.write;
    const bool scores = a.write && a.kind == trace::AccessRecord::Kind::strided;
    if ((scan && split_pages(a, cut, h, t)) || (!scan && scores && split_fraction(a, fraction, 4, h, t))) {
      if (scan) {
        for (const auto& r : h) {
          on_copy.push_back(npu_acc.size() + size_t(&r - h.data()));
          npu_bytes += r.total_bytes();
        }
        all_bytes += a.total_bytes();
      }
      npu_acc.insert(npu_acc.end(), h.begin(), h.end());
      gpu_acc.insert(gpu_acc.end(), t.begin(), t.end());
    } else {
      npu_acc.push_back(a);  // the queries: both read them
      gpu_acc.push_back(a);
      shared_bytes += a.total_bytes();
    }
  }
  if (npu_bytes == 0 || all_bytes == 0) {
    out["skipped"] = "the scoring kernel's scan is not a page-aligned strided read";
    return 0;
  }
  const uint64_t copy_bytes = batch * cut.copy_row_bytes();
  const std::string copy = pin_copy(w, cache, ".npu", copy_bytes, npu_acc, on_copy, ctx);
  const double f = double(npu_bytes) / double(all_bytes);
  trace::KernelRecord rec = gpu.rec;
  rec.name += ".npu";
  uint32_t stream = 0;
  for (const auto& k : w.kernels()) stream = std::max(stream, k.rec.stream);
  rec.stream = stream + 1;  // a stream of its own beside the SMs' kernels
  for (size_t p = 0; p < rec.flops.size(); ++p) rec.flops[p] *= f;
  gpu.accesses = std::move(gpu_acc);
  for (double& x : gpu.rec.flops) x *= 1.0 - f;
  const std::vector<size_t> preds = w.predecessors(v), succs = w.successors(v);
  const size_t nv = w.add_kernel(rec, std::move(npu_acc));
  Workload::Kernel& npu = w.kernels()[nv];
  npu.processor = 1;
  // The stationary operand of a task: the head dimension by the index heads of its queries.
  const uint64_t q = std::min<uint64_t>(new_tokens_per_sequence(md), m.kernels.indexer_q_tile_tokens);
  npu.mm_k = m.indexer.head_dim;
  npu.mm_n = uint64_t(m.local_index_heads()) * q;
  for (size_t p : preds) w.add_edge(p, nv);
  for (size_t s : succs) w.add_edge(nv, s);

  out["layer"] = layer;
  out["kernel"] = rec.name;
  out["page_entries"] = page;
  out["page_entries_on_npu"] = head;
  out["entries"] = cap;
  out["scan_bytes"] = all_bytes;
  out["scan_bytes_on_npu"] = npu_bytes;
  out["shared_bytes"] = shared_bytes;  // read by both parts (the queries)
  out["share"] = f;
  out["npu_copy"] = copy;   // pinned to first_layer_region; techniques.pins says whether it fitted
  return copy_bytes;
}

}  // namespace

INDEXSIM_REGISTER(TechniqueRegistry, "technique", "index_share",
                  [](const config::Node& n) { return std::make_unique<IndexShare>(n); });

}  // namespace indexsim::sim
