// bench_allreduce: taihu::comm allreduce against MPI_Allreduce (the MPI library's own
// decision) in the same mpirun, float sum, sizes 4 B .. 64 MiB (powers of 4).
//   mpirun -np 2 bench_allreduce [--max-bytes N] [--min-bytes N] [--algorithm NAME]
//                           [--double] [--seconds S] [--csv FILE]
// Each size runs rounds of (k taihu calls, k MPI calls) interleaved so host noise hits
// both; a round's time is the slowest rank's; the median round is reported. Columns:
// latency (us per call), algbw = bytes / time, busbw = algbw * 2(p-1)/p (NCCL's
// definitions), vs_mpi = MPI time / taihu time (> 1: taihu faster), and the algorithm
// taihu's cost model picked. Results are checked against MPI_Allreduce once per size.
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "taihu/arch/error.hpp"
#include "taihu/arch/timer.hpp"
#include "taihu/comm/communicator.hpp"

namespace tc = taihu::comm;

namespace {

struct Args {
  std::size_t min_bytes = 4, max_bytes = 64u << 20;
  tc::Algorithm algorithm = tc::Algorithm::automatic;
  bool use_double = false;
  double seconds = 0.3;  // target measuring time per size and side
  std::string csv;
};

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string k = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw taihu::Error(k + " needs a value");
      return argv[++i];
    };
    if (k == "--max-bytes") a.max_bytes = std::stoull(value());
    else if (k == "--min-bytes") a.min_bytes = std::stoull(value());
    else if (k == "--algorithm") a.algorithm = tc::parse_algorithm(value(), "--algorithm");
    else if (k == "--double") a.use_double = true;
    else if (k == "--seconds") a.seconds = std::stod(value());
    else if (k == "--csv") a.csv = value();
    else throw taihu::Error("bench_allreduce: unknown argument '" + k + "' (--max-bytes --min-bytes --algorithm --double --seconds --csv)");
  }
  return a;
}

template <class T> MPI_Datatype mpi_t();
template <> MPI_Datatype mpi_t<float>() { return MPI_FLOAT; }
template <> MPI_Datatype mpi_t<double>() { return MPI_DOUBLE; }

double slowest(double t) {
  double m = 0;
  MPI_Allreduce(&t, &m, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return m;
}

struct Row {
  std::size_t bytes;
  std::string algorithm;
  double taihu_s, mpi_s;
};

template <class T>
Row measure(tc::Communicator& comm, const Args& a, std::size_t bytes) {
  const std::size_t count = std::max<std::size_t>(1, bytes / sizeof(T));
  const int p = comm.size();
  std::vector<T> buf(count), ref(count);
  for (std::size_t i = 0; i < count; ++i) buf[i] = static_cast<T>((i + comm.rank()) % 7);
  // Correctness once (integer-valued: exact).
  std::vector<T> in = buf;
  MPI_Allreduce(in.data(), ref.data(), static_cast<int>(count), mpi_t<T>(), MPI_SUM, MPI_COMM_WORLD);
  comm.allreduce(in.data(), count, tc::Op::sum, a.algorithm);
  int bad = in == ref ? 0 : 1, any = 0;
  MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (any) throw taihu::Error("bench_allreduce: taihu result differs from MPI_Allreduce at " + std::to_string(bytes) + " bytes");
  // Calibrate k so a round takes ~ seconds/10 per side.
  auto run_taihu = [&](int k) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = taihu::arch::now_seconds();
    for (int i = 0; i < k; ++i) comm.allreduce(buf.data(), count, tc::Op::sum, a.algorithm);
    return slowest(taihu::arch::now_seconds() - t0) / k;
  };
  auto run_mpi = [&](int k) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = taihu::arch::now_seconds();
    for (int i = 0; i < k; ++i)
      MPI_Allreduce(MPI_IN_PLACE, buf.data(), static_cast<int>(count), mpi_t<T>(), MPI_SUM, MPI_COMM_WORLD);
    return slowest(taihu::arch::now_seconds() - t0) / k;
  };
  const double first = std::max(run_taihu(1), run_mpi(1));
  const int k = std::clamp(static_cast<int>(a.seconds / 10 / std::max(first, 1e-7)), 1, 20000);
  std::vector<double> ts, ms;
  for (int round = 0; round < 10; ++round) {
    ts.push_back(run_taihu(k));
    ms.push_back(run_mpi(k));
  }
  std::sort(ts.begin(), ts.end());
  std::sort(ms.begin(), ms.end());
  (void)p;
  return Row{bytes, std::string(tc::to_string(comm.choose(count * sizeof(T), a.algorithm).algorithm)), ts[ts.size() / 2],
             ms[ms.size() / 2]};
}

std::string human(std::size_t b) {
  char s[32];
  if (b >= (1u << 20)) std::snprintf(s, sizeof(s), "%zuMiB", b >> 20);
  else if (b >= 1024) std::snprintf(s, sizeof(s), "%zuKiB", b >> 10);
  else std::snprintf(s, sizeof(s), "%zuB", b);
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
  int rank = 0, p = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  int rc = 0;
  try {
    const Args a = parse(argc, argv);
    tc::Communicator comm(MPI_COMM_WORLD);
    std::vector<Row> rows;
    if (rank == 0) {
      std::printf("bench_allreduce: %d ranks, %s sum, taihu vs MPI_Allreduce (same run)\n", p, a.use_double ? "double" : "float");
      std::printf("%-22s %12s %12s %10s %10s %10s  %s\n", "benchmark", "taihu_us", "mpi_us", "vs_mpi", "algbw_GB/s",
                  "busbw_GB/s", "algorithm");
    }
    for (std::size_t bytes = a.min_bytes; bytes <= a.max_bytes; bytes *= 4) {
      const Row r = a.use_double ? measure<double>(comm, a, bytes) : measure<float>(comm, a, bytes);
      rows.push_back(r);
      if (rank == 0) {
        const double algbw = static_cast<double>(r.bytes) / r.taihu_s / 1e9;
        std::printf("%-22s %12.2f %12.2f %9.2fx %10.3f %10.3f  %s\n",
                    ("allreduce/" + std::to_string(p) + "/" + human(r.bytes)).c_str(), r.taihu_s * 1e6, r.mpi_s * 1e6,
                    r.mpi_s / r.taihu_s, algbw, algbw * 2.0 * (p - 1) / p, r.algorithm.c_str());
        std::fflush(stdout);
      }
    }
    if (rank == 0 && !a.csv.empty()) {
      const std::string tmp = a.csv + ".tmp";
      {
        std::ofstream out(tmp);
        out << "ranks,bytes,algorithm,taihu_s,mpi_s,vs_mpi\n";
        for (const Row& r : rows)
          out << p << ',' << r.bytes << ',' << r.algorithm << ',' << r.taihu_s << ',' << r.mpi_s << ','
              << r.mpi_s / r.taihu_s << '\n';
      }
      std::rename(tmp.c_str(), a.csv.c_str());
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_allreduce (rank %d): %s\n", rank, e.what());
    rc = 1;
  }
  MPI_Finalize();
  return rc;
}
