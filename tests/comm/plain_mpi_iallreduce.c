/* plain_mpi_iallreduce: an ordinary MPI program that knows nothing of taihu, for testing the
 * MPI_Iallreduce takeover of libtaihu_allreduce_pmpi.so (run_pmpi_iallreduce.sh runs it with
 * and without LD_PRELOAD).
 *   mpirun -np P plain_mpi_iallreduce [--serialized] [--expect-bitwise]
 * Asks for MPI_THREAD_MULTIPLE (MPI_THREAD_SERIALIZED with --serialized). Cases, float and
 * double MPI_SUM of non-integer inputs:
 *  - crossed: MPI_Iallreduce posted on two communicators in opposite orders on even and odd
 *    ranks, then MPI_Waitall on both (must not deadlock: the caller runs this under a timeout);
 *  - queue: four outstanding MPI_Iallreduce on one communicator (out of place and
 *    MPI_IN_PLACE, mixed types and sizes), completed by one MPI_Waitall;
 *  - test: one MPI_Iallreduce completed by an MPI_Test loop that computes in between;
 *  - passthrough: MPI_INT MPI_SUM and MPI_FLOAT MPI_MAX through MPI_Iallreduce (exact), in one
 *    MPI_Waitall with a float MPI_SUM.
 * Each sum is checked against a reference computed here from every rank's input (within
 * rounding: |error| <= P * eps * sum |x|), must be bitwise identical on all ranks, and is
 * compared with MPI_Allreduce of the same input: with --expect-bitwise any difference is a
 * failure (the preload's nonblocking and blocking paths run the same taihu algorithm),
 * otherwise the number of differing elements is only printed. Rank 0 prints one "case"
 * line per case. Exit status 1 on any failure. */
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures = 0;
static int expect_bitwise = 0;

/* Rank r's input element i: a non-integer in (-1, 1), distinct across ranks. */
static double input_value(int r, long i) {
  uint64_t x = (uint64_t)i * 0x9E3779B97F4A7C15ULL + (uint64_t)(r + 1) * 0xBF58476D1CE4E5B9ULL;
  x ^= x >> 31;
  x *= 0x94D049BB133111EBULL;
  x ^= x >> 29;
  return ((double)(x >> 11) / 9007199254740992.0) * 2.0 - 1.0;
}

