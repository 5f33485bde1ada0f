// Shared-memory allreduce inside one node (see shm_allreduce.cpp for the protocol).
#pragma once
#include <functional>

#include "detail.hpp"
#include "shm_window.hpp"

namespace taihu::comm::detail {

// Called once per rank between the node reduce-scatter and allgather with this rank's
// reduced block (possibly empty); the hierarchical algorithm allreduces it across nodes.
template <class T>
using AcrossHook = std::function<void(T* block, std::size_t count)>;

template <class T>
void shm_allreduce(ShmNode& node, T* data, std::size_t count, const AcrossHook<T>& across = {});

}  // namespace taihu::comm::detail
