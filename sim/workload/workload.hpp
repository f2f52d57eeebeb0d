// SPDX-License-Identifier: Apache-2.0
// A Workload is the DAG of kernel launches of one step, built from a trace: vertices are kernels
// (with their access patterns), an edge u → v says v waits for u (stream order or an event).
// Techniques rewrite it (remove kernels, add kernels and edges, move a kernel to another stream,
// retarget accesses to other tensors) before it is lowered back to records for the replay.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <boost/graph/adjacency_list.hpp>
#include <nlohmann/json.hpp>

#include "traces/records.hpp"

namespace indexsim::sim {

class Workload {
 public:
  struct Kernel {
    trace::KernelRecord rec;                 // rec.deps is ignored here: the graph holds dependences
    std::vector<trace::AccessRecord> accesses;
    bool removed = false;
    // Which processor runs it: 0 the GPU's SMs, 1 the NPU (hardware `npu:`), set by placement and
    // techniques; and the stationary operand of its matrix work (K x N, 0 = unknown), for the NPU.
    uint32_t processor = 0;
    uint64_t mm_k = 0, mm_n = 0;
  };
  using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS>;

  Workload() = default;
  Workload(nlohmann::json metadata, std::vector<trace::TensorRecord> tensors,
           const std::vector<trace::KernelRecord>& kernels, const std::vector<trace::AccessRecord>& accesses);

  const nlohmann::json& metadata() const { return metadata_; }
  nlohmann::json& metadata() { return metadata_; }
  std::vector<trace::TensorRecord>& tensors() { return tensors_; }
  const std::vector<trace::TensorRecord>& tensors() const { return tensors_; }
  std::vector<Kernel>& kernels() { return kernels_; }
  const std::vector<Kernel>& kernels() const { return kernels_; }
  size_t live_kernels() const;

  // Adds a kernel (its id is assigned here) and returns its vertex index.
  size_t add_kernel(trace::KernelRecord rec, std::vector<trace::AccessRecord> accesses);
  uint32_t add_tensor(trace::TensorRecord t);  // returns the new tensor id
  void add_edge(size_t from, size_t to);
  bool has_edge(size_t from, size_t to) const;
  // Removes a kernel; its predecessors become predecessors of its successors, so order is kept.
  void remove_kernel(size_t v);
  std::vector<size_t> predecessors(size_t v) const;
  std::vector<size_t> successors(size_t v) const;

  // Vertices in an order that respects every edge; throws naming a kernel on a cycle.
  std::vector<size_t> topological_order() const;
  // The first live kernel of `layer` with `kind`, or npos.
  size_t find(int layer, trace::KernelKind kind) const;
  static constexpr size_t npos = size_t(-1);

  // The DAG written back as trace records: live kernels in topological order, deps from the graph.
  void lower(std::vector<trace::KernelRecord>& kernels, std::vector<trace::AccessRecord>& accesses) const;

  uint64_t bytes_of(trace::TensorClass c) const;  // footprint of all tensors of a class

 private:
  nlohmann::json metadata_;
  std::vector<trace::TensorRecord> tensors_;
  std::vector<Kernel> kernels_;
  Graph g_;
  uint32_t next_id_ = 0;
};

}  // namespace indexsim::sim
