// cluster_allreduce_loop: a long-running MPI job for the link-failure test. Every rank
// runs taihu::comm allreduces of --bytes (default 1 MiB) for --seconds (default 600),
// rank 0 printing "running" once the first one completed; exits 0 when time is up.
// On a lost host the MPI runtime is expected to end it (see link_down_check.sh).
#include <mpi.h>

#include <cstdio>
#include <string>
#include <vector>

#include "taihu/arch/timer.hpp"
#include "taihu/comm/communicator.hpp"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  std::size_t bytes = 1 << 20;
  double seconds = 600;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i];
    if (k == "--bytes") bytes = std::stoull(argv[i + 1]);
    else if (k == "--seconds") seconds = std::stod(argv[i + 1]);
    else {
      std::fprintf(stderr, "cluster_allreduce_loop: unknown argument '%s' (--bytes N --seconds S)\n", argv[i]);
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
  }
  int rc = 0;
  {
    taihu::comm::Communicator comm(MPI_COMM_WORLD);
    std::vector<float> v(bytes / sizeof(float), 1.0f);
    const double t0 = taihu::arch::now_seconds();
    long calls = 0;
    int stop = 0;
    while (!stop) {
      comm.allreduce(v.data(), v.size(), taihu::comm::Op::average);
      if (++calls == 1 && comm.rank() == 0) {
        std::printf("running\n");
        std::fflush(stdout);
      }
      stop = taihu::arch::now_seconds() - t0 > seconds ? 1 : 0;
      MPI_Bcast(&stop, 1, MPI_INT, 0, MPI_COMM_WORLD);
    }
    if (comm.rank() == 0) std::printf("done: %ld allreduces\n", calls);
  }
  MPI_Finalize();
  return rc;
}
