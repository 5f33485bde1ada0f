// bench_allreduce: taihu::comm allreduce against MPI_Allreduce (the MPI library's own
// decision) in the same mpirun, float (or double) sum, sizes 4 B .. 64 MiB (powers of 4),
// with nccl-tests' conventions: in-place and out-of-place columns, a #wrong column from a
// check of each result against an exact reference, algbw and busbw.
//   mpirun -np 2 bench_allreduce [--max-bytes N] [--min-bytes N] [--algorithm NAME]
//       [--double] [--seconds S] [--rounds N] [--in-place-only] [--csv FILE] [--pmpi]
//       [--benchmark_format=console|json|csv] [--benchmark_out=FILE]
//       [--benchmark_out_format=json|csv|console]
// Sides: "taihu" = taihu::comm::Communicator::allreduce (out of place = copy, then in
// place); "mpi" = MPI_Allreduce. --pmpi times MPI_Allreduce as an unmodified program
// calls it, with no taihu communicator in this program: run it with
// `mpirun -x LD_PRELOAD=.../libtaihu_allreduce_pmpi.so`, and the "taihu" side is
// MPI_Allreduce through the preload, the "mpi" side the same call with the preload
// switched off (taihu_pmpi_set_enabled(0), at the same point on all ranks) so both run
// interleaved in one process; without the preload there is one side.
// Method: each size and placement runs rounds of (k calls of one side, k of the other,
// the first side alternating) interleaved so host noise hits both; a round's time is the slowest rank's; the median
// of 10 rounds (--rounds N, >= 3) is reported; --in-place-only skips the out-of-place
// columns (left 0 / empty): together they make the 64 MiB rows of a slow cluster fit. Columns: time (us per call), algbw = bytes / time, busbw =
// algbw * 2(p-1)/p (nccl-tests' definitions, for taihu's time), vs_mpi = MPI time /
// taihu time (> 1: taihu faster), #wrong = elements differing from the exact reference
// summed over ranks, as "taihu/mpi" (inputs are small integers: every sum is exact), and
// the algorithm taihu's cost model picked. Any wrong element makes the exit status 1.
// --csv FILE (written atomically) has one line per size with the columns
//   ranks,bytes,algorithm,taihu_s,mpi_s,vs_mpi            (in place; as before)
//   ,count,type,mode,taihu_oop_s,mpi_oop_s,vs_mpi_oop,algbw_GBps,busbw_GBps,
//   oop_algbw_GBps,oop_busbw_GBps,taihu_wrong,mpi_wrong,taihu_oop_wrong,mpi_oop_wrong
// (times in seconds; an absent side is empty). --benchmark_out_format=json writes Google
// Benchmark's JSON (one entry per size and placement, counters gbps, busbw_gbps,
// anchor_gbps, vs_anchor, vs_mpi, wrong, anchor_wrong), which scripts/bench_table.py reads.
#include <dlfcn.h>
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <functional>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "bench_common.hpp"
#include "taihu/arch/atomic_file.hpp"
#include "taihu/arch/error.hpp"
#include "taihu/arch/timer.hpp"
#include "taihu/comm/communicator.hpp"

namespace tc = taihu::comm;

