// Data-parallel training under mpirun (taihu::caffe_parallel), checked against one
// process: P ranks with per-rank batch B/P reach the weights of 1 rank with batch B
// (the data order arranged to match by the shard rule), replicas stay bitwise
// identical, rank 0's parameters win at start, diverged replicas are caught at a
// snapshot (only rank 0 writes it), and top-k residual compression still converges.
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <numeric>

#include "caffe_test_util.hpp"
#include "mpi_world.hpp"
#include "taihu/arch/error.hpp"
#include "taihu/caffe/data_parallel.hpp"
#include "taihu/caffe/data_shard.hpp"
#include "taihu/caffe/data_sources.hpp"
#include "taihu/caffe/rng.hpp"
#include "taihu/caffe/solver.hpp"
#include "taihu/caffe/tuning_agreement.hpp"

namespace taihu::caffe::test {
namespace {

using taihu_test::world_rank;
using taihu_test::world_size;

class DataParallelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    quiet_ = std::make_unique<LogCapture>();
    const ImageSet set = synthetic_digits(600, 3);  // same bytes on every rank
    write_idx_images(dir_ / "img.gz", set);
    write_idx_labels(dir_ / "lab.gz", set);
  }
  void TearDown() override { set_train_data_shard({0, 1}); }

  // FileData (shuffled) -> conv -> ReLU (in place: fused into the conv) -> pool -> ip ->
  // ReLU -> ip -> SoftmaxWithLoss; no dropout so the 1-process reference and the ranks
  // draw nothing differently.
  std::string net(int batch) const {
    return R"(
      name: 'DP'
      layer { name: 'data' type: 'FileData' top: 'data' top: 'label' include { phase: TRAIN }
              transform_param { scale: 0.00390625 }
              file_data_param { source: ')" + (dir_ / "img.gz") + "' label_source: '" + (dir_ / "lab.gz") +
           "' batch_size: " + std::to_string(batch) + R"( shuffle: true } }
      layer { name: 'conv1' type: 'Convolution' bottom: 'data' top: 'conv1'
              convolution_param { num_output: 4 kernel_size: 5 weight_filler { type: 'xavier' } } }
      layer { name: 'relu0' type: 'ReLU' bottom: 'conv1' top: 'conv1' }
      layer { name: 'pool1' type: 'Pooling' bottom: 'conv1' top: 'pool1' pooling_param { pool: MAX kernel_size: 2 stride: 2 } }
      layer { name: 'ip1' type: 'InnerProduct' bottom: 'pool1' top: 'ip1' inner_product_param { num_output: 24 weight_filler { type: 'xavier' } } }
      layer { name: 'relu1' type: 'ReLU' bottom: 'ip1' top: 'ip1' }
      layer { name: 'ip2' type: 'InnerProduct' bottom: 'ip1' top: 'ip2' inner_product_param { num_output: 10 weight_filler { type: 'xavier' } } }
      layer { name: 'loss' type: 'SoftmaxWithLoss' bottom: 'ip2' bottom: 'label' top: 'loss' }
    )";
  }
  proto::SolverParameter solver_param(int batch, const std::string& extra = "", double lr = 0.05) const {
    proto::SolverParameter sp;
    parse_text("base_lr: " + std::to_string(lr) + " momentum: 0.9 weight_decay: 0.0005 lr_policy: 'fixed' max_iter: 1000 "
               "display: 0 random_seed: 7 " + extra, "<test solver>", &sp);
    *sp.mutable_net_param() = net_from_text(net(batch));
    return sp;
  }
  static std::vector<float> weights(Solver& s) {
    std::vector<float> w;
    for (const Blob* p : s.net().learnable_params()) w.insert(w.end(), p->data(), p->data() + p->count());
    return w;
  }

  TempDir dir_;
  std::unique_ptr<LogCapture> quiet_;
};

// iter_size passes: rank r's pass i of iteration k reads its batch k * iter_size + i,
// so with batch B / (P * iter_size) the ranks' passes together read the B records of
// one process's iteration k again; the hook only sees the last, accumulated pass.
class DataParallelIterSizeTest : public DataParallelTest, public ::testing::WithParamInterface<int> {};

TEST_P(DataParallelIterSizeTest, MatchesOneProcessWithTheTotalBatch) {
  const int p = world_size(), iter_size = GetParam();
  const int per_rank = 4, total = per_rank * p * iter_size, iters = 8;

  set_train_data_shard({0, 1});
  auto reference = create_solver(solver_param(total));
  reference->step(iters);
  const std::vector<float> expected = weights(*reference);
  reference.reset();

  proto::SolverParameter sp = solver_param(per_rank, "iter_size: " + std::to_string(iter_size));
  prepare_data_parallel(MPI_COMM_WORLD, &sp);
  auto solver = create_solver(sp);
  DataParallelOptions options;
  options.bucket_bytes = 4096;  // several buckets on this small net
  options.comm.probe = comm::Probe::never;
  DataParallel dp(*solver, MPI_COMM_WORLD, options);
  solver->step(iters);
  EXPECT_GT(dp.bucket_count(), 1);
  EXPECT_EQ(dp.buckets_started_before_wait(), dp.bucket_count());

  const std::vector<float> got = weights(*solver);
  ASSERT_EQ(got.size(), expected.size());
  double max_diff = 0, max_abs = 0, max_moved = 0;
  std::vector<float> initial = weights(*create_solver(solver_param(per_rank)));
  for (std::size_t i = 0; i < got.size(); ++i) {
    max_diff = std::max(max_diff, std::fabs(static_cast<double>(got[i]) - expected[i]));
    max_abs = std::max(max_abs, std::fabs(static_cast<double>(expected[i])));
    max_moved = std::max(max_moved, std::fabs(static_cast<double>(expected[i]) - initial[i]));
  }
  EXPECT_GT(max_moved, 1e-2) << "training must move the weights for the comparison to mean anything";
  EXPECT_LE(max_diff, 2e-5 * std::max(1.0, max_abs)) << "rank " << world_rank() << " of " << p;
  EXPECT_NO_THROW(dp.verify_weights("weights after training"));
}

INSTANTIATE_TEST_SUITE_P(IterSize, DataParallelIterSizeTest, ::testing::Values(1, 2));

TEST_F(DataParallelTest, ShardsAreDisjointAndCoverTheBatchOfOneProcess) {
  // The labels each rank's data layer yields, gathered, equal the 1-process batch.
  const int p = world_size(), per_rank = 3, batches = 4;
  auto labels_of = [&](int batch, DataShard shard) {
    set_train_data_shard(shard);
    Net n(net_from_text(net(batch)), proto::TRAIN);
    std::vector<float> out;
    for (int b = 0; b < batches; ++b) {
      n.forward();
      const Blob* data = n.blob_by_name("data");
      const Blob* label = n.blob_by_name("label");
      for (int j = 0; j < batch; ++j) {
        // label + a pixel sum identifies the record
        const float* img = data->data() + static_cast<std::ptrdiff_t>(j) * 784;
        out.push_back(label->data()[j] + 10.f * std::accumulate(img, img + 784, 0.f));
      }
    }
    return out;
  };
  seed_rng(11);
  const std::vector<float> whole = labels_of(per_rank * p, {0, 1});
  seed_rng(11);
  const std::vector<float> mine = labels_of(per_rank, {world_rank(), p});
  std::vector<float> all(mine.size() * static_cast<std::size_t>(p));
  MPI_Allgather(mine.data(), static_cast<int>(mine.size()), MPI_FLOAT, all.data(), static_cast<int>(mine.size()),
                MPI_FLOAT, MPI_COMM_WORLD);
  // Rank r's j-th record of batch b is global record (b * per_rank + j) * p + r.
  for (int b = 0; b < batches; ++b) {
    for (int j = 0; j < per_rank; ++j) {
      for (int r = 0; r < p; ++r) {
        const std::size_t g = static_cast<std::size_t>((b * per_rank + j) * p + r);
        const std::size_t at = static_cast<std::size_t>(r) * mine.size() + static_cast<std::size_t>(b * per_rank + j);
        ASSERT_EQ(all[at], whole[g]) << "batch " << b << " record " << j << " of rank " << r;
      }
    }
  }
}

TEST_F(DataParallelTest, RootParametersWinAndDivergenceIsCaughtAtSnapshot) {
  const int rank = world_rank();
  const std::string prefix = dir_ / "snap";
  proto::SolverParameter sp = solver_param(4, "snapshot: 3 snapshot_prefix: '" + prefix + "'");
  sp.set_random_seed(-1);  // each rank would start from different weights
  prepare_data_parallel(MPI_COMM_WORLD, &sp);
  EXPECT_GE(sp.random_seed(), 0);
  auto solver = create_solver(sp);
  solver->net().learnable_params()[0]->mutable_data()[0] += static_cast<float>(rank);  // differ on purpose
  DataParallelOptions options;
  options.comm.probe = comm::Probe::never;
  DataParallel dp(*solver, MPI_COMM_WORLD, options);
  std::uint64_t h = dp.weights_checksum(), h0 = h;
  MPI_Bcast(&h0, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  EXPECT_EQ(h, h0) << "broadcast from rank 0";

  solver->step(3);  // snapshot at 3: checksum passes, only rank 0 writes
  EXPECT_EQ(std::filesystem::exists(prefix + "_iter_3.caffemodel"), rank == 0);
  EXPECT_EQ(std::filesystem::exists(prefix + "_iter_3.solverstate"), rank == 0);

  if (rank == world_size() - 1) solver->net().learnable_params()[1]->mutable_data()[2] += 1e-3f;
  std::string message;
  try {
    solver->step(3);
  } catch (const Error& e) {
    message = e.what();
  }
  EXPECT_NE(message.find("iteration 6"), std::string::npos) << message;
  EXPECT_NE(message.find(std::to_string(world_size() - 1)), std::string::npos) << message;
  EXPECT_FALSE(std::filesystem::exists(prefix + "_iter_6.caffemodel"));
}

// Layers that time their candidate algorithms see the slowest rank's times, so every
// rank picks the same convolution algorithms; the agreement lives as long as the
// DataParallel does.
TEST_F(DataParallelTest, RanksAgreeOnTunedConvolutionAlgorithms) {
  const int rank = world_rank(), p = world_size();
  proto::SolverParameter sp = solver_param(4);
  prepare_data_parallel(MPI_COMM_WORLD, &sp);
  auto solver = create_solver(sp);
  EXPECT_FALSE(tuning_agreement());
  {
    DataParallelOptions options;
    options.comm.probe = comm::Probe::never;
    DataParallel dp(*solver, MPI_COMM_WORLD, options);
    ASSERT_TRUE(tuning_agreement());
    std::vector<double> t{1.0 + rank, 10.0 - rank, 0.5};
    tuning_agreement()(t);
    EXPECT_EQ(t, (std::vector<double>{static_cast<double>(p), 10.0, 0.5})) << "the slowest rank's time per candidate";

    // The nets were built before the agreement existed: their layers must still time
    // their candidates through it on the first forward (count the calls).
    int calls = 0;
    const TuningAgreement installed = tuning_agreement();
    set_tuning_agreement([&](std::span<double> seconds) {
      ++calls;
      installed(seconds);
    });
    solver->step(2);
    const char* tune = std::getenv("TAIHU_CAFFE_CONV_TUNE");
    if (tune == nullptr || std::string(tune) != "0") {
      EXPECT_EQ(calls, 3) << "conv1 forward, backward-data and backward-weights";
    }
    const std::string mine = solver->net().layer_by_name("conv1")->save_state();
    ASSERT_FALSE(mine.empty());
    std::vector<char> root(mine.begin(), mine.end());
    int n = static_cast<int>(root.size());
    MPI_Bcast(&n, 1, MPI_INT, 0, MPI_COMM_WORLD);
    root.resize(static_cast<std::size_t>(n));
    MPI_Bcast(root.data(), n, MPI_CHAR, 0, MPI_COMM_WORLD);
    EXPECT_EQ(mine, std::string(root.begin(), root.end())) << "rank " << rank;
    EXPECT_NO_THROW(dp.verify_weights("weights after training"));
  }
  EXPECT_FALSE(tuning_agreement());
}

TEST_F(DataParallelTest, TopKCompressionConverges) {
  // RedSync top-k (1% of each bucket sent, the rest kept in the residual): the loss
  // must fall as it does without compression, and the run must really differ from the
  // dense one (the flag is not ignored). The replicas stay identical.
  const int iters = 200;
  auto train = [&](const char* spec, std::vector<float>* w) {
    proto::SolverParameter sp = solver_param(8, "", 0.01);
    prepare_data_parallel(MPI_COMM_WORLD, &sp);
    auto solver = create_solver(sp);
    DataParallelOptions options;
    options.compression = parse_compression(spec, "--compress");
    options.comm.probe = comm::Probe::never;
    DataParallel dp(*solver, MPI_COMM_WORLD, options);
    solver->step(iters);
    EXPECT_NO_THROW(dp.verify_weights("weights after training"));
    *w = weights(*solver);
    return solver->losses();
  };
  std::vector<float> dense_w, topk_w;
  train("none", &dense_w);
  const std::vector<float> loss = train("topk:0.01", &topk_w);
  ASSERT_EQ(loss.size(), static_cast<std::size_t>(iters));
  const double first = std::accumulate(loss.begin(), loss.begin() + 10, 0.0) / 10;
  const double last = std::accumulate(loss.end() - 20, loss.end(), 0.0) / 20;
  EXPECT_GT(first, 2.0);  // ln(10) = 2.30 at the start
  EXPECT_LT(last, 0.5 * first) << "first 10 iterations " << first << ", last 20 " << last;
  double differ = 0;
  for (std::size_t i = 0; i < dense_w.size(); ++i) differ = std::max(differ, static_cast<double>(std::fabs(dense_w[i] - topk_w[i])));
  EXPECT_GT(differ, 1e-3) << "top-k run identical to the dense run: compression not applied";
}

TEST(DataParallelOptionsTest, CompressionSpecsParseOrNameTheFlag) {
  EXPECT_EQ(parse_compression("none", "--compress").mode, comm::CompressionOptions::Mode::none);
  const auto k = parse_compression("topk:0.01", "--compress");
  EXPECT_EQ(k.mode, comm::CompressionOptions::Mode::top_k);
  EXPECT_DOUBLE_EQ(k.density, 0.01);
  const auto t = parse_compression("threshold:0.5", "--compress");
  EXPECT_EQ(t.mode, comm::CompressionOptions::Mode::threshold);
  EXPECT_DOUBLE_EQ(t.threshold, 0.5);
  for (const char* bad : {"topk", "topk:0", "topk:2", "topk:x", "threshold:-1", "random:0.1"}) {
    try {
      parse_compression(bad, "--compress");
      ADD_FAILURE() << bad << " accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("--compress"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace taihu::caffe::test
