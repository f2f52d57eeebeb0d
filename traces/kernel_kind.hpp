// SPDX-License-Identifier: Apache-2.0
// Kernel kinds: one enumeration with its names. A trace stores the name (FORMAT.md); everything in
// memory holds the enumerator, so a kind is matched by value and a misspelt one does not compile.
// A new kind of kernel (a captured library's, a technique's) is one row here.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace indexsim::trace {

#define INDEXSIM_KERNEL_KINDS(X)                                                        \
  X(gemm)           /* dense projections, MLP, lm_head */                               \
  X(moe_gemm)       /* routed experts' grouped GEMM */                                  \
  X(indexer_score)  /* indexer scoring over the indexer cache (DeepGEMM MQA logits) */ \
  X(topk)           /* top-k selection of the indexer scores */                         \
  X(sparse_attn)    /* attention over the selected KV rows (FlashMLA sparse) */         \
  X(index_append)   /* indexer-cache append */                                          \
  X(kv_append)      /* KV-cache append */                                               \
  X(linear_state)   /* linear-attention state update */                                 \
  X(elementwise)    /* norms, activations, residuals */                                 \
  X(copy)           /* calibration: device-to-device copy */                            \
  X(read)           /* calibration: read-only stream */                                 \
  X(pool)           /* IndexPool's gated pooling (captured kernel) */                   \
  X(project)        /* DimPrune's projection (captured kernel) */                       \
  X(kv_prefetch)    /* IndexShare: KV rows into the L2 ahead of the attention */       \
  X(pool_gate)      /* IndexPool: gates and pooled vectors of the appended tokens */    \
  X(prune_proj)     /* DimPrune: query projection onto the kept dimensions */           \
  X(all_reduce)     /* NCCL all-reduce (tensor-parallel partial sums) */                \
  X(all_gather)     /* NCCL all-gather */                                               \
  X(reduce_scatter) /* NCCL reduce-scatter */                                           \
  X(all_to_all)     /* NCCL all-to-all */                                               \
  X(ep_dispatch)    /* DeepEP dispatch: tokens to the ranks of their experts */          \
  X(ep_combine)     /* DeepEP combine: expert outputs back to their tokens' ranks */     \
  X(test)           /* unit tests' kernels */

enum class KernelKind : uint8_t {
#define INDEXSIM_KIND_ENUM(k) k,
  INDEXSIM_KERNEL_KINDS(INDEXSIM_KIND_ENUM)
#undef INDEXSIM_KIND_ENUM
};

inline const char* to_string(KernelKind k) {
  switch (k) {
#define INDEXSIM_KIND_NAME(n) \
  case KernelKind::n:         \
    return #n;
    INDEXSIM_KERNEL_KINDS(INDEXSIM_KIND_NAME)
#undef INDEXSIM_KIND_NAME
  }
  return "?";
}

// Collectives and expert-parallel dispatch/combine: kernels that wait on other GPUs.
inline bool is_communication(KernelKind k) {
  return k == KernelKind::all_reduce || k == KernelKind::all_gather || k == KernelKind::reduce_scatter ||
         k == KernelKind::all_to_all || k == KernelKind::ep_dispatch || k == KernelKind::ep_combine;
}

// The kind named `name`; std::invalid_argument naming it and the choices when it is none.
inline KernelKind kernel_kind(const std::string& name) {
#define INDEXSIM_KIND_PARSE(n) \
  if (name == #n) return KernelKind::n;
  INDEXSIM_KERNEL_KINDS(INDEXSIM_KIND_PARSE)
#undef INDEXSIM_KIND_PARSE
  std::string all;
#define INDEXSIM_KIND_LIST(n) all += (all.empty() ? "" : ", ") + std::string(#n);
  INDEXSIM_KERNEL_KINDS(INDEXSIM_KIND_LIST)
#undef INDEXSIM_KIND_LIST
  throw std::invalid_argument("unknown kernel kind '" + name + "' (one of " + all + "; traces/kernel_kind.hpp)");
}

}  // namespace indexsim::trace
