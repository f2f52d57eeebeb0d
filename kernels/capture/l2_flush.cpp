// SPDX-License-Identifier: Apache-2.0
#include "kernels/capture/l2_flush.hpp"

namespace indexsim::capture {

namespace k = indexsim::kernels;

L2Flush::L2Flush(uint64_t MiB, const std::string& mode) : bytes_(MiB << 20) {
  if (!bytes_) return;
  k::check(cudaMalloc(&buf_, bytes_), "cudaMalloc flush");
  if (mode == "read") {
    k::check(cudaMemset(buf_, 0x5a, bytes_), "cudaMemset flush");
    k::check(cudaMalloc(&sums_, (bytes_ / k::kStreamCtaBytes + 1) * 4), "cudaMalloc flush sums");
    reads_ = k::plan_read(sums_, buf_, bytes_);
  }
}

L2Flush::~L2Flush() {
  if (buf_) cudaFree(buf_);
  if (sums_) cudaFree(sums_);
}

void L2Flush::operator()(cudaStream_t stream, int value) const {
  if (!buf_) return;
  if (reads_.empty()) k::check(cudaMemsetAsync(buf_, value & 0xff, bytes_, stream), "L2 flush");
  for (const auto& st : reads_) st.launch(stream, nullptr);
}

}  // namespace indexsim::capture
