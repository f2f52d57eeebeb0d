// SPDX-License-Identifier: Apache-2.0
// The little linear algebra the pruning model needs, in double precision: the eigen-decomposition
// of a symmetric matrix (cyclic Jacobi: exact enough and short for the 128 × 128 covariances here)
// and the orthonormal Hadamard matrix.
#pragma once

#include <vector>

namespace indexsim::sim::functional {

struct Eigen {
  std::vector<double> values;    // n, descending
  std::vector<double> vectors;   // n × n row-major; column j is the unit eigenvector of values[j]
};

// a: n × n symmetric, row-major.
Eigen symmetric_eigen(std::vector<double> a, int n);

// Sylvester's Hadamard matrix scaled by 1/sqrt(n): orthonormal and symmetric. n must be a power of two.
std::vector<double> hadamard(int n);

}  // namespace indexsim::sim::functional
