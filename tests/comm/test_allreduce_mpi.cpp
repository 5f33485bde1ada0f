// Every allreduce algorithm against MPI_Allreduce (the independent reference) for all
// rank counts this binary is launched with (ctest runs it at 2..5 ranks), float and
// double, sum and average, counts from 0 to 70001 (not divisible by the rank count),
// integer-valued data (must be exact) and random data (within rounding); results must
// be bitwise identical on all ranks and from run to run; fake multi-node topologies;
// misuse errors.
#include <gtest/gtest.h>
#include <mpi.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "mpi_world.hpp"
#include "taihu/arch/error.hpp"
#include "taihu/comm/calibration.hpp"
#include "taihu/comm/communicator.hpp"
#include "taihu/comm/eager_limit.hpp"
#include "taihu/comm/parameters.hpp"

namespace tc = taihu::comm;

namespace {

using taihu_test::world_rank;
using taihu_test::world_size;

template <class T> MPI_Datatype mpi_t();
template <> MPI_Datatype mpi_t<float>() { return MPI_FLOAT; }
template <> MPI_Datatype mpi_t<double>() { return MPI_DOUBLE; }

template <class T>
std::vector<T> make_input(std::size_t count, bool integers, unsigned seed) {
  std::mt19937 gen(seed * 7919u + static_cast<unsigned>(world_rank()) * 104729u + static_cast<unsigned>(count));
  std::vector<T> v(count);
  std::uniform_int_distribution<int> ints(-100, 100);
  std::uniform_real_distribution<double> reals(-1.0, 1.0);
  for (auto& x : v) x = integers ? static_cast<T>(ints(gen)) : static_cast<T>(reals(gen));
  return v;
}

template <class T>
std::vector<T> reference(const std::vector<T>& in, tc::Op op) {
  std::vector<T> out(in.size());
  if (!in.empty())
    MPI_Allreduce(in.data(), out.data(), static_cast<int>(in.size()), mpi_t<T>(), MPI_SUM, MPI_COMM_WORLD);
  if (op == tc::Op::average)
    for (auto& x : out) x /= static_cast<T>(world_size());
  return out;
}

// Fails on every rank if the buffers differ bitwise anywhere.
template <class T>
bool identical_on_all_ranks(const std::vector<T>& v) {
  try {
    tc::verify_identical(MPI_COMM_WORLD, tc::checksum(std::span<const T>(v)), "allreduce result");
    return true;
  } catch (const taihu::Error&) {
    return false;
  }
}

const std::vector<std::size_t> kCounts = {0, 1, 3, 7, 64, 1001, 70001};
const std::vector<tc::Algorithm> kAlgorithms = {
    tc::Algorithm::ring,          tc::Algorithm::recursive_doubling, tc::Algorithm::rabenseifner,
    tc::Algorithm::shared_memory, tc::Algorithm::hierarchical,       tc::Algorithm::mpi,
    tc::Algorithm::automatic};

template <class T>
void check_all(tc::Communicator& comm, const char* label) {
  const double tol = std::is_same_v<T, float> ? 2e-6 : 1e-14;
  for (tc::Algorithm algorithm : kAlgorithms)
    for (tc::Op op : {tc::Op::sum, tc::Op::average})
      for (bool integers : {true, false})
        for (std::size_t count : kCounts) {
          if (!integers && op == tc::Op::average) continue;  // division is checked with integers
          SCOPED_TRACE(testing::Message() << label << " " << tc::to_string(algorithm) << " " << tc::to_string(op)
                                          << (integers ? " ints" : " reals") << " count " << count << " p "
                                          << world_size() << (std::is_same_v<T, float> ? " float" : " double"));
          const auto in = make_input<T>(count, integers, 1);
          const auto want = reference(in, op);
          auto got = in;
          comm.allreduce(got.data(), got.size(), op, algorithm);
          std::size_t bad = 0;
          for (std::size_t i = 0; i < count; ++i) {
            const bool ok = (integers && op == tc::Op::sum)
                                ? got[i] == want[i]
                                : std::fabs(static_cast<double>(got[i] - want[i])) <= tol * world_size() * 4;
            if (!ok && bad++ < 3) ADD_FAILURE() << "element " << i << ": got " << got[i] << " want " << want[i];
          }
          EXPECT_EQ(bad, 0u);
          EXPECT_TRUE(identical_on_all_ranks(got));
          auto again = in;  // run to run: bitwise equal
          comm.allreduce(again.data(), again.size(), op, algorithm);
          EXPECT_TRUE(again == got) << "second run differs";
        }
}

}  // namespace

