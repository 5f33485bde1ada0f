// Keeping replicas identical in data-parallel training: broadcast the parameters from
// rank 0 at start, and compare a weight checksum across ranks (e.g. at each snapshot).
#pragma once
#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <span>

namespace taihu::comm {

// MPI_Bcast from `root`, in chunks (any count, including > INT_MAX elements).
void broadcast(MPI_Comm comm, float* data, std::size_t count, int root = 0);
void broadcast(MPI_Comm comm, double* data, std::size_t count, int root = 0);

// FNV-1a over the bytes of the buffers, in order: equal iff bitwise equal (w.h.p.).
std::uint64_t checksum(std::span<const float> data, std::uint64_t seed = 0xcbf29ce484222325ull);
std::uint64_t checksum(std::span<const double> data, std::uint64_t seed = 0xcbf29ce484222325ull);

// Collective: throws taihu::Error on every rank when the checksums differ, naming the
// ranks that disagree with rank 0 and `what` (e.g. "weights at iteration 500").
void verify_identical(MPI_Comm comm, std::uint64_t local_checksum, const char* what);

}  // namespace taihu::comm
