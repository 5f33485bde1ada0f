/* bench_iallreduce_overlap: how much of an MPI_Iallreduce hides behind computation, as an
 * unmodified MPI program sees it (plain MPI, no taihu header). Run it under mpirun with
 * libtaihu_allreduce_pmpi.so preloaded to time the preload's worker-thread Iallreduce against
 * PMPI_Iallreduce in the same run (the preload's taihu_pmpi_set_enabled switch, found with
 * dlsym); without the preload only the MPI rows are timed.
 *   mpirun -np 2 -x LD_PRELOAD=.../libtaihu_allreduce_pmpi.so -x TAIHU_PMPI_THREADS=serial \
 *     bench_iallreduce_overlap [--mib 16,64] [--rounds 5] [--compute-ms MS] [--idle]
 * Asks for MPI_THREAD_MULTIPLE (the preload's Iallreduce needs it); TAIHU_PMPI_THREADS=serial
 * lets the blocking rows take the preload's path too. Per size (float MPI_SUM, out of place):
 *   compute             the computation alone (in-cache FMA chains on the calling thread,
 *                       sized to the blocking MPI allreduce unless --compute-ms; with
 *                       --idle a sleep instead: the thread waits, e.g. for a GPU)
 *   allreduce           MPI_Allreduce alone
 *   compute+allreduce   computation, then MPI_Allreduce (no overlap)
 *   iallreduce+compute  MPI_Iallreduce, computation, MPI_Wait
 *   ...+test            the same with MPI_Test between 1 ms slices of the computation
 * Each row for path taihu (preload on) and mpi (preload off), interleaved round by round;
 * times are the slowest rank's, best and median of the rounds. hidden = (compute +
 * allreduce - time) / min(compute, allreduce), medians of the same path: 1 = fully
 * overlapped, 0 = none, below 0 = slower than one after the other. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef int (*set_enabled_fn)(int);

static volatile double compute_sink;
static int compute_idle = 0;       /* --idle: the "computation" sleeps */
static double idle_unit_s = 1e-4;  /* --idle: seconds per unit */

/* Fixed work: `units` blocks of dependent FMA-like chains on a small in-cache array; with
 * --idle a sleep of the same length instead (the calling thread off the CPU, as while it
 * waits for an accelerator). */
