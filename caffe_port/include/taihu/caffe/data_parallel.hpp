// Synchronous data-parallel SGD for taihu::caffe over MPI (library taihu::caffe_parallel,
// built when MPI and taihu::comm are; the taihu-caffe CLI uses it under mpirun).
//
//   proto::SolverParameter sp = read_solver_param(path);
//   taihu::caffe::prepare_data_parallel(MPI_COMM_WORLD, &sp);   // shard + common seed
//   auto solver = taihu::caffe::create_solver(sp);              // nets read their shard
//   taihu::caffe::DataParallel dp(*solver, MPI_COMM_WORLD, {});  // broadcast + hooks
//   solver->solve();
//
// prepare_data_parallel: collective; sets this rank's TRAIN data shard (record i goes to
// rank i % P, batch_size is per rank) and gives every rank rank 0's random_seed (rank 0
// draws one when the solver has none), so shuffles agree and shards stay disjoint.
// DataParallel: collective; broadcasts the learnable parameters from rank 0, registers
// them with a taihu::comm::GradientBucketer in backward order (buckets of
// bucket_bytes), and connects itself as the solver's GradientListener: each bucket's
// allreduce (average) starts as soon as the layers owning it finish backward, and
// backward_done() waits for all of them, so the solver's update sees the averaged
// gradient. Non-root ranks do not test, log progress or write snapshots; at every
// snapshot all ranks compare a weight checksum (taihu::Error naming the ranks if the
// replicas diverged). The destructor disconnects the hooks.
// Contract: every rank builds the same net; the solver outlives this object.
#pragma once
#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "taihu/caffe/net.hpp"
#include "taihu/caffe/proto.hpp"
#include "taihu/caffe/solver.hpp"
#include "taihu/comm/compression.hpp"

namespace taihu::caffe {

struct DataParallelOptions {
  std::size_t bucket_bytes = 25u << 20;      // gradient bucket size (PyTorch DDP's 25 MB)
  comm::CompressionOptions compression;      // RedSync residual compression; off by default
  comm::Options comm;                        // algorithm, topology, calibration cache
};

// "none", "topk:D" (0 < D <= 1, fraction of entries sent per bucket) or "threshold:T"
// (T > 0); throws taihu::Error naming `what` (e.g. "--compress") otherwise.
comm::CompressionOptions parse_compression(std::string_view spec, std::string_view what);

void prepare_data_parallel(MPI_Comm comm, proto::SolverParameter* param);

class DataParallel : public GradientListener {
 public:
  DataParallel(Solver& solver, MPI_Comm comm, DataParallelOptions options = {});
  ~DataParallel() override;
  DataParallel(const DataParallel&) = delete;
  DataParallel& operator=(const DataParallel&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  int bucket_count() const;
  // Buckets whose allreduce had started before backward finished, last iteration.
  int buckets_started_before_wait() const;
  // FNV-1a over every learnable parameter's data, in order.
  std::uint64_t weights_checksum() const;
  // Collective: throws taihu::Error on every rank if the weights differ ("<what>").
  void verify_weights(const std::string& what) const;

  void gradients_ready(int layer_id, const std::vector<int>& learnable_param_ids) override;
  void backward_done() override;

 private:
  Solver& solver_;
  MPI_Comm comm_;
  int rank_ = 0, size_ = 1;
  struct Comm;
  std::unique_ptr<Comm> c_;
  std::vector<int> bucket_id_;  // learnable param id -> bucketer id
};

}  // namespace taihu::caffe
