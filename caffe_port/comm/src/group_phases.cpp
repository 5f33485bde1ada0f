// The reduce-scatter and allgather phases the hierarchical algorithm runs inside one
// tier group. Contract (as ring_reduce_scatter / ring_allgather): on the block
// partition block_begin(count, p, i), after the reduce-scatter rank r owns block r fully
// reduced, and the allgather spreads every rank's block r to all.
// A power-of-two group uses recursive halving / doubling: log2(p) steps instead of the
// ring's p-1, the same (p-1)/p of the vector moved per rank. Per step a message's
// latency is what the loaded 2 cores of the namespace cluster pay most (0.1-1.5 ms per
// step), so fewer steps matter at 64 KiB-1 MiB. Halving runs with the distance
// descending (p/2, ..., 1) so that rank r ends with block r; inside one tier group every
// link is the same, so the order of distances costs nothing. Other sizes use the ring.
// Each block is reduced by exactly one rank, so ranks stay bitwise identical.
#include "detail.hpp"

namespace taihu::comm::detail {

namespace {
bool power_of_two(int p) { return p > 0 && (p & (p - 1)) == 0; }
constexpr int kHalvingTag = 7400, kDoublingTag = 7500;
}  // namespace

template <class T>
void group_reduce_scatter(MPI_Comm comm, T* data, std::size_t count, Scratch& s) {
  int p = 1, r = 0;
  MPI_Comm_size(comm, &p);
  MPI_Comm_rank(comm, &r);
  if (p == 1 || count == 0) return;
  if (!power_of_two(p)) return ring_reduce_scatter(comm, data, count, s);
  T* tmp = s.get<T>(block_begin(count, p, p / 2) + 1);  // the largest half received
  int lo = 0, hi = p;                                    // the blocks this rank still reduces
  for (int mask = p / 2; mask >= 1; mask >>= 1)
    halving_step(comm, data, tmp, count, p, (r & mask) == 0, r ^ mask, kHalvingTag + mask % 100, lo, hi);
}

template <class T>
void group_allgather(MPI_Comm comm, T* data, std::size_t count) {
  int p = 1, r = 0;
  MPI_Comm_size(comm, &p);
  MPI_Comm_rank(comm, &r);
  if (p == 1 || count == 0) return;
  if (!power_of_two(p)) return ring_allgather(comm, data, count);
  auto at = [&](int block) { return block_begin(count, p, block); };
  for (int mask = 1; mask < p; mask <<= 1) {
    const int partner = r ^ mask;
    const int mine = r & ~(mask - 1), theirs = partner & ~(mask - 1);  // aligned runs of `mask` blocks
    sendrecv(data + at(mine), at(mine + mask) - at(mine), partner, data + at(theirs), at(theirs + mask) - at(theirs),
             partner, kDoublingTag + mask % 100, comm);
  }
}

template void group_reduce_scatter<float>(MPI_Comm, float*, std::size_t, Scratch&);
template void group_reduce_scatter<double>(MPI_Comm, double*, std::size_t, Scratch&);
template void group_allgather<float>(MPI_Comm, float*, std::size_t);
template void group_allgather<double>(MPI_Comm, double*, std::size_t);

}  // namespace taihu::comm::detail
