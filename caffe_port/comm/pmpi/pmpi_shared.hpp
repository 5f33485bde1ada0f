// pmpi_shared.hpp: what the PMPI preload's files share (internal to libtaihu_allreduce_pmpi.so).
// - inside_taihu: set on a thread while taihu's own code runs there (the blocking path's
//   call, or a whole Iallreduce worker thread), so that taihu's internal MPI_Allreduce /
//   MPI_Iallreduce calls go straight to PMPI instead of being taken over again.
// - log_path / world_rank_or_minus_one: TAIHU_VERBOSE lines and error prefixes, defined in
//   taihu_allreduce_pmpi.cpp.
#pragma once

#include <mpi.h>

#include <string>

namespace taihu_pmpi {

inline thread_local bool inside_taihu = false;

struct ReentryGuard {
  bool previous;
  ReentryGuard() : previous(inside_taihu) { inside_taihu = true; }
  ~ReentryGuard() { inside_taihu = previous; }
  ReentryGuard(const ReentryGuard&) = delete;
  ReentryGuard& operator=(const ReentryGuard&) = delete;
};

// TAIHU_VERBOSE: the first call per (communicator, function, path, size class), printed on
// the communicator's rank 0 (at most 200 lines per process).
void log_path(const char* function, MPI_Comm comm, MPI_Datatype type, MPI_Op op, int count, const std::string& path);

// MPI_COMM_WORLD rank, -1 when MPI is not running (for message prefixes).
int world_rank_or_minus_one();

}  // namespace taihu_pmpi