namespace {

enum class Format { console, json, csv };

struct Args {
  std::size_t min_bytes = 4, max_bytes = 64u << 20;
  tc::Algorithm algorithm = tc::Algorithm::automatic;
  bool use_double = false;
  bool pmpi = false;
  double seconds = 0.3;  // target measuring time per size, placement and side
  int rounds = 10;       // interleaved rounds per size and placement; the median is reported
  bool in_place_only = false;
  std::string csv;
  Format stdout_format = Format::console;
  std::string out_file;
  Format out_format = Format::json;
};

Format parse_format(const std::string& v, const std::string& flag) {
  if (v == "console") return Format::console;
  if (v == "json") return Format::json;
  if (v == "csv") return Format::csv;
  throw taihu::Error(flag + "='" + v + "': use console, json or csv");
}

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    std::string k = argv[i];
    std::optional<std::string> inline_value;
    if (const auto eq = k.find('='); k.rfind("--", 0) == 0 && eq != std::string::npos) {
      inline_value = k.substr(eq + 1);
      k = k.substr(0, eq);
    }
    auto value = [&]() -> std::string {
      if (inline_value) return *inline_value;
      if (i + 1 >= argc) throw taihu::Error(k + " needs a value");
      return argv[++i];
    };
    auto number = [&](const std::string& v) -> std::size_t {
      std::size_t used = 0;
      unsigned long long n = 0;
      try {
        n = std::stoull(v, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used != v.size() || v.empty() || v[0] == '-') throw taihu::Error(k + "='" + v + "': not a byte count");
      return static_cast<std::size_t>(n);
    };
    if (k == "--max-bytes") a.max_bytes = number(value());
    else if (k == "--min-bytes") a.min_bytes = number(value());
    else if (k == "--algorithm") a.algorithm = tc::parse_algorithm(value(), "--algorithm");
    else if (k == "--double") a.use_double = true;
    else if (k == "--pmpi") a.pmpi = true;
    else if (k == "--seconds") a.seconds = std::stod(value());
    else if (k == "--rounds") a.rounds = static_cast<int>(std::min<std::size_t>(number(value()), 1001));
    else if (k == "--in-place-only") a.in_place_only = true;
    else if (k == "--csv") a.csv = value();
    else if (k == "--benchmark_format") a.stdout_format = parse_format(value(), k);
    else if (k == "--benchmark_out") a.out_file = value();
    else if (k == "--benchmark_out_format") a.out_format = parse_format(value(), k);
    else
      throw taihu::Error("bench_allreduce: unknown argument '" + std::string(argv[i]) +
                         "' (--max-bytes --min-bytes --algorithm --double --seconds --rounds --in-place-only --csv --pmpi "
                         "--benchmark_format --benchmark_out --benchmark_out_format)");
  }
  if (a.min_bytes == 0 || a.min_bytes > a.max_bytes)
    throw taihu::Error("bench_allreduce: need 0 < --min-bytes <= --max-bytes");
  if (!(a.seconds > 0)) throw taihu::Error("bench_allreduce: --seconds must be > 0");
  if (a.rounds < 3 || a.rounds > 1000) throw taihu::Error("bench_allreduce: --rounds must be in [3, 1000]");
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

// libtaihu_allreduce_pmpi.so's switch, when it is preloaded.
using SetEnabled = int (*)(int);
SetEnabled preload_switch() {
  return reinterpret_cast<SetEnabled>(dlsym(RTLD_DEFAULT, "taihu_pmpi_set_enabled"));
}

// One side of the comparison: runs one allreduce of `count` elements, in place (send ==
// nullptr) or from send into recv.
template <class T>
using Call = std::function<void(const T* send, T* recv, std::size_t count)>;

struct Timing {
  double seconds = 0;  // median per call; 0 when the side is absent
  long long wrong = 0;
  int calls = 0;
};

struct Row {
  std::size_t bytes = 0, count = 0;
  std::string algorithm;
  Timing t_in, m_in, t_oop, m_oop;  // taihu / mpi, in place / out of place
};

// Elements of `got` differing from the exact sum over ranks, summed over ranks.
template <class T>
long long count_wrong(const std::vector<T>& got, int p) {
  long long wrong = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    long long expect = 0;
    for (int r = 0; r < p; ++r) expect += static_cast<long long>((i + static_cast<std::size_t>(r)) % 7);
    if (got[i] != static_cast<T>(expect)) ++wrong;
  }
  long long total = 0;
  MPI_Allreduce(&wrong, &total, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  return total;
}

// Checks and times sides a and b (b may be empty) for one placement.
template <class T>
std::pair<Timing, Timing> measure_pair(const Args& a, std::size_t count, bool in_place, const Call<T>& side_a,
                                       const Call<T>& side_b) {
  int rank = 0, p = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  std::vector<T> input(count), send(count), recv(count);
  for (std::size_t i = 0; i < count; ++i) input[i] = static_cast<T>((i + static_cast<std::size_t>(rank)) % 7);
  auto check = [&](const Call<T>& call) {
    send = input;
    if (in_place) {
      recv = input;
      call(nullptr, recv.data(), count);
    } else {
      std::fill(recv.begin(), recv.end(), T(-1));
      call(send.data(), recv.data(), count);
    }
    return count_wrong(recv, p) + (in_place || send == input ? 0 : 1);
  };
  Timing ta, tb;
  ta.wrong = check(side_a);
  if (side_b) tb.wrong = check(side_b);
  send = input;
  auto run = [&](const Call<T>& call, int k) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = taihu::arch::now_seconds();
    for (int i = 0; i < k; ++i) call(in_place ? nullptr : send.data(), recv.data(), count);
    return slowest(taihu::arch::now_seconds() - t0) / k;
  };
  double first = run(side_a, 1);
  if (side_b) first = std::max(first, run(side_b, 1));
  const int k = std::clamp(static_cast<int>(a.seconds / a.rounds / std::max(first, 1e-7)), 1, 20000);
  std::vector<double> sa, sb;
  for (int round = 0; round < a.rounds; ++round) {
    // Which side goes first alternates: the first after the barrier may pay for rank
    // skew (a steady 5-7% on 140 us calls with both sides the same MPI_Allreduce).
    if (side_b && round % 2 == 1) sb.push_back(run(side_b, k));
    sa.push_back(run(side_a, k));
    if (side_b && round % 2 == 0) sb.push_back(run(side_b, k));
  }
  std::sort(sa.begin(), sa.end());
  ta.seconds = sa[sa.size() / 2];
  ta.calls = a.rounds * k;
  if (side_b) {
    std::sort(sb.begin(), sb.end());
    tb.seconds = sb[sb.size() / 2];
    tb.calls = a.rounds * k;
  }
  return {ta, tb};
}

