// link_probe: the cluster's link parameters as the allreduce algorithms see them - every
// rank exchanges a message with rank ^ d at the same time (MPI_Sendrecv), best of 5,
// time of the slowest rank (and the mean of the 5). `link_probe BYTES D` prints one line:
//   exchange BYTES d=D seconds=S per_flow_MBps=M mean_seconds=MEAN
// d=1 pairs hosts inside a group, d=4 (8 hosts in 2 groups) pairs each host with one in
// the other group, so 4 flows share each direction of the group uplink.
// `link_probe BYTES D oneway`: rank 0 alone sends to rank D (a lone flow), line
//   oneway BYTES d=D seconds=S per_flow_MBps=M mean_seconds=MEAN
// `link_probe BYTES rabenseifner`: the exchanges of Rabenseifner's allreduce of BYTES
// (halving with distance 1, 2, 4, ..., then doubling back; no reduction), back to back
// as the algorithm runs them, 3 rounds after a warm-up; per step and for the whole
// sequence the slowest rank's time, mean and best over the rounds:
//   rabenseifner BYTES step=K d=D bytes=B seconds=MEAN best=BEST per_flow_MBps=M (of MEAN)
//   rabenseifner BYTES total seconds=MEAN best=BEST
// Built and run by scripts/cluster.d/bench.sh (mpicc).
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static double slowest(double t) {
  double m = 0;
  MPI_Allreduce(&t, &m, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return m;
}

// The exchange sequence of Rabenseifner's allreduce on a power-of-two rank count.
static int rabenseifner_steps(double bytes, int rank, int size) {
  int steps = 0;
  while ((1 << steps) < size) ++steps;
  if ((1 << steps) != size || steps == 0 || bytes < 2 * size) {
    if (rank == 0) fprintf(stderr, "link_probe: rabenseifner needs a power-of-two rank count > 1 and BYTES >= 2 x ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const size_t n = (size_t)bytes;
  char* a = calloc(n, 1);
  char* b = calloc(n, 1);
  const int total_steps = 2 * steps, rounds = 3;
  double mean[64] = {0}, best[64], per[64];
  for (int k = 0; k <= total_steps; ++k) best[k] = 1e30;
  for (int it = 0; it <= rounds; ++it) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double start = MPI_Wtime();
    for (int k = 0; k < total_steps; ++k) {
      const int level = k < steps ? k : total_steps - 1 - k;  // halving 0..steps-1, then back
      const size_t part = n >> (level + 1);
      const double t0 = MPI_Wtime();
      MPI_Sendrecv(a, (int)part, MPI_CHAR, rank ^ (1 << level), k, b, (int)part, MPI_CHAR, rank ^ (1 << level), k,
                   MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      per[k] = MPI_Wtime() - t0;
    }
    per[total_steps] = MPI_Wtime() - start;
    for (int k = 0; k <= total_steps; ++k) {
      const double t = slowest(per[k]);
      if (it == 0) continue;  // the warm-up opens the connections
      mean[k] += t / rounds;
      if (t < best[k]) best[k] = t;
    }
  }
  if (rank == 0) {
    for (int k = 0; k < total_steps; ++k) {
      const int level = k < steps ? k : total_steps - 1 - k;
      const size_t part = n >> (level + 1);
      printf("rabenseifner %zu step=%d d=%d bytes=%zu seconds=%.6g best=%.6g per_flow_MBps=%.3f\n", n, k + 1, 1 << level,
             part, mean[k], best[k], part / mean[k] / 1e6);
    }
    printf("rabenseifner %zu total seconds=%.6g best=%.6g\n", n, mean[total_steps], best[total_steps]);
  }
  free(a);
  free(b);
  MPI_Finalize();
  return 0;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int oneway = argc == 4 && argv[3][0] == 'o';
  if (argc == 3 && argv[2][0] == 'r') return rabenseifner_steps(atof(argv[1]), rank, size);
  if (argc != 3 && !oneway) {
    if (rank == 0) fprintf(stderr, "usage: link_probe BYTES D [oneway] | link_probe BYTES rabenseifner\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const int n = atoi(argv[1]), d = atoi(argv[2]);
  if (n < 1 || d < 1 || (rank ^ d) >= size) {
    if (rank == 0) fprintf(stderr, "link_probe: need BYTES >= 1 and rank ^ %d < %d ranks\n", d, size);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  char* a = calloc((size_t)n, 1);
  char* b = calloc((size_t)n, 1);
  double best = 1e30, mean = 0;
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
    if (it > 0) mean += slowest / 5;
  }
  if (rank == 0)
    printf("%s %d d=%d seconds=%.6g per_flow_MBps=%.3f mean_seconds=%.6g\n", oneway ? "oneway" : "exchange", n, d, best,
           n / best / 1e6, mean);
  free(a);
  free(b);
  MPI_Finalize();
  return 0;
}