TEST(CommAllreduce, EveryAlgorithmMatchesMpiFlat) {
  tc::Communicator comm(MPI_COMM_WORLD);
  check_all<float>(comm, "flat");
  check_all<double>(comm, "flat");
}

TEST(CommAllreduce, FakeNodesOfTwo) {
  tc::Options o;
  o.topology = "node=2";
  tc::Communicator comm(MPI_COMM_WORLD, o);
  EXPECT_EQ(comm.layout().nodes(), (world_size() + 1) / 2);
  check_all<float>(comm, "node=2");
}

TEST(CommAllreduce, FakeSupernodes) {
  tc::Options o;
  o.topology = "node=1,supernode=2";
  tc::Communicator comm(MPI_COMM_WORLD, o);
  EXPECT_EQ(comm.layout().nodes(), world_size());
  check_all<float>(comm, "node=1,supernode=2");
}

TEST(CommAllreduce, FakeNodesAndSupernodes) {
  tc::Options o;
  o.topology = "node=2,supernode=2";
  tc::Communicator comm(MPI_COMM_WORLD, o);
  check_all<double>(comm, "node=2,supernode=2");
}

// The cost model's own chunking of the hierarchical top exchange (two groups of two),
// sized below the eager limit, gives exactly MPI_Allreduce's sums on integer data, the
// same bits as the unchunked algorithm, and each rank's message across stays <= the limit.
TEST(CommAllreduce, ChunksBelowTheEagerLimitMatchUnchunked) {
  if (world_size() != 4) GTEST_SKIP() << "needs 4 ranks (two groups of two)";
  if (std::getenv("TAIHU_COMM_PIPELINE")) GTEST_SKIP() << "TAIHU_COMM_PIPELINE forces the chunk";
  tc::Options o;
  o.topology = "node=1,supernode=2";
  tc::CostParams p;
  p.gamma = 1e-10;
  p.tiers = {{1e-5, 1e-9}, {1e-5, 1e-7}};  // a 100x slower top: the pipelined plan pays
  p.eager_limit = 40000;  // 64 KiB chunks fit (32 KiB + a few elements per rank), 128 KiB do not
  const std::size_t count = (1u << 20) / sizeof(float) + 5;  // not a multiple of the chunk
  const double bytes = static_cast<double>(count * sizeof(float));
  tc::Communicator chunked(MPI_COMM_WORLD, o);
  chunked.set_cost_params(p);
  ASSERT_EQ(chunked.cost_model().params().eager_limit, p.eager_limit);
  const tc::Choice c = chunked.cost_model().choose(chunked.layout(), count * sizeof(float));
  ASSERT_EQ(c.algorithm, tc::Algorithm::hierarchical);
  ASSERT_GT(c.pipeline_bytes, 0u);
  EXPECT_LT(c.pipeline_bytes, bytes / 4);  // several chunks
  // Each rank sends half of a chunk across (whole elements, so at most one more).
  EXPECT_LE((c.pipeline_bytes / sizeof(float) + 1) / 2 * sizeof(float), tc::eager_payload(p.eager_limit));

  setenv("TAIHU_COMM_PIPELINE", "0", 1);
  tc::Communicator unchunked(MPI_COMM_WORLD, o);
  unsetenv("TAIHU_COMM_PIPELINE");
  unchunked.set_cost_params(p);

  const auto in = make_input<float>(count, true, 5);
  const auto want = reference(in, tc::Op::sum);
  auto got = in, flat = in;
  chunked.allreduce(got.data(), got.size(), tc::Op::sum, tc::Algorithm::automatic);
  unchunked.allreduce(flat.data(), flat.size(), tc::Op::sum, tc::Algorithm::hierarchical);
  EXPECT_TRUE(got == want) << "chunked differs from MPI_Allreduce";
  EXPECT_TRUE(got == flat) << "chunked differs from unchunked";
  EXPECT_TRUE(identical_on_all_ranks(got));
}

