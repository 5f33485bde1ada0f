// Data-parallel training: seeds and shards, parameter broadcast, bucketed gradient
// allreduce driven by the Net's gradient hook, cross-rank weight checks.
// See taihu/caffe/data_parallel.hpp.
#include "taihu/caffe/data_parallel.hpp"

#include <chrono>
#include <span>
#include <stdexcept>

#include "taihu/arch/error.hpp"
#include "taihu/caffe/data_shard.hpp"
#include "taihu/caffe/log.hpp"
#include "taihu/caffe/tuning_agreement.hpp"
#include "taihu/comm/bucketer.hpp"
#include "taihu/comm/nonblocking.hpp"
#include "taihu/comm/parameters.hpp"

namespace taihu::caffe {

struct DataParallel::Comm {
  comm::AsyncAllreducer async;
  comm::GradientBucketer bucketer;
  Comm(MPI_Comm c, const DataParallelOptions& o)
      : async(c, o.comm),
        bucketer(async, comm::BucketOptions{.bucket_bytes = o.bucket_bytes,
                                            .op = comm::Op::average,
                                            .algorithm = comm::Algorithm::automatic,
                                            .compression = o.compression}) {}
};

comm::CompressionOptions parse_compression(std::string_view spec, std::string_view what) {
  comm::CompressionOptions o;
  const std::string s(spec);
  auto bad = [&](const std::string& why) {
    return Error(std::string(what) + "=" + s + ": " + why + " (none, topk:FRACTION e.g. topk:0.01, or threshold:T)");
  };
  if (s.empty() || s == "none" || s == "off") return o;
  const auto colon = s.find(':');
  const std::string mode = s.substr(0, colon);
  if (colon == std::string::npos) throw bad("missing ':value'");
  double v = 0;
  try {
    std::size_t used = 0;
    v = std::stod(s.substr(colon + 1), &used);
    if (used != s.size() - colon - 1) throw bad("not a number after ':'");
  } catch (const std::invalid_argument&) {
    throw bad("not a number after ':'");
  } catch (const std::out_of_range&) {
    throw bad("number out of range");
  }
  if (mode == "topk" || mode == "top_k") {
    if (!(v > 0 && v <= 1)) throw bad("the top-k fraction must be in (0, 1]");
    o.mode = comm::CompressionOptions::Mode::top_k;
    o.density = v;
  } else if (mode == "threshold") {
    if (!(v > 0)) throw bad("the threshold must be > 0");
    o.mode = comm::CompressionOptions::Mode::threshold;
    o.threshold = v;
  } else {
    throw bad("unknown mode \"" + mode + "\"");
  }
  return o;
}

void prepare_data_parallel(MPI_Comm comm, proto::SolverParameter* param) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  set_train_data_shard({rank, size});
  long long seed = param->random_seed();
  if (rank == 0 && seed < 0) {
    seed = static_cast<long long>(std::chrono::steady_clock::now().time_since_epoch().count() & 0x7fffffffffffLL);
  }
  MPI_Bcast(&seed, 1, MPI_LONG_LONG, 0, comm);
  param->set_random_seed(seed);
}

DataParallel::DataParallel(Solver& solver, MPI_Comm comm, DataParallelOptions options)
    : solver_(solver), comm_(comm) {
  MPI_Comm_rank(comm, &rank_);
  MPI_Comm_size(comm, &size_);
  const DataShard shard = train_data_shard();
  if (shard.index != rank_ || shard.count != size_) {
    throw Error("data parallel: the training data shard is " + std::to_string(shard.index) + " of " +
                std::to_string(shard.count) + " but this is rank " + std::to_string(rank_) + " of " +
                std::to_string(size_) + " (call prepare_data_parallel before creating the solver)");
  }
  Net& net = solver_.net();
  const auto& params = net.learnable_params();
  for (Blob* p : params) comm::broadcast(comm_, p->mutable_data(), static_cast<std::size_t>(p->count()), 0);

  c_ = std::make_unique<Comm>(comm_, options);
  bucket_id_.assign(params.size(), -1);
  const auto& ready = net.params_ready_after_layer();
  for (std::size_t i = ready.size(); i-- > 0;) {
    for (int id : ready[i]) {
      Blob* p = params[static_cast<std::size_t>(id)];
      bucket_id_[static_cast<std::size_t>(id)] = c_->bucketer.add(p->mutable_diff(), static_cast<std::size_t>(p->count()));
    }
  }
  for (std::size_t id = 0; id < params.size(); ++id) {
    if (bucket_id_[id] < 0) throw Error("data parallel: internal: learnable parameter " + std::to_string(id) + " is never reported ready");
  }
  std::size_t total = 0;
  for (Blob* p : params) total += static_cast<std::size_t>(p->count());
  log_info("Data parallel: " + std::to_string(size_) + " ranks, " + std::to_string(params.size()) + " parameter blobs (" +
           std::to_string(total * sizeof(float)) + " bytes) in buckets of " + std::to_string(options.bucket_bytes) +
           " bytes, compression " +
           (options.compression.mode == comm::CompressionOptions::Mode::none ? std::string("off")
            : options.compression.mode == comm::CompressionOptions::Mode::top_k
                ? "top-k " + std::to_string(options.compression.density)
                : "threshold " + std::to_string(options.compression.threshold)) +
           "; parameters broadcast from rank 0");
  // Layers that time candidate algorithms pick on the slowest rank's times: every rank
  // then runs the same algorithms, and the averaged gradients match bit for bit.
  set_tuning_agreement([c = comm_](std::span<double> seconds) {
    MPI_Allreduce(MPI_IN_PLACE, seconds.data(), static_cast<int>(seconds.size()), MPI_DOUBLE, MPI_MAX, c);
  });
  solver_.set_gradient_listener(this);
  solver_.set_root(rank_ == 0);
  solver_.set_before_snapshot([this](int iter) { verify_weights("weights at iteration " + std::to_string(iter)); });
}

DataParallel::~DataParallel() {
  set_tuning_agreement({});
  solver_.set_gradient_listener(nullptr);
  solver_.set_before_snapshot({});
  solver_.set_root(true);
}

int DataParallel::bucket_count() const { return c_->bucketer.bucket_count(); }
int DataParallel::buckets_started_before_wait() const { return c_->bucketer.started_before_wait(); }

void DataParallel::gradients_ready(int, const std::vector<int>& ids) {
  for (int id : ids) c_->bucketer.mark_ready(bucket_id_[static_cast<std::size_t>(id)]);
}

void DataParallel::backward_done() { c_->bucketer.wait_all(); }

std::uint64_t DataParallel::weights_checksum() const {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (const Blob* p : solver_.net().learnable_params()) {
    h = comm::checksum(std::span<const float>(p->data(), static_cast<std::size_t>(p->count())), h);
  }
  return h;
}

void DataParallel::verify_weights(const std::string& what) const {
  comm::verify_identical(comm_, weights_checksum(), what.c_str());
}

}  // namespace taihu::caffe