static void compute(long units) {
  if (compute_idle) {
    const double s = (double)units * idle_unit_s;
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    while (nanosleep(&ts, &ts) != 0) {
    }
    return;
  }
  double acc[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  for (long u = 0; u < units; ++u)
    for (int i = 0; i < 4096; ++i)
      for (int k = 0; k < 8; ++k) acc[k] = acc[k] * 0.999999 + 1e-9 * (double)i;
  compute_sink = acc[0] + acc[7];
}

static double slowest(double t) {
  double m = 0;
  MPI_Allreduce(&t, &m, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return m;
}

enum { kCompute, kAllreduce, kSerial, kOverlap, kOverlapTest, kModes };
static const char* kModeName[kModes] = {"compute", "allreduce", "compute+allreduce", "iallreduce+compute",
                                        "iallreduce+compute+test"};

/* One timed run of `mode`; `units_per_ms` slices the computation for the +test mode. */
static double run_mode(int mode, const float* send, float* recv, int count, long units, long units_per_ms) {
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  MPI_Request req;
  switch (mode) {
    case kCompute: compute(units); break;
    case kAllreduce: MPI_Allreduce(send, recv, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD); break;
    case kSerial:
      compute(units);
      MPI_Allreduce(send, recv, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
      break;
    case kOverlap:
      MPI_Iallreduce(send, recv, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &req);
      compute(units);
      MPI_Wait(&req, MPI_STATUS_IGNORE);
      break;
    default: {
      MPI_Iallreduce(send, recv, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &req);
      int done = 0;
      for (long left = units; left > 0; left -= units_per_ms) {
        compute(left < units_per_ms ? left : units_per_ms);
        if (!done) MPI_Test(&req, &done, MPI_STATUS_IGNORE);
      }
      if (!done) MPI_Wait(&req, MPI_STATUS_IGNORE);
    }
  }
  return slowest(MPI_Wtime() - t0);
}

static int cmp_double(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

int main(int argc, char** argv) {
  int provided = 0, me = 0, np = 0, rounds = 5;
  double compute_ms = 0;
  char mib_list[256] = "16,64";
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--mib") == 0 && i + 1 < argc) snprintf(mib_list, sizeof mib_list, "%s", argv[++i]);
    else if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc) rounds = atoi(argv[++i]);
    else if (strcmp(argv[i], "--compute-ms") == 0 && i + 1 < argc) compute_ms = atof(argv[++i]);
    else if (strcmp(argv[i], "--idle") == 0) compute_idle = 1;
    else {
      if (me == 0) fprintf(stderr, "bench_iallreduce_overlap: bad argument '%s' (--mib LIST --rounds N --compute-ms MS --idle)\n", argv[i]);
      MPI_Finalize();
      return 2;
    }
  }
  if (rounds < 1 || rounds > 1000) {
    if (me == 0) fprintf(stderr, "bench_iallreduce_overlap: --rounds %d: use 1..1000\n", rounds);
    MPI_Finalize();
    return 2;
  }
  set_enabled_fn set_enabled = NULL;
  void* symbol = dlsym(RTLD_DEFAULT, "taihu_pmpi_set_enabled");
  memcpy(&set_enabled, &symbol, sizeof symbol); /* ISO C has no object-to-function pointer cast */
  const int paths = set_enabled ? 2 : 1; /* path 0: mpi (preload off), 1: taihu */
  if (me == 0)
    printf("# %d ranks, %s, preload %s, computation %s; slowest rank, best / median of %d rounds\n", np,
           provided == MPI_THREAD_MULTIPLE ? "MPI_THREAD_MULTIPLE" : "below MPI_THREAD_MULTIPLE (preload Iallreduce off)",
           set_enabled ? "loaded" : "not loaded", compute_idle ? "idle (sleep)" : "busy (FMA chains)", rounds);

  /* Computation speed: units per millisecond on this rank (the slowest rank's rate). */
  double per_unit = idle_unit_s;
  if (!compute_idle) {
    compute(200);
    double t0 = MPI_Wtime();
    compute(2000);
    per_unit = slowest(MPI_Wtime() - t0) / 2000.0;
  }
  long units_per_ms = (long)(1e-3 / per_unit) + 1;

  for (char* tok = strtok(mib_list, ","); tok; tok = strtok(NULL, ",")) {
    const double mib = atof(tok);
    const int count = (int)(mib * 1048576.0 / sizeof(float));
    if (count <= 0) continue;
    float* send = malloc(sizeof(float) * (size_t)count);
    float* recv = malloc(sizeof(float) * (size_t)count);
    for (int i = 0; i < count; ++i) send[i] = (float)((i + me) % 17) * 0.25f;
    /* Warm both paths (the preload's worker and taihu state are made here); size the
     * computation to MPI's blocking allreduce. */
    double t_mpi = 1e30;
    for (int p = paths - 1; p >= 0; --p) {
      if (set_enabled) set_enabled(p);
      for (int w = 0; w < 2; ++w) {
        run_mode(kOverlap, send, recv, count, 0, units_per_ms);
        double t = run_mode(kAllreduce, send, recv, count, 0, units_per_ms);
        if (p == 0 && t < t_mpi) t_mpi = t;
      }
    }
    long units = (long)((compute_ms > 0 ? compute_ms * 1e-3 : t_mpi) / per_unit);
    double* times = malloc(sizeof(double) * (size_t)(paths * kModes * rounds));
    for (int r = 0; r < rounds; ++r)
      for (int m = 0; m < kModes; ++m)
        for (int q = 0; q < paths; ++q) {
          int p = (r % 2) ? paths - 1 - q : q; /* alternate which path goes first */
          if (set_enabled) set_enabled(p);
          times[(p * kModes + m) * rounds + r] = run_mode(m, send, recv, count, units, units_per_ms);
        }
    if (set_enabled) set_enabled(1);
    if (me == 0) {
      printf("\n## %.0f MiB float sum, computation %.1f ms\n", mib, (double)units * per_unit * 1e3);
      printf("| mode | %s |\n|---|%s\n", paths == 2 ? "mpi best / median (ms) | hidden | taihu best / median (ms) | hidden"
                                                     : "mpi best / median (ms) | hidden",
             paths == 2 ? "---|---|---|---|" : "---|---|");
      double best[2][kModes];
      double median[2][kModes];
      for (int p = 0; p < paths; ++p)
        for (int m = 0; m < kModes; ++m) {
          double* t = times + (p * kModes + m) * rounds;
          qsort(t, (size_t)rounds, sizeof(double), cmp_double);
          best[p][m] = t[0];
          median[p][m] = t[rounds / 2];
        }
      for (int m = 0; m < kModes; ++m) {
        printf("| %s ", kModeName[m]);
        for (int p = 0; p < paths; ++p) {
          double c = median[p][kCompute], a = median[p][kAllreduce];
          double lo = c < a ? c : a;
          if (m >= kSerial) printf("| %.1f / %.1f | %.2f ", best[p][m] * 1e3, median[p][m] * 1e3, (c + a - median[p][m]) / lo);
          else printf("| %.1f / %.1f | ", best[p][m] * 1e3, median[p][m] * 1e3);
        }
        printf("|\n");
      }
      fflush(stdout);
    }
    free(times);
    free(send);
    free(recv);
  }
  MPI_Finalize();
  return 0;
}
