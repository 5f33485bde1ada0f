// Nonblocking allreduce (overlap with computation), the gradient bucketer, and the
// residual top-k compression, under mpirun; references are MPI_Allreduce results and,
// for compression, the exact least-squares solution.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <random>
#include <vector>

#include "mpi_world.hpp"
#include "taihu/arch/error.hpp"
#include "taihu/comm/bucketer.hpp"
#include "taihu/comm/compression.hpp"
#include "taihu/comm/nonblocking.hpp"
#include "taihu/comm/parameters.hpp"

namespace tc = taihu::comm;

namespace {
using taihu_test::world_rank;
using taihu_test::world_size;
std::vector<float> ramp(std::size_t n, int salt) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<float>((i * 7 + world_rank() * 13 + salt) % 61) - 30.0f;
  return v;
}
std::vector<float> mpi_sum(const std::vector<float>& v) {
  std::vector<float> out(v.size());
  MPI_Allreduce(v.data(), out.data(), static_cast<int>(v.size()), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  return out;
}
}  // namespace

TEST(CommNonblocking, CompletesWhileTheCallerComputes) {
  tc::AsyncAllreducer async(MPI_COMM_WORLD);
  int provided = 0;
  MPI_Query_thread(&provided);
  EXPECT_EQ(async.uses_helper_thread(), provided == MPI_THREAD_MULTIPLE);
  auto a = ramp(200003, 1);
  auto b = ramp(5, 2);
  const auto want_a = mpi_sum(a), want_b = mpi_sum(b);
  tc::Request ra = async.iallreduce(a.data(), a.size(), tc::Op::sum);
  tc::Request rb = async.iallreduce(b.data(), b.size(), tc::Op::sum);
  // "Compute" until both report completion; only progress()/test() is called, never
  // wait(), so completion proves the communication advanced during the compute loop.
  double acc = 0;
  long spins = 0;
  while (!(ra.test() && rb.test())) {
    for (int i = 0; i < 10000; ++i) acc += std::sqrt(static_cast<double>(i + spins));
    async.progress();
    ++spins;
    ASSERT_LT(spins, 2000000) << "nonblocking allreduce made no progress";
  }
  ra.wait();
  rb.wait();
  EXPECT_GT(acc, 0);
  EXPECT_EQ(a, want_a);
  EXPECT_EQ(b, want_b);
  std::vector<double> d(777, 0.5 * (world_rank() + 1));
  tc::Request rd = async.iallreduce(d.data(), d.size(), tc::Op::average, tc::Algorithm::rabenseifner);
  rd.wait();
  const double mean = 0.5 * (world_size() + 1) / 2.0;
  for (double x : d) ASSERT_DOUBLE_EQ(x, mean);
}

TEST(CommBucketer, BucketsStartAsSoonAsFullAndMatchMpi) {
  tc::AsyncAllreducer async(MPI_COMM_WORLD);
  tc::BucketOptions opt;
  opt.bucket_bytes = 4000;  // ~1000 floats: several buckets
  opt.op = tc::Op::average;
  tc::GradientBucketer bucketer(async, opt);
  const std::vector<std::size_t> sizes = {10, 900, 300, 3000, 1, 0, 640, 2500};
  std::vector<std::vector<float>> grads(sizes.size());
  std::vector<int> ids;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    grads[i].resize(sizes[i]);
    ids.push_back(bucketer.add(grads[i].data(), sizes[i]));
  }
  std::vector<double> dgrad(123);
  const int did = bucketer.add(dgrad.data(), dgrad.size());
  for (int iteration = 0; iteration < 3; ++iteration) {
    std::vector<std::vector<float>> want(sizes.size());
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      const auto fresh = ramp(sizes[i], iteration * 10 + static_cast<int>(i));
      std::copy(fresh.begin(), fresh.end(), grads[i].begin());  // registered buffers stay put
      want[i] = mpi_sum(grads[i]);
      for (auto& x : want[i]) x /= static_cast<float>(world_size());
    }
    for (std::size_t i = 0; i < dgrad.size(); ++i) dgrad[i] = world_rank() + static_cast<double>(i) + iteration;
    for (std::size_t i = 0; i < ids.size(); ++i) bucketer.mark_ready(ids[i]);
    bucketer.mark_ready(did);
    EXPECT_GE(bucketer.bucket_count(), 5);
    // Parameters 0..1 (10 + 900 floats) share the first bucket; 3000 floats exceed it.
    EXPECT_EQ(bucketer.bucket_of(ids[0]), bucketer.bucket_of(ids[1]));
    EXPECT_NE(bucketer.bucket_of(ids[1]), bucketer.bucket_of(ids[2]));
    bucketer.wait_all();
    EXPECT_EQ(bucketer.started_before_wait(), bucketer.bucket_count());
    for (std::size_t i = 0; i < sizes.size(); ++i) EXPECT_EQ(grads[i], want[i]) << "param " << i;
    const double base = (world_size() - 1) / 2.0;
    for (std::size_t i = 0; i < dgrad.size(); ++i) ASSERT_DOUBLE_EQ(dgrad[i], base + static_cast<double>(i) + iteration);
  }
}

