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
#include <vector>

#include "sim/functional/quantize.hpp"
#include "sim/functional/stored.hpp"

namespace indexsim::sim::functional {

enum class PruneBasis { pca, coords, hadamard_coords, hadamard_pca };

struct PruneSpec {
  PruneBasis basis = PruneBasis::pca;
  double variance_share = 0.95;   // used when keep_dims == 0
  int keep_dims = 0;
  Format precision = Format::fp16;   // of the stored coordinates (fp16 or fp32)
};

// The measured part, shared by every target share and count in one basis: the keys in the basis's
// frame (rotated if Hadamard), centred, and the basis's columns ordered by the variance they carry.
struct PruneFit {
  PruneBasis basis = PruneBasis::pca;
  int64_t tokens = 0;
  int dim = 0;
  std::vector<double> mean;       // dim, in the rotated frame
  std::vector<double> axes;       // dim × dim row-major; column j carries variance[j]
  std::vector<double> variance;   // dim, descending
  std::vector<float> centred;     // tokens × dim, rotated and centred
  std::vector<float> rotation;    // dim × dim Hadamard, empty when not rotated
};

PruneFit fit_prune(const float* keys, int64_t tokens, int dim, PruneBasis basis);
Stored prune_keys(const PruneFit& fit, const PruneSpec& spec);
Stored prune_keys(const float* keys, int64_t tokens, int dim, const PruneSpec& spec);
// Dimensions kept for a spec: keep_dims, or the fewest leading axes holding variance_share of the total.
int kept_dims(const PruneFit& fit, const PruneSpec& spec);

std::string describe(const PruneSpec& spec);
const char* name(PruneBasis b);

}  // namespace indexsim::sim::functional
