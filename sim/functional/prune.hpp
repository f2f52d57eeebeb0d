// SPDX-License-Identifier: Apache-2.0
// DimPrune's functional model: keep the dimensions that hold a target share of the variance, or a
// fixed count, measured on the keys themselves (the fit and the evaluation use the same keys).
// The basis the dimensions are counted in:
//   pca              principal axes of the keys (centred); what the technique prescribes
//   coords           the stored coordinates as they are, ranked by their own variance
//   hadamard_coords  the coordinates after an orthonormal Hadamard rotation
//   hadamard_pca     principal axes after the rotation: the same spectrum as pca (rotation-invariant)
// Pruned coordinates are reconstructed as their mean, so scoring the reconstruction equals scoring
// the pruned keys with a query projected into the same basis plus a constant per query.
#pragma once

#include <cstdint>
#include <string>

#include "sim/functional/stored.hpp"

namespace indexsim::sim::functional {

enum class PruneBasis { pca, coords, hadamard_coords, hadamard_pca };

struct PruneSpec {
  PruneBasis basis = PruneBasis::pca;
  double variance_share = 0.95;   // used when keep_dims == 0
  int keep_dims = 0;
};

Stored prune_keys(const float* keys, int64_t tokens, int dim, const PruneSpec& spec);

std::string describe(const PruneSpec& spec);
const char* name(PruneBasis b);

}  // namespace indexsim::sim::functional
