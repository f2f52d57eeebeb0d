// SPDX-License-Identifier: Apache-2.0
// Hashed index compression: the seeds' "hash-based compression ... through locality-sensitive
// hashing" (seeds/004), as sign random projections (SimHash: M. Charikar, "Similarity estimation
// techniques from rounding algorithms", STOC 2002). Each key k is stored as `bits` signs
// s_i = sign(r_i · k) of Gaussian projections r_i ~ N(0, I) shared by the whole cache (regenerated
// from `seed`, not stored) and its norm |k| in FP16.
//
// The indexer scores a query q against the signs without decoding anything it does not have:
// for Gaussian r, E[(r · q) sign(r · k)] = sqrt(2/pi) (q · k) / |k|, so
//     score(q, k) = |k| sqrt(pi/2) / bits · sum_i (r_i · q) s_i
// is an unbiased estimate of q · k (asymmetric: the query is projected, not hashed). In the
// accuracy study's one form (stored.hpp) that is the dot product of q with the reconstruction
// k^ = |k| sqrt(pi/2) / bits · sum_i s_i r_i, which is what hash_keys stores.
#pragma once

#include <cstdint>
#include <string>

#include "sim/functional/stored.hpp"

namespace indexsim::sim::functional {

struct HashSpec {
  int bits = 336;      // signs a key; 336 + a 16-bit norm = 44 B, 1/3 of DSA's 132-byte FP8 entry
  uint64_t seed = 1;   // of the projections
};

std::string describe(const HashSpec& h);
// Bytes a token: the signs and the FP16 norm.
double hash_bytes_per_token(const HashSpec& h);

Stored hash_keys(const float* keys, int64_t tokens, int dim, const HashSpec& h);

}  // namespace indexsim::sim::functional
