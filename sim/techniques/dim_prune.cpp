// SPDX-License-Identifier: Apache-2.0
// DimPrune: store indexer keys in a PCA basis truncated to the dimensions that hold a target share
// of the variance (measured on the real-vector fixture), or to a fixed count; queries are projected
// into the same basis each step (a small GEMV per layer, added as a kernel before the scoring).
#include <algorithm>
#include <cmath>
#include <map>

#include "sim/core/version.hpp"
#include "sim/functional/fixture.hpp"
#include "sim/functional/prune.hpp"
#include "sim/techniques/technique.hpp"

namespace indexsim::sim {

namespace {

using config::Rule;
namespace fn = functional;

class DimPrune : public Technique {
 public:
  explicit DimPrune(const config::Node& n) {
    keep_dims_ = n.opt<int>("keep_dims", 0, Rule::range(0, 4096));
    variance_share_ = n.opt<double>("variance_share", 0.95, Rule::range(0.01, 1.0));
    basis_ = n.opt<std::string>("basis", "pca", Rule::choice({"pca", "hadamard_pca"}));
    fixture_ = n.opt<std::string>("fixture", "tests/data/vectors");
    if (keep_dims_ == 0) {
      // Measure the share on real keys: the most demanding layer of the fixture sets the count.
      std::string dir = fixture_;
      if (!dir.empty() && dir[0] != '/') dir = source_dir() + "/" + dir;
      const fn::VectorSet v = fn::load_fixture(dir);
      fn::PruneSpec spec;
      spec.variance_share = variance_share_;
      spec.basis = basis_ == "pca" ? fn::PruneBasis::pca : fn::PruneBasis::hadamard_pca;
      for (int l = 0; l < v.layers; ++l) {
        const fn::PruneFit fit = fn::fit_prune(v.keys_of(l), v.tokens, v.dim, spec.basis);
        measured_fraction_ = std::max(measured_fraction_, double(fn::kept_dims(fit, spec)) / v.dim);
      }
    }
  }

  void reshape(trace::ModelShape& m) const override {
    original_dim_ = m.indexer.head_dim;
    const uint32_t kept = keep_dims_ > 0 ? uint32_t(keep_dims_)
                                         : uint32_t(std::ceil(measured_fraction_ * original_dim_ - 1e-9));
    m.indexer.head_dim = std::clamp<uint32_t>(kept, 1, original_dim_);
    kept_ = m.indexer.head_dim;
  }

  void transform(Workload& w, TechniqueContext& ctx) const override {
    auto& rep = (*ctx.report)["dim_prune"];
    rep["kept_dims"] = kept_;
    rep["original_dims"] = original_dim_;
    if (keep_dims_ == 0) rep["measured_kept_fraction"] = measured_fraction_;
    if (!ctx.shape) return;
    // Per layer that scores: project the new key (1 row) and the queries (index heads rows) from
    // original_dim to kept dims, reading the BF16 projection matrix once.
    const auto& m = *ctx.shape;
    const double rows_per_token = double(m.local_index_heads()) + 1.0;
    const size_t n = w.kernels().size();
    std::map<int, uint32_t> projection;  // a layer's matrix, one for both micro-batches of a split step
    for (size_t v = 0; v < n; ++v) {
      const auto& k = w.kernels()[v];
      if (k.removed || k.rec.kind != trace::KernelKind::indexer_score) continue;
      const int L = k.rec.layer;
      auto [at, fresh] = projection.try_emplace(L, 0);
      if (fresh)
        at->second = w.add_tensor({0, "L" + std::to_string(L) + ".prune_projection", trace::TensorClass::weights, L,
                                   uint64_t(original_dim_) * kept_ * 2});
      const uint32_t proj = at->second;
      trace::KernelRecord r;
      r.name = name_beside(k.rec, "prune_proj");
      r.kind = trace::KernelKind::prune_proj;
      r.layer = L;
      r.stream = k.rec.stream;
      r.grid = {std::max<uint32_t>(1, kept_ / 16), 1, 1};
      r.block = {128, 1, 1};
      r.regs_per_thread = 64;
      const double tokens = std::max(1.0, k.rec.grid[1] * 1.0);  // sequences in this step's batch
      r.flops[int(trace::Precision::bf16)] = 2.0 * rows_per_token * original_dim_ * kept_ * tokens;
      trace::AccessRecord a;
      a.cta_first = 0;
      a.cta_count = r.grid[0];
      a.tensor = proj;
      a.elem_bytes = original_dim_ * 2 * 16;
      a.count = 1;
      a.stride_bytes = a.elem_bytes;
      a.cta_stride_bytes = a.elem_bytes;
      const size_t pv = w.add_kernel(r, {a});
      for (size_t p : w.predecessors(v)) w.add_edge(p, pv);
      w.add_edge(pv, v);
    }
  }

 private:
  int keep_dims_ = 0;
  double variance_share_ = 0.95;
  std::string basis_, fixture_;
  double measured_fraction_ = 0;
  mutable uint32_t original_dim_ = 0, kept_ = 0;
};

}  // namespace

INDEXSIM_REGISTER(TechniqueRegistry, "technique", "dim_prune",
                  [](const config::Node& n) { return std::make_unique<DimPrune>(n); });

}  // namespace indexsim::sim
