// link_probe: the cluster's link parameters as the allreduce algorithms see them - every
// rank exchanges a message with rank ^ d at the same time (MPI_Sendrecv), best of 5,
// time of the slowest rank. `link_probe BYTES D` prints one line:
//   exchange BYTES d=D seconds=S per_flow_MBps=M
// d=1 pairs hosts inside a group, d=4 (8 hosts in 2 groups) pairs each host with one in
// the other group, so 4 flows share each direction of the group uplink.
// `link_probe BYTES D oneway`: rank 0 alone sends to rank D (a lone flow), line
//   oneway BYTES d=D seconds=S per_flow_MBps=M
// Built and run by scripts/cluster.d/bench.sh (mpicc).
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int oneway = argc == 4 && argv[3][0] == 'o';
  if (argc != 3 && !oneway) {
    if (rank == 0) fprintf(stderr, "usage: link_probe BYTES D [oneway]\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const int n = atoi(argv[1]), d = atoi(argv[2]);
  if (n < 1 || d < 1 || (rank ^ d) >= size) {
    if (rank == 0) fprintf(stderr, "link_probe: need BYTES >= 1 and rank ^ %d < %d ranks\n", d, size);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  char* a = calloc((size_t)n, 1);
  char* b = calloc((size_t)n, 1);
  double best = 1e30;
  for (int it = 0; it < 6; ++it) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    if (!oneway)
      MPI_Sendrecv(a, n, MPI_CHAR, rank ^ d, 0, b, n, MPI_CHAR, rank ^ d, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    else if (rank == 0)
      MPI_Send(a, n, MPI_CHAR, d, 0, MPI_COMM_WORLD);
    else if (rank == d)
      MPI_Recv(b, n, MPI_CHAR, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    double t = MPI_Wtime() - t0, slowest = 0;
    MPI_Allreduce(&t, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (it > 0 && slowest < best) best = slowest;  // the first one opens the connections
  }
  if (rank == 0)
    printf("%s %d d=%d seconds=%.6g per_flow_MBps=%.3f\n", oneway ? "oneway" : "exchange", n, d, best, n / best / 1e6);
  free(a);
  free(b);
  MPI_Finalize();
  return 0;
}