// btl_tcp_eager_limit read through MPI_T (ctest sets it with --mca and names the value
// in TAIHU_TEST_EAGER_LIMIT; without the TCP transport the documented default).
TEST(CommAllreduce, EagerLimitFromTheLibrary) {
  const char* expect = std::getenv("TAIHU_TEST_EAGER_LIMIT");
  if (!expect) GTEST_SKIP() << "TAIHU_TEST_EAGER_LIMIT not set";
  tc::Communicator comm(MPI_COMM_WORLD);
  EXPECT_EQ(comm.cost_model().params().eager_limit, std::stoull(expect));
  EXPECT_EQ(tc::mpi_tcp_eager_limit(), std::stoull(expect));
}

TEST(CommAllreduce, TopologyFromEnvironment) {
  // ctest also runs this binary with TAIHU_TOPOLOGY set; without it the layout is
  // detected: one physical node.
  tc::Communicator comm(MPI_COMM_WORLD);
  const char* env = std::getenv("TAIHU_TOPOLOGY");
  if (env && std::string(env) == "node=2") {
    EXPECT_EQ(comm.layout().nodes(), (world_size() + 1) / 2);
  } else if (!env) {
    EXPECT_EQ(comm.layout().nodes(), 1);
  }
  std::vector<float> v(1001, 1.0f);
  comm.allreduce(v.data(), v.size(), tc::Op::sum, tc::Algorithm::hierarchical);
  for (float x : v) ASSERT_EQ(x, static_cast<float>(world_size()));
}

TEST(CommAllreduce, MismatchedCountsNameTheRanks) {
  tc::Options o;
  o.check_counts = true;
  tc::Communicator comm(MPI_COMM_WORLD, o);
  std::vector<float> v(100, 1.0f);
  const std::size_t n = world_rank() == 1 ? 99 : 100;
  try {
    comm.allreduce(v.data(), n, tc::Op::sum, tc::Algorithm::ring);
    ADD_FAILURE() << "no error for mismatched counts";
  } catch (const taihu::Error& e) {
    EXPECT_NE(std::string(e.what()).find("rank 1 has 99"), std::string::npos) << e.what();
  }
}

TEST(CommAllreduce, SharedMemoryDetectsMismatchedCountsWithoutCheckOption) {
  tc::Communicator comm(MPI_COMM_WORLD);
  if (comm.layout().nodes() != 1) GTEST_SKIP() << "ranks span several nodes";
  std::vector<double> v(64, 1.0);
  const std::size_t n = world_rank() == 1 ? 63 : 64;
  try {
    comm.allreduce(v.data(), n, tc::Op::sum, tc::Algorithm::shared_memory);
    ADD_FAILURE() << "no error for mismatched counts";
  } catch (const taihu::Error& e) {
    EXPECT_NE(std::string(e.what()).find("has count 63"), std::string::npos) << e.what();
  }
}

TEST(CommAllreduce, BadEnvironmentValuesAreClearErrors) {
  setenv("TAIHU_ALLREDUCE", "fastest", 1);
  try {
    tc::Communicator comm(MPI_COMM_WORLD);
    ADD_FAILURE() << "TAIHU_ALLREDUCE=fastest accepted";
  } catch (const taihu::Error& e) {
    EXPECT_NE(std::string(e.what()).find("TAIHU_ALLREDUCE='fastest'"), std::string::npos) << e.what();
  }
  unsetenv("TAIHU_ALLREDUCE");
  tc::Options o;
  o.topology = "node=two";
  EXPECT_THROW(tc::Communicator(MPI_COMM_WORLD, o), taihu::Error);
}

TEST(CommAllreduce, NullDataWithCountIsAnError) {
  tc::Communicator comm(MPI_COMM_WORLD);
  EXPECT_THROW(comm.allreduce(static_cast<float*>(nullptr), 5), taihu::Error);
}

