/* plain_mpi_allreduce: an ordinary MPI program that knows nothing of taihu, for testing
 * libtaihu_allreduce_pmpi.so (run_pmpi_preload.sh runs it with and without LD_PRELOAD).
 *   mpirun -np P plain_mpi_allreduce [--thread-multiple | --mismatched-counts]
 * Cases: float and double MPI_SUM (counts 0, 1, 7, 1009, 65537, 1048579; out of place and
 * MPI_IN_PLACE) on MPI_COMM_WORLD, on a split communicator (freed afterwards) and on a
 * duplicate; MPI_MAX on floats, MPI_INT sums and a user op on a derived datatype, which the
 * preload must pass through; MPI_Iallreduce. Inputs are small integers, so every sum is
 * exact and is checked against a reference computed here from every rank's input; results
 * must also be bitwise identical on all ranks. Rank 0 prints one "exact" line per case
 * (name, count, FNV-1a hash of the result) so two runs can be compared line by line.
 * Exit status 1 on any mismatch. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures = 0;

/* Rank r's input element i: an integer in [-48, 48], distinct across ranks. */
static int input_value(int r, long i) { return (int)((i * 7 + (long)r * 13 + 5) % 97) - 48; }

static uint64_t fnv1a(const void* data, size_t bytes) {
  const unsigned char* p = (const unsigned char*)data;
  uint64_t h = 1469598103934665603ULL;
  for (size_t i = 0; i < bytes; ++i) h = (h ^ p[i]) * 1099511628211ULL;
  return h;
}

/* Every rank of `comm` holds the same hash; prints the case on world rank 0. */
static void finish_case(MPI_Comm comm, const char* name, int count, const void* result, size_t bytes, int wrong) {
  uint64_t h = fnv1a(result, bytes), lo = h, hi = h;
  int world_rank = 0, any_wrong = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Allreduce(MPI_IN_PLACE, &lo, 1, MPI_UINT64_T, MPI_MIN, comm);
  MPI_Allreduce(MPI_IN_PLACE, &hi, 1, MPI_UINT64_T, MPI_MAX, comm);
  MPI_Allreduce(&wrong, &any_wrong, 1, MPI_INT, MPI_MAX, comm);
  if (lo != hi) {
    fprintf(stderr, "rank %d: %s count %d: results differ across ranks\n", world_rank, name, count);
    ++failures;
  }
  if (any_wrong) {
    if (wrong) fprintf(stderr, "rank %d: %s count %d: %d elements differ from the reference\n", world_rank, name, count, wrong);
    ++failures;
  }
  if (world_rank == 0) printf("exact %s count=%d hash=%016llx\n", name, count, (unsigned long long)h);
}

/* Sum of input_value over the ranks listed in `ranks` (their world ranks). */
static long reference_sum(const int* ranks, int n, long i) {
  long s = 0;
  for (int k = 0; k < n; ++k) s += input_value(ranks[k], i);
  return s;
}

/* The world ranks of comm's members, in comm's rank order. */
static int* member_world_ranks(MPI_Comm comm, int* n) {
  int me = 0;
  MPI_Comm_size(comm, n);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  int* ranks = malloc(sizeof(int) * (size_t)*n);
  MPI_Allgather(&me, 1, MPI_INT, ranks, 1, MPI_INT, comm);
  return ranks;
}

#define DEFINE_SUM_CASE(T, MPI_T, TNAME)                                                          \
  static void sum_case_##T(MPI_Comm comm, const char* where, int count, int in_place) {             \
    int me = 0, n = 0;                                                                              \
    MPI_Comm_rank(MPI_COMM_WORLD, &me);                                                             \
    int* ranks = member_world_ranks(comm, &n);                                                      \
    T* send = malloc(sizeof(T) * (size_t)(count + 1));                                              \
    T* recv = malloc(sizeof(T) * (size_t)(count + 1));                                              \
    for (long i = 0; i < count; ++i) send[i] = (T)input_value(me, i);                               \
    int rc;                                                                                         \
    if (in_place) {                                                                                 \
      memcpy(recv, send, sizeof(T) * (size_t)count);                                                \
      rc = MPI_Allreduce(MPI_IN_PLACE, recv, count, MPI_T, MPI_SUM, comm);                          \
    } else {                                                                                        \
      rc = MPI_Allreduce(send, recv, count, MPI_T, MPI_SUM, comm);                                  \
    }                                                                                               \
    int wrong = rc != MPI_SUCCESS;                                                                  \
    for (long i = 0; i < count; ++i) {                                                              \
      if (recv[i] != (T)reference_sum(ranks, n, i)) ++wrong;                                        \
      if (!in_place && send[i] != (T)input_value(me, i)) ++wrong; /* input untouched */             \
    }                                                                                               \
    char name[128];                                                                                 \
    snprintf(name, sizeof name, "%s/" TNAME "/sum/%s", where, in_place ? "in_place" : "out_of_place"); \
    finish_case(comm, name, count, recv, sizeof(T) * (size_t)count, wrong);                         \
    free(send);                                                                                     \
    free(recv);                                                                                     \
    free(ranks);                                                                                    \
  }
DEFINE_SUM_CASE(float, MPI_FLOAT, "float")
DEFINE_SUM_CASE(double, MPI_DOUBLE, "double")

static void sum_cases(MPI_Comm comm, const char* where) {
  static const int counts[] = {0, 1, 7, 1009, 65537, 1048579};
  for (size_t c = 0; c < sizeof counts / sizeof counts[0]; ++c)
    for (int in_place = 0; in_place < 2; ++in_place) {
      sum_case_float(comm, where, counts[c], in_place);
      sum_case_double(comm, where, counts[c], in_place);
    }
}