TEST(CommBucketer, MisuseIsAnError) {
  tc::AsyncAllreducer async(MPI_COMM_WORLD);
  tc::GradientBucketer bucketer(async, {});
  std::vector<float> g(10, 1.0f);
  const int id = bucketer.add(g.data(), g.size());
  EXPECT_THROW(bucketer.mark_ready(id + 5), taihu::Error);
  bucketer.mark_ready(id);
  EXPECT_THROW(bucketer.mark_ready(id), taihu::Error);
  bucketer.wait_all();
  EXPECT_THROW(bucketer.wait_all(), taihu::Error);  // nothing marked this iteration
}

TEST(CommBucketer, DifferentLayoutsAcrossRanksAreNamed) {
  tc::AsyncAllreducer async(MPI_COMM_WORLD);
  tc::GradientBucketer bucketer(async, {});
  std::vector<float> g(world_rank() == 1 ? 11 : 10, 1.0f);
  const int id = bucketer.add(g.data(), g.size());
  try {
    bucketer.mark_ready(id);
    ADD_FAILURE() << "layout mismatch not detected";
  } catch (const taihu::Error& e) {
    EXPECT_NE(std::string(e.what()).find("rank(s) 1"), std::string::npos) << e.what();
  }
}

// Least squares min_x sum_r ||A_r x - b_r||^2 with b = A x_true: data-parallel SGD whose
// averaged gradient goes through top-k (10%) residual compression must still reach
// x_true; every rank must hold the same x.
TEST(CommCompression, TopKWithResidualConverges) {
  tc::Communicator comm(MPI_COMM_WORLD);
  const int d = 40, m = 200;
  std::mt19937 gen(1234);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::vector<double> x_true(d);
  for (auto& v : x_true) v = normal(gen);
  std::vector<double> A(static_cast<std::size_t>(m) * d), b(m);
  std::mt19937 local(99 + static_cast<unsigned>(world_rank()));
  for (auto& v : A) v = normal(local);
  for (int i = 0; i < m; ++i) {
    b[i] = 0;
    for (int j = 0; j < d; ++j) b[i] += A[i * d + j] * x_true[j];
  }
  tc::CompressionOptions copt;
  copt.mode = tc::CompressionOptions::Mode::top_k;
  copt.density = 0.1;
  tc::ResidualCompressor compressor(d, copt);
  std::vector<double> x(d, 0.0);
  std::vector<float> g(d);
  const double lr = 0.2;
  double first_error = 0;
  for (int step = 0; step < 1500; ++step) {
    for (int j = 0; j < d; ++j) g[j] = 0;
    for (int i = 0; i < m; ++i) {
      double r = -b[i];
      for (int j = 0; j < d; ++j) r += A[i * d + j] * x[j];
      for (int j = 0; j < d; ++j) g[j] += static_cast<float>(2.0 * r * A[i * d + j] / m);
    }
    compressor.allreduce(comm, g.data(), tc::Op::average);
    EXPECT_EQ(compressor.last_sent(), 4u);
    for (int j = 0; j < d; ++j) x[j] -= lr * g[j];
    if (step == 0) {
      for (int j = 0; j < d; ++j) first_error += (x[j] - x_true[j]) * (x[j] - x_true[j]);
    }
  }
  double err = 0, norm = 0;
  for (int j = 0; j < d; ++j) {
    err += (x[j] - x_true[j]) * (x[j] - x_true[j]);
    norm += x_true[j] * x_true[j];
  }
  EXPECT_LT(std::sqrt(err / norm), 1e-3) << "relative error after 1500 compressed steps";
  EXPECT_NO_THROW(tc::verify_identical(MPI_COMM_WORLD, tc::checksum(std::span<const double>(x)), "x"));
}

TEST(CommCompression, BucketerWithCompressionSendsEverythingEventually) {
  // With threshold 0 every residual entry is sent: the result equals the dense average.
  tc::AsyncAllreducer async(MPI_COMM_WORLD);
  tc::BucketOptions opt;
  opt.compression.mode = tc::CompressionOptions::Mode::threshold;
  opt.compression.threshold = 0;
  tc::GradientBucketer bucketer(async, opt);
  auto g = ramp(500, 5);
  auto want = mpi_sum(g);
  for (auto& x : want) x /= static_cast<float>(world_size());
  bucketer.mark_ready(bucketer.add(g.data(), g.size()));
  bucketer.wait_all();
  EXPECT_EQ(g, want);
}