static int world_rank(void) {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

/* One float or double sum: buffers, its request and what it is checked against. */
typedef struct {
  MPI_Comm comm;
  MPI_Datatype type;
  int count;
  int in_place;
  void* send;
  void* recv;
  MPI_Request request;
} SumCase;

static size_t elem_size(MPI_Datatype t) { return t == MPI_FLOAT ? sizeof(float) : sizeof(double); }

static void sum_case_init(SumCase* c, MPI_Comm comm, MPI_Datatype type, int count, int in_place) {
  const int me = world_rank();
  c->comm = comm;
  c->type = type;
  c->count = count;
  c->in_place = in_place;
  c->send = malloc(elem_size(type) * (size_t)(count + 1));
  c->recv = malloc(elem_size(type) * (size_t)(count + 1));
  for (long i = 0; i < count; ++i) {
    if (type == MPI_FLOAT) ((float*)c->send)[i] = (float)input_value(me, i);
    else ((double*)c->send)[i] = input_value(me, i);
  }
  if (in_place) memcpy(c->recv, c->send, elem_size(type) * (size_t)count);
  c->request = MPI_REQUEST_NULL;
}

static void sum_case_post(SumCase* c) {
  int rc = MPI_Iallreduce(c->in_place ? MPI_IN_PLACE : c->send, c->recv, c->count, c->type, MPI_SUM, c->comm,
                          &c->request);
  if (rc != MPI_SUCCESS) {
    fprintf(stderr, "rank %d: MPI_Iallreduce returned %d\n", world_rank(), rc);
    ++failures;
  }
}

static uint64_t fnv1a(const void* data, size_t bytes) {
  const unsigned char* p = (const unsigned char*)data;
  uint64_t h = 1469598103934665603ULL;
  for (size_t i = 0; i < bytes; ++i) h = (h ^ p[i]) * 1099511628211ULL;
  return h;
}

/* After completion: reference, identical on all ranks, and against MPI_Allreduce. */
static void sum_case_check(SumCase* c, const char* name) {
  int n = 0, me = world_rank();
  MPI_Comm_size(c->comm, &n);
  int* ranks = malloc(sizeof(int) * (size_t)n);
  MPI_Allgather(&me, 1, MPI_INT, ranks, 1, MPI_INT, c->comm);
  const size_t bytes = elem_size(c->type) * (size_t)c->count;
  const double eps = c->type == MPI_FLOAT ? 1.2e-7 : 2.3e-16;
  long wrong = 0;
  for (long i = 0; i < c->count; ++i) {
    double ref = 0, mag = 0;
    for (int k = 0; k < n; ++k) {
      double x = c->type == MPI_FLOAT ? (double)(float)input_value(ranks[k], i) : input_value(ranks[k], i);
      ref += x;
      mag += fabs(x);
    }
    double got = c->type == MPI_FLOAT ? (double)((float*)c->recv)[i] : ((double*)c->recv)[i];
    if (!(fabs(got - ref) <= (double)n * eps * mag + 1e-30)) ++wrong;
  }
  /* The same sum through MPI_Allreduce (the preload's blocking path, or MPI's). */
  void* blocking = malloc(bytes + elem_size(c->type));
  MPI_Allreduce(c->send, blocking, c->count, c->type, MPI_SUM, c->comm);
  long differ = 0;
  for (long i = 0; i < c->count; ++i)
    if (memcmp((char*)blocking + (size_t)i * elem_size(c->type), (char*)c->recv + (size_t)i * elem_size(c->type),
               elem_size(c->type)) != 0)
      ++differ;
  uint64_t h = fnv1a(c->recv, bytes), lo = h, hi = h;
  long any_wrong = 0, any_differ = 0;
  MPI_Allreduce(MPI_IN_PLACE, &lo, 1, MPI_UINT64_T, MPI_MIN, c->comm);
  MPI_Allreduce(MPI_IN_PLACE, &hi, 1, MPI_UINT64_T, MPI_MAX, c->comm);
  MPI_Allreduce(&wrong, &any_wrong, 1, MPI_LONG, MPI_MAX, c->comm);
  MPI_Allreduce(&differ, &any_differ, 1, MPI_LONG, MPI_MAX, c->comm);
  if (lo != hi) {
    fprintf(stderr, "rank %d: %s: results differ across ranks\n", me, name);
    ++failures;
  }
  if (any_wrong) {
    fprintf(stderr, "rank %d: %s: %ld elements outside rounding of the reference\n", me, name, wrong);
    ++failures;
  }
  if (expect_bitwise && any_differ) {
    fprintf(stderr, "rank %d: %s: %ld elements differ from MPI_Allreduce's\n", me, name, differ);
    ++failures;
  }
  int crank = 0;
  MPI_Comm_rank(c->comm, &crank);
  if (crank == 0)
    printf("case %s %s count=%d %s hash=%016llx differs_from_blocking=%ld\n", name,
           c->type == MPI_FLOAT ? "float" : "double", c->count, c->in_place ? "in_place" : "out_of_place",
           (unsigned long long)h, any_differ);
  fflush(stdout);
  free(blocking);
  free(ranks);
  free(c->send);
  free(c->recv);
}

/* Posted on two communicators in opposite orders on even and odd ranks. */
static void crossed(int count) {
  MPI_Comm a, b;
  MPI_Comm_dup(MPI_COMM_WORLD, &a);
  MPI_Comm_dup(MPI_COMM_WORLD, &b);
  MPI_Comm_set_name(a, "comm_a");
  MPI_Comm_set_name(b, "comm_b");
  for (int round = 0; round < 3; ++round) {
    SumCase ca, cb;
    sum_case_init(&ca, a, MPI_FLOAT, count, 0);
    sum_case_init(&cb, b, MPI_DOUBLE, count + 3, round == 1);
    if (world_rank() % 2 == 0) {
      sum_case_post(&ca);
      sum_case_post(&cb);
    } else {
      sum_case_post(&cb);
      sum_case_post(&ca);
    }
    MPI_Request both[2] = {ca.request, cb.request};
    MPI_Waitall(2, both, MPI_STATUSES_IGNORE);
    sum_case_check(&ca, "crossed_a");
    sum_case_check(&cb, "crossed_b");
  }
  MPI_Comm_free(&a);  /* the preload's worker for it ends here */
  MPI_Comm_free(&b);
}

/* Several outstanding on one communicator, completed together. */
static void queue(MPI_Comm comm) {
  SumCase c[4];
  sum_case_init(&c[0], comm, MPI_FLOAT, 1009, 0);
  sum_case_init(&c[1], comm, MPI_DOUBLE, 65537, 1);
  sum_case_init(&c[2], comm, MPI_FLOAT, 1048579, 1);
  sum_case_init(&c[3], comm, MPI_DOUBLE, 7, 0);
  MPI_Request r[4];
  for (int k = 0; k < 4; ++k) {
    sum_case_post(&c[k]);
    r[k] = c[k].request;
  }
  MPI_Status st[4];
  if (MPI_Waitall(4, r, st) != MPI_SUCCESS) {
    fprintf(stderr, "rank %d: MPI_Waitall failed\n", world_rank());
    ++failures;
  }
  for (int k = 0; k < 4; ++k) sum_case_check(&c[k], "queue");
}

/* Completed by MPI_Test between slices of computation. */
static void test_loop(MPI_Comm comm) {
  SumCase c;
  sum_case_init(&c, comm, MPI_FLOAT, 262147, 0);
  sum_case_post(&c);
  int done = 0;
  volatile double sink = 0;
  long polls = 0;
  while (!done) {
    for (int i = 0; i < 20000; ++i) sink += sqrt((double)i);
    MPI_Test(&c.request, &done, MPI_STATUS_IGNORE);
    ++polls;
  }
  if (sink < 0 || polls < 1) ++failures; /* keeps the computation */
  if (c.request != MPI_REQUEST_NULL) {
    fprintf(stderr, "rank %d: MPI_Test left the request set\n", world_rank());
    ++failures;
  }
  sum_case_check(&c, "test");
}

/* Calls the preload must hand to PMPI_Iallreduce (exact integer / max results), completed by
 * one MPI_Waitall together with a float sum it takes over (a generalized request among MPI's). */
static void passthrough(MPI_Comm comm) {
  int n = 0, me = world_rank();
  MPI_Comm_size(comm, &n);
  enum { count = 1000 };
  int ints[count], isum[count];
  float f[count], fmax[count], fsum[count];
  for (int i = 0; i < count; ++i) {
    ints[i] = (i * 7 + me * 13) % 97 - 48;
    f[i] = (float)input_value(me, i);
  }
  MPI_Request r[3];
  MPI_Iallreduce(ints, isum, count, MPI_INT, MPI_SUM, comm, &r[0]);
  MPI_Iallreduce(f, fsum, count, MPI_FLOAT, MPI_SUM, comm, &r[1]);
  MPI_Iallreduce(f, fmax, count, MPI_FLOAT, MPI_MAX, comm, &r[2]);
  MPI_Waitall(3, r, MPI_STATUSES_IGNORE);
  long wrong = 0;
  for (int i = 0; i < count; ++i) {
    int s = 0;
    float m = -2.0f;
    double sum = 0, mag = 0;
    for (int k = 0; k < n; ++k) {
      s += (i * 7 + k * 13) % 97 - 48;
      float x = (float)input_value(k, i);
      if (x > m) m = x;
      sum += x;
      mag += fabs(x);
    }
    if (isum[i] != s || fmax[i] != m || !(fabs((double)fsum[i] - sum) <= (double)n * 1.2e-7 * mag + 1e-30)) ++wrong;
  }
  if (wrong) {
    fprintf(stderr, "rank %d: passthrough: %ld elements wrong\n", me, wrong);
    ++failures;
  }
  if (me == 0) printf("case passthrough int_sum float_max with float_sum count=%d wrong=%ld\n", count, wrong);
}

int main(int argc, char** argv) {
  int want = MPI_THREAD_MULTIPLE, provided = 0;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--serialized") == 0) want = MPI_THREAD_SERIALIZED;
    else if (strcmp(argv[i], "--expect-bitwise") == 0) expect_bitwise = 1;
    else {
      fprintf(stderr, "plain_mpi_iallreduce: unknown argument '%s' (--serialized --expect-bitwise)\n", argv[i]);
      return 2;
    }
  }
  MPI_Init_thread(&argc, &argv, want, &provided);
  if (world_rank() == 0)
    printf("provided %s\n", provided == MPI_THREAD_MULTIPLE     ? "MPI_THREAD_MULTIPLE"
                            : provided == MPI_THREAD_SERIALIZED ? "MPI_THREAD_SERIALIZED"
                                                                : "lower");
  crossed(1009);
  crossed(300007);
  queue(MPI_COMM_WORLD);
  test_loop(MPI_COMM_WORLD);
  passthrough(MPI_COMM_WORLD);
  int total = 0;
  MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (world_rank() == 0) printf("%s\n", total == 0 ? "all cases passed" : "FAILED");
  MPI_Finalize();
  return total == 0 ? 0 : 1;
}