/* A user-defined op on a derived datatype of 4 floats: inout += in. */
static void add_quads(void* in, void* inout, int* len, MPI_Datatype* type) {
  (void)type;
  const float* a = (const float*)in;
  float* b = (float*)inout;
  for (int i = 0; i < 4 * *len; ++i) b[i] += a[i];
}

/* Calls the preload must hand to MPI unchanged: MAX, int sums, a derived datatype. */
static void pass_through_cases(void) {
  int me = 0, p = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  enum { n = 1000 };
  float fin[n], fout[n];
  int iin[n], iout[n];
  int wrong = 0;
  for (int i = 0; i < n; ++i) {
    fin[i] = (float)input_value(me, i);
    iin[i] = input_value(me, i);
  }
  MPI_Allreduce(fin, fout, n, MPI_FLOAT, MPI_MAX, MPI_COMM_WORLD);
  for (int i = 0; i < n; ++i) {
    int m = input_value(0, i);
    for (int r = 1; r < p; ++r) m = input_value(r, i) > m ? input_value(r, i) : m;
    if (fout[i] != (float)m) ++wrong;
  }
  finish_case(MPI_COMM_WORLD, "world/float/max", n, fout, sizeof fout, wrong);

  wrong = 0;
  MPI_Allreduce(iin, iout, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  for (int i = 0; i < n; ++i) {
    long s = 0;
    for (int r = 0; r < p; ++r) s += input_value(r, i);
    if (iout[i] != s) ++wrong;
  }
  finish_case(MPI_COMM_WORLD, "world/int/sum", n, iout, sizeof iout, wrong);

  /* A derived datatype (4 contiguous floats) with a user op: never the preload's. */
  MPI_Datatype quad;
  MPI_Type_contiguous(4, MPI_FLOAT, &quad);
  MPI_Type_commit(&quad);
  MPI_Op quad_sum;
  MPI_Op_create(add_quads, 1, &quad_sum);
  wrong = 0;
  MPI_Allreduce(fin, fout, n / 4, quad, quad_sum, MPI_COMM_WORLD);
  for (int i = 0; i < n; ++i) {
    long s = 0;
    for (int r = 0; r < p; ++r) s += input_value(r, i);
    if (fout[i] != (float)s) ++wrong;
  }
  MPI_Op_free(&quad_sum);
  MPI_Type_free(&quad);
  finish_case(MPI_COMM_WORLD, "world/float4/user_sum", n, fout, sizeof fout, wrong);

  /* Nonblocking, overlapped with a point-to-point ring exchange. */
  MPI_Request req;
  wrong = 0;
  MPI_Iallreduce(fin, fout, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &req);
  int token = me, got = -1;
  MPI_Sendrecv(&token, 1, MPI_INT, (me + 1) % p, 7, &got, 1, MPI_INT, (me + p - 1) % p, 7, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
  MPI_Wait(&req, MPI_STATUS_IGNORE);
  if (got != (me + p - 1) % p) ++wrong;
  for (int i = 0; i < n; ++i) {
    long s = 0;
    for (int r = 0; r < p; ++r) s += input_value(r, i);
    if (fout[i] != (float)s) ++wrong;
  }
  finish_case(MPI_COMM_WORLD, "world/float/isum", n, fout, sizeof fout, wrong);
}

/* An erroneous call (counts differ across ranks) under MPI_ERRORS_RETURN: prints each
 * rank's return code. Only meaningful with the preload, whose shared-memory path
 * detects the mismatch; plain MPI may hang or fail in its own way. */
static int mismatch_case(void) {
  int me = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  float data[64] = {0};
  const int rc = MPI_Allreduce(MPI_IN_PLACE, data, 32 + me, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  int error_class = MPI_SUCCESS;
  MPI_Error_class(rc, &error_class);
  printf("mismatch rank %d: %s\n", me, error_class == MPI_ERR_OTHER ? "MPI_ERR_OTHER" : rc == MPI_SUCCESS ? "MPI_SUCCESS" : "other error");
  MPI_Finalize();
  return 0;
}

int main(int argc, char** argv) {
  int want = MPI_THREAD_SINGLE, provided = 0, mismatch = 0;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--thread-multiple") == 0) want = MPI_THREAD_MULTIPLE;
    else if (strcmp(argv[i], "--mismatched-counts") == 0) mismatch = 1;
    else {
      fprintf(stderr, "plain_mpi_allreduce: unknown argument '%s' (--thread-multiple --mismatched-counts)\n", argv[i]);
      return 2;
    }
  }
  MPI_Init_thread(&argc, &argv, want, &provided);
  if (mismatch) return mismatch_case();
  int me = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  if (me == 0 && want == MPI_THREAD_MULTIPLE && provided == MPI_THREAD_MULTIPLE) printf("provided MPI_THREAD_MULTIPLE\n");

  sum_cases(MPI_COMM_WORLD, "world");
  pass_through_cases();

  /* Two halves in reverse rank order; freed afterwards (the preload's state with it). */
  MPI_Comm half;
  MPI_Comm_split(MPI_COMM_WORLD, me % 2, -me, &half);
  sum_cases(half, "split");
  MPI_Comm_free(&half);

  MPI_Comm dup;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  sum_case_float(dup, "dup", 65537, 1);
  sum_case_double(dup, "dup", 1009, 0);
  /* The world communicator again, after the others were made and freed. */
  sum_case_float(MPI_COMM_WORLD, "world_again", 4099, 1);

  int total = 0;
  MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (me == 0) printf("%s: %d failures\n", total ? "FAILED" : "passed", total);
  /* dup is left to MPI_Finalize, which must free the preload's state for it. */
  MPI_Finalize();
  return total ? 1 : 0;
}