// The probe's small-message table: an old-format cache line is rejected and replaced by
// a v2 line carrying the table; the table covers 4 B .. kSmallCalibrationMax; choose()
// follows it; the automatic allreduce stays exact; a second communicator reads it back.
TEST(CommCalibration, SmallMessageTableIsMeasuredCachedAndRefreshed) {
  std::string probe_env;
  if (const char* e = std::getenv("TAIHU_COMM_PROBE")) probe_env = e;
  unsetenv("TAIHU_COMM_PROBE");  // ctest sets never; this test probes
  long long id = ::getpid();
  MPI_Bcast(&id, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
  const std::string path =
      (std::filesystem::temp_directory_path() / ("taihu_small_cal_" + std::to_string(id) + ".txt")).string();
  char host[256] = {0};
  gethostname(host, sizeof(host) - 1);
  {
    tc::Options never;
    never.probe = tc::Probe::never;
    tc::Communicator plain(MPI_COMM_WORLD, never);
    const std::string key = tc::calibration_key(plain.layout(), host);
    if (world_rank() == 0) {
      std::ofstream out(path);
      out << key << " 1e-6 3.6e-10 4e-7 1.8e-10 1.6e-10\n";  // the format before v2
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }
  tc::Options o;
  o.calibration_cache = path;
  tc::Communicator comm(MPI_COMM_WORLD, o);
  const auto& small = comm.cost_model().params().small;
  ASSERT_EQ(small.size(), 8u);  // 4, 16, ..., 64 KiB
  for (std::size_t i = 0; i < small.size(); ++i) {
    EXPECT_EQ(small[i].bytes, std::size_t{4} << (2 * i));
    EXPECT_NE(small[i].algorithm, tc::Algorithm::automatic);
    EXPECT_GT(small[i].seconds, 0.0);
    EXPECT_EQ(comm.choose(small[i].bytes).algorithm, small[i].algorithm) << small[i].bytes;
  }
  for (std::size_t count : {1ul, 5ul, 64ul, 1001ul, 16384ul}) {
    const auto in = make_input<float>(count, true, 5);
    auto got = in;
    comm.allreduce(got.data(), got.size());
    EXPECT_TRUE(got == reference(in, tc::Op::sum)) << "count " << count;
    EXPECT_TRUE(identical_on_all_ranks(got));
  }
  if (world_rank() == 0) {
    const auto stored = tc::load_calibration(path, tc::calibration_key(comm.layout(), host));
    ASSERT_TRUE(stored.has_value());
    ASSERT_EQ(stored->small.size(), small.size());
    for (std::size_t i = 0; i < small.size(); ++i) EXPECT_EQ(stored->small[i].algorithm, small[i].algorithm);
  }
  {
    tc::Options cached_only = o;
    cached_only.probe = tc::Probe::never;  // must come from the file, not a probe
    tc::Communicator again(MPI_COMM_WORLD, cached_only);
    ASSERT_EQ(again.cost_model().params().small.size(), small.size());
    for (std::size_t i = 0; i < small.size(); ++i)
      EXPECT_EQ(again.cost_model().params().small[i].algorithm, small[i].algorithm);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (world_rank() == 0) std::filesystem::remove(path);
  if (!probe_env.empty()) setenv("TAIHU_COMM_PROBE", probe_env.c_str(), 1);
}

TEST(CommParameters, BroadcastAndChecksum) {
  std::vector<float> w = make_input<float>(1000, false, 3);
  tc::broadcast(MPI_COMM_WORLD, w.data(), w.size(), 0);
  EXPECT_NO_THROW(tc::verify_identical(MPI_COMM_WORLD, tc::checksum(std::span<const float>(w)), "weights"));
  if (world_rank() == world_size() - 1) w[17] = std::nextafter(w[17], 2.0f);
  try {
    tc::verify_identical(MPI_COMM_WORLD, tc::checksum(std::span<const float>(w)), "weights");
    ADD_FAILURE() << "one-ulp difference not detected";
  } catch (const taihu::Error& e) {
    EXPECT_NE(std::string(e.what()).find("rank(s) " + std::to_string(world_size() - 1)), std::string::npos)
        << e.what();
  }
}
