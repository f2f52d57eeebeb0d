// SPDX-License-Identifier: Apache-2.0
// Independent pieces of work on several threads, the result the same whatever their number: each
// piece writes only its own slot (the caller keeps results by index), and the calling thread works
// too. Used for a whole prefill's sampled chunks and validate --published's cases.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <thread>
#include <vector>

namespace indexsim::sim {

// Runs fn(i) for every i in [first, n), at most `threads` at once (at least one: the caller), each
// index once, taken in increasing order. fn must not throw.
template <class Fn>
void for_each_index(size_t first, size_t n, size_t threads, Fn&& fn) {
  if (first >= n) return;
  std::atomic<size_t> next{first};
  const auto worker = [&] {
    for (size_t i; (i = next.fetch_add(1)) < n;) fn(i);
  };
  std::vector<std::thread> pool;
  for (size_t t = 1; t < std::min(std::max<size_t>(1, threads), n - first); ++t) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
}

}  // namespace indexsim::sim
