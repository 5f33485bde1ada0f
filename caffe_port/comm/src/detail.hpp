// Private plumbing shared by the algorithm files: MPI datatype of T, the elementwise
// reduction kernels, the block partition, chunked point-to-point for counts beyond
// INT_MAX, and the algorithm entry points (one .cpp per algorithm).
#pragma once
#include <mpi.h>

#include <cstddef>
#include <string>
#include <vector>

#include "taihu/arch/error.hpp"
#include "taihu/comm/types.hpp"

namespace taihu::comm::detail {

template <class T> MPI_Datatype mpi_type();
template <> inline MPI_Datatype mpi_type<float>() { return MPI_FLOAT; }
template <> inline MPI_Datatype mpi_type<double>() { return MPI_DOUBLE; }

// dst[i] += src[i]
template <class T>
inline void add_into(T* __restrict dst, const T* __restrict src, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) dst[i] += src[i];
}
// dst[i] = a[i] + b[i]
template <class T>
inline void add3(T* __restrict dst, const T* __restrict a, const T* __restrict b, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) dst[i] = a[i] + b[i];
}
template <class T>
inline void divide(T* data, std::size_t n, int p) {
  const T d = static_cast<T>(p);
  for (std::size_t i = 0; i < n; ++i) data[i] /= d;
}

// Block i of `count` split into `parts`: [begin(i), begin(i+1)), sizes differ by <= 1.
inline std::size_t block_begin(std::size_t count, int parts, int i) {
  return count / parts * i + std::min<std::size_t>(i, count % parts);
}

inline void check_mpi(int rc, const char* what) {
  if (rc != MPI_SUCCESS) {
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, msg, &len);
    throw Error(std::string("taihu::comm: ") + what + " failed: " + std::string(msg, len));
  }
}

constexpr std::size_t kMaxMessageElems = std::size_t{1} << 28;

// Blocking exchange of possibly huge buffers in chunks (tags tag, tag+1, ...).
template <class T>
void sendrecv(const T* send, std::size_t send_count, int dest, T* recv, std::size_t recv_count,
              int source, int tag, MPI_Comm comm) {
  std::size_t s = 0, r = 0;
  do {
    const std::size_t sc = std::min(kMaxMessageElems, send_count - s);
    const std::size_t rc = std::min(kMaxMessageElems, recv_count - r);
    check_mpi(MPI_Sendrecv(send + s, static_cast<int>(sc), mpi_type<T>(), dest, tag,
                           recv + r, static_cast<int>(rc), mpi_type<T>(), source, tag, comm,
                           MPI_STATUS_IGNORE),
              "MPI_Sendrecv");
    s += sc;
    r += rc;
  } while (s < send_count || r < recv_count);
}
// One recursive-halving exchange over the blocks [lo, hi) of `count` split into `parts`
// that this rank still reduces: keep the lower half (keep_low) or the upper one, send
// the other half to `partner`, add the partner's copy of the kept half (received into
// tmp) and narrow [lo, hi) to it. Rabenseifner's reduce-scatter and the hierarchical
// algorithm's in-group one are sequences of these steps.
template <class T>
void halving_step(MPI_Comm comm, T* data, T* tmp, std::size_t count, int parts, bool keep_low, int partner, int tag,
                  int& lo, int& hi) {
  auto at = [&](int block) { return block_begin(count, parts, block); };
  const int mid = (lo + hi) / 2;
  const int klo = keep_low ? lo : mid, khi = keep_low ? mid : hi;
  const int slo = keep_low ? mid : lo, shi = keep_low ? hi : mid;
  sendrecv(data + at(slo), at(shi) - at(slo), partner, tmp, at(khi) - at(klo), partner, tag, comm);
  add_into(data + at(klo), tmp, at(khi) - at(klo));
  lo = klo;
  hi = khi;
}
template <class T>
void send(const T* data, std::size_t count, int dest, int tag, MPI_Comm comm) {
  std::size_t s = 0;
  do {
    const std::size_t c = std::min(kMaxMessageElems, count - s);
    check_mpi(MPI_Send(data + s, static_cast<int>(c), mpi_type<T>(), dest, tag, comm), "MPI_Send");
    s += c;
  } while (s < count);
}
template <class T>
void recv(T* data, std::size_t count, int source, int tag, MPI_Comm comm) {
  std::size_t s = 0;
  do {
    const std::size_t c = std::min(kMaxMessageElems, count - s);
    check_mpi(MPI_Recv(data + s, static_cast<int>(c), mpi_type<T>(), source, tag, comm,
                       MPI_STATUS_IGNORE),
              "MPI_Recv");
    s += c;
  } while (s < count);
}

// Reusable scratch memory owned by a Communicator.
class Scratch {
 public:
  template <class T> T* get(std::size_t count) {
    const std::size_t bytes = count * sizeof(T);
    if (buffer_.size() < bytes) buffer_.resize(bytes + 64);
    return reinterpret_cast<T*>(buffer_.data());
  }
 private:
  std::vector<unsigned char> buffer_;
};

// ---- algorithms (sum only; average is a division by the caller) ----
// Pipelined ring over all ranks of comm; segment_elems > 0.
template <class T>
void ring_allreduce(MPI_Comm comm, T* data, std::size_t count, std::size_t segment_elems, Scratch& s);
// Ring reduce-scatter / allgather on block partition [block_begin(count, p, i)]: after
// the reduce-scatter rank r owns block r fully reduced.
template <class T>
void ring_reduce_scatter(MPI_Comm comm, T* data, std::size_t count, Scratch& s);
template <class T>
void ring_allgather(MPI_Comm comm, T* data, std::size_t count);
// Inside one tier group: halving / doubling for a power-of-two group, else the ring
// (group_phases.cpp); same block contract as the ring phases.
template <class T>
void group_reduce_scatter(MPI_Comm comm, T* data, std::size_t count, Scratch& s);
template <class T>
void group_allgather(MPI_Comm comm, T* data, std::size_t count);
template <class T>
void recursive_doubling_allreduce(MPI_Comm comm, T* data, std::size_t count, Scratch& s);
template <class T>
void rabenseifner_allreduce(MPI_Comm comm, T* data, std::size_t count, Scratch& s);

}  // namespace taihu::comm::detail
