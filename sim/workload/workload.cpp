// SPDX-License-Identifier: Apache-2.0
#include "sim/workload/workload.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>

#include <boost/graph/topological_sort.hpp>

namespace indexsim::sim {

Workload::Workload(nlohmann::json metadata, std::vector<trace::TensorRecord> tensors,
                   const std::vector<trace::KernelRecord>& kernels, const std::vector<trace::AccessRecord>& accesses)
    : metadata_(std::move(metadata)), tensors_(std::move(tensors)) {
  for (size_t i = 0; i < tensors_.size(); ++i)
    if (tensors_[i].id != i)
      throw std::runtime_error("trace tensor ids must be 0..n-1 in order; tensor " + tensors_[i].name + " has id " +
                               std::to_string(tensors_[i].id));
  std::map<uint32_t, size_t> vertex_of;
  for (const auto& k : kernels) {
    if (!vertex_of.emplace(k.id, kernels_.size()).second)
      throw std::runtime_error("trace has two kernels with id " + std::to_string(k.id));
    kernels_.push_back({k, {}, false});
    boost::add_vertex(g_);
    next_id_ = std::max(next_id_, k.id + 1);
  }
  for (const auto& a : accesses) {
    auto it = vertex_of.find(a.kernel);
    if (it == vertex_of.end()) throw std::runtime_error("access record names unknown kernel " + std::to_string(a.kernel));
    if (a.tensor >= tensors_.size()) throw std::runtime_error("access record names unknown tensor " + std::to_string(a.tensor));
    kernels_[it->second].accesses.push_back(a);
  }
  for (size_t v = 0; v < kernels_.size(); ++v)
    for (uint32_t d : kernels_[v].rec.deps) {
      auto it = vertex_of.find(d);
      if (it == vertex_of.end())
        throw std::runtime_error("kernel " + kernels_[v].rec.name + " depends on unknown kernel " + std::to_string(d));
      add_edge(it->second, v);
    }
}

size_t Workload::live_kernels() const {
  return size_t(std::count_if(kernels_.begin(), kernels_.end(), [](const Kernel& k) { return !k.removed; }));
}

size_t Workload::add_kernel(trace::KernelRecord rec, std::vector<trace::AccessRecord> accesses) {
  rec.id = next_id_++;
  rec.deps.clear();
  for (auto& a : accesses) a.kernel = rec.id;
  kernels_.push_back({std::move(rec), std::move(accesses), false});
  boost::add_vertex(g_);
  return kernels_.size() - 1;
}

uint32_t Workload::add_tensor(trace::TensorRecord t) {
  t.id = uint32_t(tensors_.size());
  tensors_.push_back(std::move(t));
  return tensors_.back().id;
}

void Workload::add_edge(size_t from, size_t to) {
  if (from == to) throw std::runtime_error("kernel " + kernels_[from].rec.name + " cannot depend on itself");
  if (!has_edge(from, to)) boost::add_edge(from, to, g_);
}

bool Workload::has_edge(size_t from, size_t to) const { return boost::edge(from, to, g_).second; }

std::vector<size_t> Workload::predecessors(size_t v) const {
  std::vector<size_t> out;
  for (auto [it, end] = boost::in_edges(v, g_); it != end; ++it) out.push_back(boost::source(*it, g_));
  return out;
}

std::vector<size_t> Workload::successors(size_t v) const {
  std::vector<size_t> out;
  for (auto [it, end] = boost::out_edges(v, g_); it != end; ++it) out.push_back(boost::target(*it, g_));
  return out;
}

void Workload::remove_kernel(size_t v) {
  const auto preds = predecessors(v);
  const auto succs = successors(v);
  for (size_t p : preds)
    for (size_t s : succs) add_edge(p, s);
  boost::clear_vertex(v, g_);
  kernels_[v].removed = true;
}

std::vector<size_t> Workload::topological_order() const {
  std::vector<size_t> rev;
  try {
    boost::topological_sort(g_, std::back_inserter(rev));
  } catch (const boost::not_a_dag&) {
    throw std::runtime_error("workload kernel graph has a cycle");
  }
  std::reverse(rev.begin(), rev.end());
  // Keep trace order where the graph allows it: a stable sort by (depth, original index) would be
  // nicer to read, but launch order among ready kernels is taken from this order, so make it the
  // original index order whenever that respects the edges.
  std::vector<size_t> by_index(kernels_.size());
  for (size_t i = 0; i < by_index.size(); ++i) by_index[i] = i;
  bool index_order_ok = true;
  for (size_t v = 0; v < kernels_.size() && index_order_ok; ++v)
    for (size_t s : successors(v))
      if (s < v) {
        index_order_ok = false;
        break;
      }
  return index_order_ok ? by_index : rev;
}

size_t Workload::find(int layer, trace::KernelKind kind) const {
  for (size_t v = 0; v < kernels_.size(); ++v)
    if (!kernels_[v].removed && kernels_[v].rec.layer == layer && kernels_[v].rec.kind == kind) return v;
  return npos;
}

void Workload::lower(std::vector<trace::KernelRecord>& kernels, std::vector<trace::AccessRecord>& accesses) const {
  kernels.clear();
  accesses.clear();
  for (size_t v : topological_order()) {
    const Kernel& k = kernels_[v];
    if (k.removed) continue;
    trace::KernelRecord r = k.rec;
    r.deps.clear();
    for (size_t p : predecessors(v)) r.deps.push_back(kernels_[p].rec.id);
    std::sort(r.deps.begin(), r.deps.end());
    kernels.push_back(std::move(r));
    for (const auto& a : k.accesses) accesses.push_back(a);
  }
}

uint64_t Workload::bytes_of(trace::TensorClass c) const {
  uint64_t s = 0;
  for (const auto& t : tensors_)
    if (t.cls == c) s += t.bytes;
  return s;
}

}  // namespace indexsim::sim
