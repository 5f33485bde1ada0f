// Allreduce among the ranks of one node through the shared window (ShmNode).
//
// Small vectors (all ranks' data <= 32 KiB): every rank publishes its vector, one
// barrier, every rank sums all slots in local-rank order (same order everywhere, so
// identical results) - one barrier per call.
// Larger vectors: reduce-scatter + allgather through memory, two barriers per call:
//   1. publish: copy the parts of my vector other ranks will reduce into my slot;
//   2. barrier; reduce my block (1/L of the vector) reading the other ranks' slots
//      directly; run the `across` hook on it (the hierarchical algorithm's inter-node
//      step, empty here); store it in my slot;
//   3. barrier; copy the other ranks' reduced blocks out of their slots.
// At 2 ranks each rank reads half of the other's window directly: ~3 copies of the
// vector through memory per rank instead of the ~4 a point-to-point exchange costs.
#include "shm_allreduce.hpp"

#include <algorithm>
#include <cstring>

namespace taihu::comm::detail {

template <class T>
void shm_allreduce(ShmNode& node, T* data, std::size_t count, const AcrossHook<T>& across) {
  const int L = node.local_size();
  const int me = node.local_rank();
  node.begin_call(count, count * sizeof(T));
  if (L == 1) {
    if (across) across(data, count);
    return;
  }
  const bool small = !across && count * sizeof(T) * static_cast<std::size_t>(L) <= (32u << 10);
  T* mine = reinterpret_cast<T*>(node.slot(me));
  if (small) {
    std::memcpy(mine, data, count * sizeof(T));
    node.barrier();
    node.check_counts();
    const T* s0 = reinterpret_cast<const T*>(node.slot(0));
    const T* s1 = reinterpret_cast<const T*>(node.slot(1));
    add3(data, s0, s1, count);
    for (int q = 2; q < L; ++q) add_into(data, reinterpret_cast<const T*>(node.slot(q)), count);
    return;
  }
  const std::size_t b = block_begin(count, L, me), e = block_begin(count, L, me + 1);
  std::memcpy(mine, data, b * sizeof(T));
  std::memcpy(mine + e, data + e, (count - e) * sizeof(T));
  node.barrier();
  node.check_counts();
  // My block: fixed order (own vector first, then local ranks ascending), in tiles that
  // stay in L1 while every other rank's slot is added to them.
  constexpr std::size_t kTile = 4096 / sizeof(T);
  for (std::size_t t = b; t < e; t += kTile) {
    const std::size_t n = std::min(kTile, e - t);
    for (int q = 0; q < L; ++q)
      if (q != me) add_into(data + t, reinterpret_cast<const T*>(node.slot(q)) + t, n);
  }
  if (across) across(data + b, e - b);
  std::memcpy(mine + b, data + b, (e - b) * sizeof(T));
  node.barrier();
  for (int q = 0; q < L; ++q) {
    if (q == me) continue;
    const std::size_t qb = block_begin(count, L, q), qe = block_begin(count, L, q + 1);
    std::memcpy(data + qb, reinterpret_cast<const T*>(node.slot(q)) + qb, (qe - qb) * sizeof(T));
  }
}

template void shm_allreduce<float>(ShmNode&, float*, std::size_t, const AcrossHook<float>&);
template void shm_allreduce<double>(ShmNode&, double*, std::size_t, const AcrossHook<double>&);

}  // namespace taihu::comm::detail
