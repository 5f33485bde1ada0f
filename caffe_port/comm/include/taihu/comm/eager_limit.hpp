// The MPI library's eager limit for messages between hosts: the largest message (PML
// header included) that Open MPI's TCP transport sends at once; a larger one goes by
// rendezvous (request, acknowledgement across the link, then the data), which on the
// namespace cluster's shaped uplink cost 1.3x at 4 MiB (64 KiB messages per rank vs
// 32 KiB; bench/results/2026-11-28-cluster-allreduce-256k.md). The cost model keeps
// the hierarchical algorithm's chunked top exchange below it (CostParams::eager_limit).
#pragma once
#include <cstddef>

namespace taihu::comm {

// Open MPI 4.1's default btl_tcp_eager_limit (ompi_info), used when the library does
// not say (another MPI, or the TCP transport not loaded in this job).
inline constexpr std::size_t kDefaultEagerLimit = 64 * 1024;
// Bytes of the limit the PML's match header takes (ob1: 14-24 bytes; rounded up).
inline constexpr std::size_t kEagerHeaderReserve = 64;

// The largest payload sent eagerly under `limit` (0 when the limit is below the header).
constexpr std::size_t eager_payload(std::size_t limit) {
  return limit > kEagerHeaderReserve ? limit - kEagerHeaderReserve : 0;
}

// btl_tcp_eager_limit read through the MPI tool interface (MPI_T control variable), or
// kDefaultEagerLimit when there is no such variable. Local: call on every rank and
// broadcast rank 0's value where ranks must agree. Needs MPI initialized.
std::size_t mpi_tcp_eager_limit();

}  // namespace taihu::comm
