// SPDX-License-Identifier: Apache-2.0
#include "sim/functional/linalg.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <string>

namespace indexsim::sim::functional {

Eigen symmetric_eigen(std::vector<double> a, int n) {
  if (n <= 0 || a.size() != size_t(n) * size_t(n)) throw std::invalid_argument("symmetric_eigen: a must be n × n");
  std::vector<double> v(size_t(n) * size_t(n), 0.0);
  for (int i = 0; i < n; ++i) v[size_t(i) * n + i] = 1.0;
  auto A = [&](int i, int j) -> double& { return a[size_t(i) * n + j]; };
  double total = 0;
  for (double x : a) total += x * x;
  for (int sweep = 0; sweep < 100; ++sweep) {
    double off = 0;
    for (int i = 0; i < n; ++i)
      for (int j = i + 1; j < n; ++j) off += A(i, j) * A(i, j);
    if (off <= 1e-24 * total) break;  // off-diagonal mass at double rounding level: converged
    for (int p = 0; p < n; ++p) {
      for (int q = p + 1; q < n; ++q) {
        const double apq = A(p, q);
        if (apq == 0) continue;
        // The rotation that zeroes a(p,q) (Golub & Van Loan, Algorithm 8.4.1).
        const double tau = (A(q, q) - A(p, p)) / (2 * apq);
        const double t = (tau >= 0 ? 1 : -1) / (std::fabs(tau) + std::sqrt(1 + tau * tau));
        const double c = 1 / std::sqrt(1 + t * t), s = t * c;
        for (int k = 0; k < n; ++k) {
          const double akp = A(k, p), akq = A(k, q);
          A(k, p) = c * akp - s * akq;
          A(k, q) = s * akp + c * akq;
        }
        for (int k = 0; k < n; ++k) {
          const double apk = A(p, k), aqk = A(q, k);
          A(p, k) = c * apk - s * aqk;
          A(q, k) = s * apk + c * aqk;
        }
        for (int k = 0; k < n; ++k) {
          const double vkp = v[size_t(k) * n + p], vkq = v[size_t(k) * n + q];
          v[size_t(k) * n + p] = c * vkp - s * vkq;
          v[size_t(k) * n + q] = s * vkp + c * vkq;
        }
      }
    }
  }
  std::vector<int> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int x, int y) { return A(x, x) > A(y, y); });
  Eigen e;
  e.values.resize(size_t(n));
  e.vectors.resize(size_t(n) * size_t(n));
  for (int j = 0; j < n; ++j) {
    const int src = order[size_t(j)];
    e.values[size_t(j)] = A(src, src);
    // A fixed sign (largest component positive) keeps the basis the same from run to run and platform to platform.
    int big = 0;
    for (int k = 1; k < n; ++k)
      if (std::fabs(v[size_t(k) * n + src]) > std::fabs(v[size_t(big) * n + src])) big = k;
    const double sign = v[size_t(big) * n + src] < 0 ? -1.0 : 1.0;
    for (int k = 0; k < n; ++k) e.vectors[size_t(k) * n + j] = sign * v[size_t(k) * n + src];
  }
  return e;
}

std::vector<double> hadamard(int n) {
  if (n <= 0 || (n & (n - 1)) != 0) throw std::invalid_argument("hadamard: n must be a power of two, got " + std::to_string(n));
  std::vector<double> h(size_t(n) * size_t(n));
  const double s = 1.0 / std::sqrt(double(n));
  // H[i][j] = (-1)^popcount(i & j): Sylvester's construction in closed form.
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) h[size_t(i) * n + j] = (__builtin_popcount(unsigned(i & j)) & 1) ? -s : s;
  return h;
}

}  // namespace indexsim::sim::functional
