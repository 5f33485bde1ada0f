// main() for every MPI test binary (tests/comm, tests/caffe_port): MPI_Init_thread(MPI_THREAD_MULTIPLE, or
// MPI_THREAD_SERIALIZED when TAIHU_TEST_MPI_THREAD=serialized, to exercise the
// nonblocking fallback without a helper thread) around
// GoogleTest; only rank 0 prints test progress (failures print on every rank); the
// exit code is non-zero on every rank if any rank failed.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdlib>
#include <string>

int main(int argc, char** argv) {
  int provided = 0;
  const char* level = std::getenv("TAIHU_TEST_MPI_THREAD");
  const bool serialized = level && std::string(level) == "serialized";
  MPI_Init_thread(&argc, &argv, serialized ? MPI_THREAD_SERIALIZED : MPI_THREAD_MULTIPLE, &provided);
  ::testing::InitGoogleTest(&argc, argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  int failed = RUN_ALL_TESTS() != 0 ? 1 : 0, any = 0;
  MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return any;
}