template <class T>
Call<T> mpi_call() {
  return [](const T* send, T* recv, std::size_t n) {
    const int rc = MPI_Allreduce(send ? static_cast<const void*>(send) : MPI_IN_PLACE, recv, static_cast<int>(n),
                                 mpi_t<T>(), MPI_SUM, MPI_COMM_WORLD);
    if (rc != MPI_SUCCESS) throw taihu::Error("MPI_Allreduce returned " + std::to_string(rc));
  };
}

template <class T>
Row measure(tc::Communicator* comm, const Args& a, std::size_t bytes) {
  Row row;
  row.bytes = bytes;
  row.count = std::max<std::size_t>(1, bytes / sizeof(T));
  Call<T> taihu_side, mpi_side;
  if (!a.pmpi) {
    taihu_side = [comm, &a](const T* send, T* recv, std::size_t n) {
      if (send) std::memcpy(recv, send, n * sizeof(T));
      comm->allreduce(recv, n, tc::Op::sum, a.algorithm);
    };
    mpi_side = mpi_call<T>();
    row.algorithm = std::string(tc::to_string(comm->choose(row.count * sizeof(T), a.algorithm).algorithm));
  } else {
    taihu_side = mpi_call<T>();  // through the preload when it is loaded
    if (const SetEnabled set = preload_switch()) {
      mpi_side = [set](const T* send, T* recv, std::size_t n) {
        set(0);
        mpi_call<T>()(send, recv, n);
        set(1);
      };
      row.algorithm = "preload";
    } else {
      row.algorithm = "MPI_Allreduce";
    }
  }
  std::tie(row.t_in, row.m_in) = measure_pair<T>(a, row.count, true, taihu_side, mpi_side);
  if (!a.in_place_only)
    std::tie(row.t_oop, row.m_oop) = measure_pair<T>(a, row.count, false, taihu_side, mpi_side);
  return row;
}

std::string human(std::size_t b) {
  char s[32];
  if (b >= (1u << 20)) std::snprintf(s, sizeof(s), "%zuMiB", b >> 20);
  else if (b >= 1024) std::snprintf(s, sizeof(s), "%zuKiB", b >> 10);
  else std::snprintf(s, sizeof(s), "%zuB", b);
  return s;
}

double algbw(const Row& r, const Timing& t) { return t.seconds > 0 ? static_cast<double>(r.bytes) / t.seconds / 1e9 : 0; }
double busbw(const Row& r, const Timing& t, int p) { return algbw(r, t) * 2.0 * (p - 1) / p; }
double ratio(const Timing& taihu, const Timing& mpi) { return taihu.seconds > 0 && mpi.seconds > 0 ? mpi.seconds / taihu.seconds : 0; }

std::string optional_seconds(const Timing& t) {
  if (t.seconds <= 0) return "";
  std::ostringstream s;
  s << t.seconds;
  return s.str();
}

