// Rank and size of MPI_COMM_WORLD, for the MPI test suites.
#pragma once
#include <mpi.h>

namespace taihu_test {

inline int world_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

inline int world_size() {
  int p = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  return p;
}

}  // namespace taihu_test
