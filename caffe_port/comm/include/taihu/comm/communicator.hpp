// taihu::comm::Communicator: the allreduce library's entry point, usable by any MPI code.
//
//   MPI_Init_thread(...);                       // MPI_THREAD_MULTIPLE for nonblocking
//   taihu::comm::Communicator comm(MPI_COMM_WORLD);
//   comm.allreduce(grad.data(), grad.size(), taihu::comm::Op::average);  // in place
//
// Contract: collective over the communicator; every rank passes the same count, type,
// op and algorithm, in the same order. float and double; any count (0, or not
// divisible by the rank count); results are bitwise identical on all ranks and from
// run to run for a given algorithm, layout and count. Mismatched counts are detected
// in the shared-memory paths always and everywhere with TAIHU_COMM_CHECK=1 (one extra
// small allreduce per call); the error names the ranks. The object owns duplicated
// communicators and the shared-memory windows; destroy it before MPI_Finalize.
//
// Environment: TAIHU_ALLREDUCE=<algorithm> forces an algorithm; TAIHU_TOPOLOGY /
// TAIHU_TOPOLOGY_FILE describe tiers (topology.hpp); TAIHU_COMM_PROBE=auto|always|never
// and TAIHU_COMM_CACHE=<file> control calibration (calibration.hpp); TAIHU_VERBOSE=1
// logs the layout and each algorithm decision.
#pragma once
#include <mpi.h>

#include <cstddef>
#include <memory>
#include <string>

#include "taihu/comm/cost_model.hpp"
#include "taihu/comm/topology.hpp"
#include "taihu/comm/types.hpp"

namespace taihu::comm {

enum class Probe { automatic, always, never };

struct Options {
  std::string topology;                   // overrides TAIHU_TOPOLOGY when non-empty
  Algorithm algorithm = Algorithm::automatic;  // TAIHU_ALLREDUCE overrides automatic
  Probe probe = Probe::automatic;         // probe when nothing is cached; TAIHU_COMM_PROBE overrides
  std::string calibration_cache;          // "" = TAIHU_COMM_CACHE or ~/.cache/taihu/...
  bool check_counts = false;              // also on with TAIHU_COMM_CHECK=1
};

class Communicator {
 public:
  explicit Communicator(MPI_Comm comm = MPI_COMM_WORLD, Options options = {});
  ~Communicator();
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  int rank() const;
  int size() const;
  MPI_Comm comm() const;                  // this object's private duplicate
  const RankLayout& layout() const;
  const CostModel& cost_model() const;
  void set_cost_params(const CostParams& params);  // collective; rank 0's values win

  // In place. `algorithm` automatic = the Options / TAIHU_ALLREDUCE / cost model choice.
  void allreduce(float* data, std::size_t count, Op op = Op::sum,
                 Algorithm algorithm = Algorithm::automatic);
  void allreduce(double* data, std::size_t count, Op op = Op::sum,
                 Algorithm algorithm = Algorithm::automatic);

  // What allreduce would run for `bytes` (after forcing and validity rules).
  Choice choose(std::size_t bytes, Algorithm requested = Algorithm::automatic) const;

  // Runs the calibration probe now (collective) and stores the result in the cache.
  void calibrate();

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace taihu::comm
