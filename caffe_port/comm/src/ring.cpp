// Pipelined ring allreduce: 2(p-1) steps, in each a rank receives one block (1/p of the
// vector) from its left neighbour in segments; as each segment arrives it is reduced
// (reduce-scatter steps) or stored (allgather steps) and immediately forwarded to the
// right neighbour, so transfer, reduction and forwarding of consecutive segments
// overlap. After the reduce-scatter steps rank r owns block r; every block is reduced
// exactly once, so all ranks end bitwise identical. Also used per tier as separate
// reduce-scatter and allgather phases by the hierarchical algorithm.
#include <algorithm>
#include <vector>

#include "detail.hpp"

namespace taihu::comm::detail {

namespace {

inline int mod(long long a, int p) { return static_cast<int>(((a % p) + p) % p); }

// Steps [first, last] of the ring (0..p-2 reduce-scatter, p-1..2p-3 allgather).
template <class T>
void ring_steps(MPI_Comm comm, T* data, std::size_t count, std::size_t segment_elems,
                Scratch& scratch, int first, int last) {
  int p = 1, r = 0;
  MPI_Comm_size(comm, &p);
  MPI_Comm_rank(comm, &r);
  if (p == 1 || count == 0) return;
  const int right = (r + 1) % p, left = (r - 1 + p) % p;
  const std::size_t max_block = (count + p - 1) / p;
  segment_elems = std::max<std::size_t>({segment_elems, 1, max_block / 256});
  segment_elems = std::min(segment_elems, kMaxMessageElems);
  T* tmp = first < p - 1 ? scratch.get<T>(max_block) : nullptr;

  auto block_of_step = [&](int rank, int t) { return mod(static_cast<long long>(rank) - t - 2, p); };
  auto block_range = [&](int b) {
    return std::pair{block_begin(count, p, b), block_begin(count, p, b + 1)};
  };
  // Sends issued at each step (index t + 1; the initial sends are "step -1").
  std::vector<std::vector<MPI_Request>> sends(static_cast<std::size_t>(last - first + 2));
  auto isend_range = [&](std::size_t b, std::size_t e, int tag, std::vector<MPI_Request>& out) {
    for (std::size_t s = b; s < e; s += segment_elems) {
      const std::size_t n = std::min(segment_elems, e - s);
      MPI_Request req;
      check_mpi(MPI_Isend(data + s, static_cast<int>(n), mpi_type<T>(), right, tag, comm, &req), "MPI_Isend");
      out.push_back(req);
    }
  };
  {
    // What the right neighbour receives at its step `first`.
    const auto [b, e] = block_range(block_of_step(right, first));
    isend_range(b, e, first, sends[0]);
  }
  std::vector<MPI_Request> recvs;
  for (int t = first; t <= last; ++t) {
    const std::size_t slot = static_cast<std::size_t>(t - first + 1);
    if (slot >= 2) {
      auto& old = sends[slot - 2];
      check_mpi(MPI_Waitall(static_cast<int>(old.size()), old.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
      old.clear();
    }
    const bool reduce = t < p - 1;
    const auto [b, e] = block_range(block_of_step(r, t));
    recvs.clear();
    for (std::size_t s = b; s < e; s += segment_elems) {
      const std::size_t n = std::min(segment_elems, e - s);
      T* into = reduce ? tmp + (s - b) : data + s;
      MPI_Request req;
      check_mpi(MPI_Irecv(into, static_cast<int>(n), mpi_type<T>(), left, t, comm, &req), "MPI_Irecv");
      recvs.push_back(req);
    }
    std::size_t k = 0;
    for (std::size_t s = b; s < e; s += segment_elems, ++k) {
      const std::size_t n = std::min(segment_elems, e - s);
      check_mpi(MPI_Wait(&recvs[k], MPI_STATUS_IGNORE), "MPI_Wait");
      if (reduce) add_into(data + s, tmp + (s - b), n);
      if (t < last) isend_range(s, s + n, t + 1, sends[slot]);
    }
  }
  for (auto& v : sends)
    check_mpi(MPI_Waitall(static_cast<int>(v.size()), v.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
}

}  // namespace

template <class T>
void ring_allreduce(MPI_Comm comm, T* data, std::size_t count, std::size_t segment_elems, Scratch& s) {
  int p = 1;
  MPI_Comm_size(comm, &p);
  ring_steps(comm, data, count, segment_elems, s, 0, 2 * p - 3);
}

template <class T>
void ring_reduce_scatter(MPI_Comm comm, T* data, std::size_t count, Scratch& s) {
  int p = 1;
  MPI_Comm_size(comm, &p);
  ring_steps(comm, data, count, std::size_t{1} << 16, s, 0, p - 2);
}

template <class T>
void ring_allgather(MPI_Comm comm, T* data, std::size_t count) {
  int p = 1;
  MPI_Comm_size(comm, &p);
  Scratch unused;
  ring_steps(comm, data, count, std::size_t{1} << 16, unused, p - 1, 2 * p - 3);
}

template void ring_allreduce<float>(MPI_Comm, float*, std::size_t, std::size_t, Scratch&);
template void ring_allreduce<double>(MPI_Comm, double*, std::size_t, std::size_t, Scratch&);
template void ring_reduce_scatter<float>(MPI_Comm, float*, std::size_t, Scratch&);
template void ring_reduce_scatter<double>(MPI_Comm, double*, std::size_t, Scratch&);
template void ring_allgather<float>(MPI_Comm, float*, std::size_t);
template void ring_allgather<double>(MPI_Comm, double*, std::size_t);

}  // namespace taihu::comm::detail