std::string csv_text(const std::vector<Row>& rows, int p, const Args& a) {
  std::ostringstream out;
  out << "ranks,bytes,algorithm,taihu_s,mpi_s,vs_mpi,count,type,mode,taihu_oop_s,mpi_oop_s,vs_mpi_oop,algbw_GBps,"
         "busbw_GBps,oop_algbw_GBps,oop_busbw_GBps,taihu_wrong,mpi_wrong,taihu_oop_wrong,mpi_oop_wrong\n";
  for (const Row& r : rows) {
    out << p << ',' << r.bytes << ',' << r.algorithm << ',' << r.t_in.seconds << ',' << optional_seconds(r.m_in) << ','
        << ratio(r.t_in, r.m_in) << ',' << r.count << ',' << (a.use_double ? "double" : "float") << ','
        << (a.pmpi ? "pmpi" : "library") << ',' << r.t_oop.seconds << ',' << optional_seconds(r.m_oop) << ','
        << ratio(r.t_oop, r.m_oop) << ',' << algbw(r, r.t_in) << ',' << busbw(r, r.t_in, p) << ','
        << algbw(r, r.t_oop) << ',' << busbw(r, r.t_oop, p) << ',' << r.t_in.wrong << ',' << r.m_in.wrong << ','
        << r.t_oop.wrong << ',' << r.m_oop.wrong << '\n';
  }
  return out.str();
}

std::string json_escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '"' || c == '\\') o += '\\';
    if (static_cast<unsigned char>(c) >= 0x20) o += c;
  }
  return o;
}

std::string json_text(const std::vector<Row>& rows, int p, const Args& a, const char* argv0) {
  char host[256] = {0};
  gethostname(host, sizeof(host) - 1);
  char date[64] = {0};
  const std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%S%z", std::localtime(&now));
  std::ostringstream out;
  out << "{\n  \"context\": {\n    \"date\": \"" << date << "\",\n    \"host_name\": \"" << json_escape(host)
      << "\",\n    \"executable\": \"" << json_escape(argv0) << "\",\n    \"num_cpus\": "
      << sysconf(_SC_NPROCESSORS_ONLN) << ",\n    \"mpi_ranks\": " << p << ",\n    \"mode\": \""
      << (a.pmpi ? "pmpi" : "library") << "\",\n    \"machine\": \""
      << json_escape(taihu::bench::machine_description()) << "\",\n    \"library_build_type\": \"release\"\n  },\n"
      << "  \"benchmarks\": [";
  bool first = true;
  for (const Row& r : rows)
    for (int oop = 0; oop < 2; ++oop) {
      const Timing& t = oop ? r.t_oop : r.t_in;
      const Timing& m = oop ? r.m_oop : r.m_in;
      const std::string name = "allreduce/" + std::to_string(p) + "/" + human(r.bytes) + (oop ? "/out_of_place" : "/in_place");
      out << (first ? "\n" : ",\n") << "    {\"name\": \"" << name << "\", \"run_name\": \"" << name
          << "\", \"run_type\": \"iteration\", \"repetitions\": 1, \"repetition_index\": 0, \"threads\": 1"
          << ", \"iterations\": " << t.calls << ", \"real_time\": " << t.seconds * 1e6 << ", \"cpu_time\": "
          << t.seconds * 1e6 << ", \"time_unit\": \"us\", \"bytes\": " << r.bytes << ", \"count\": " << r.count
          << ", \"gbps\": " << algbw(r, t) << ", \"busbw_gbps\": " << busbw(r, t, p) << ", \"anchor_gbps\": "
          << algbw(r, m) << ", \"vs_anchor\": " << ratio(t, m) << ", \"vs_mpi\": " << ratio(t, m)
          << ", \"wrong\": " << t.wrong << ", \"anchor_wrong\": " << m.wrong << ", \"label\": \"" << r.algorithm << "\"}";
      first = false;
    }
  out << "\n  ]\n}\n";
  return out.str();
}


std::string format_text(Format f, const std::vector<Row>& rows, int p, const Args& a, const char* argv0) {
  return f == Format::json ? json_text(rows, p, a, argv0) : csv_text(rows, p, a);
}

// Columns 1-6 are the pre-nccl-tests table's (benchmark, taihu_us, mpi_us, vs_mpi, algbw,
// busbw: in place), so scripts that read them by position keep working.
void print_header(const Args& a, int p, bool have_b) {
  const char* ta = a.pmpi ? (have_b ? "preload_us" : "mpi_us") : "taihu_us";
  const char* tb = a.pmpi ? "plain_us" : "mpi_us";
  const char* vs = a.pmpi ? "vs_plain" : "vs_mpi";
  std::printf("bench_allreduce: %d ranks, %s sum, %s\n", p, a.use_double ? "double" : "float",
              a.pmpi ? (have_b ? "MPI_Allreduce through libtaihu_allreduce_pmpi.so (preload) vs with it switched off "
                                 "(plain), same run"
                               : "MPI_Allreduce as an unmodified program calls it (no preload loaded)")
                     : "taihu vs MPI_Allreduce (same run)");
  std::printf("machine: %s\n", taihu::bench::machine_description().c_str());
  std::printf("%-22s %-62s | %-62s |\n", "", " in-place", " out-of-place");
  std::printf("%-22s", "benchmark");
  for (int i = 0; i < 2; ++i)
    std::printf("%s%10s %10s %8s %10s %10s %9s", i ? " | " : " ", ta, tb, vs, "algbw_GB/s", "busbw_GB/s", "#wrong");
  std::printf(" | %9s  %s\n", "count", a.pmpi ? "path" : "algorithm");
}

void print_row(const Row& r, int p) {
  std::printf("%-22s", ("allreduce/" + std::to_string(p) + "/" + human(r.bytes)).c_str());
  for (int oop = 0; oop < 2; ++oop) {
    const Timing& t = oop ? r.t_oop : r.t_in;
    const Timing& m = oop ? r.m_oop : r.m_in;
    char mpi_us[32] = "-", vs[32] = "-";
    if (m.seconds > 0) {
      std::snprintf(mpi_us, sizeof mpi_us, "%.2f", m.seconds * 1e6);
      std::snprintf(vs, sizeof vs, "%.2fx", ratio(t, m));
    }
    const std::string wrong = std::to_string(t.wrong) + "/" + (m.seconds > 0 ? std::to_string(m.wrong) : "-");
    std::printf("%s%10.2f %10s %8s %10.3f %10.3f %9s", oop ? " | " : " ", t.seconds * 1e6, mpi_us, vs, algbw(r, t),
                busbw(r, t, p), wrong.c_str());
  }
  std::printf(" | %9zu  %s\n", r.count, r.algorithm.c_str());
  std::fflush(stdout);
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
    std::optional<tc::Communicator> comm;
    if (!a.pmpi) {
      // A preload would turn the mpi column into taihu as well: keep MPI_Allreduce MPI's.
      if (const SetEnabled set = preload_switch()) set(0);
      comm.emplace(MPI_COMM_WORLD);
    }
    const bool have_b = !a.pmpi || preload_switch() != nullptr;
    const bool console = a.stdout_format == Format::console;
    std::vector<Row> rows;
    if (rank == 0 && console) print_header(a, p, have_b);
    long long wrong = 0;
    for (std::size_t bytes = a.min_bytes; bytes <= a.max_bytes; bytes *= 4) {
      const Row r = a.use_double ? measure<double>(comm ? &*comm : nullptr, a, bytes)
                                 : measure<float>(comm ? &*comm : nullptr, a, bytes);
      rows.push_back(r);
      wrong += r.t_in.wrong + r.m_in.wrong + r.t_oop.wrong + r.m_oop.wrong;
      if (rank == 0 && console) print_row(r, p);
    }
    if (rank == 0) {
      if (!console) std::fputs(format_text(a.stdout_format, rows, p, a, argv[0]).c_str(), stdout);
      if (!a.csv.empty()) taihu::write_file_atomic(a.csv, csv_text(rows, p, a));
      if (!a.out_file.empty())
        taihu::write_file_atomic(a.out_file, a.out_format == Format::console ? csv_text(rows, p, a)
                                                                     : format_text(a.out_format, rows, p, a, argv[0]));
    }
    if (wrong > 0) {
      if (rank == 0) std::fprintf(stderr, "bench_allreduce: %lld wrong elements (see #wrong)\n", wrong);
      rc = 1;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_allreduce (rank %d): %s\n", rank, e.what());
    rc = 1;
  }
  MPI_Finalize();
  return rc;
}
