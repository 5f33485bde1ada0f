// libtaihu_allreduce_pmpi.so: taihu's allreduce for unmodified MPI programs, through the
// MPI profiling interface. Load it into the ranks with
//   mpirun -x LD_PRELOAD=.../libtaihu_allreduce_pmpi.so ... ./app
// Contract:
// - MPI_Allreduce of MPI_FLOAT or MPI_DOUBLE with MPI_SUM (MPI_IN_PLACE or not) on an
//   intra-communicator of >= 2 ranks runs taihu::comm (cost-model choice, bitwise identical
//   on all ranks); every other call (other ops, types, derived datatypes,
//   inter-communicators, count 0, one rank, before MPI_Init / after MPI_Finalize, calls made
//   by taihu itself) goes to PMPI_Allreduce unchanged.
// - MPI_Iallreduce of the same calls, when MPI provides MPI_THREAD_MULTIPLE, runs taihu::comm
//   on a worker thread per communicator over a private duplicate made with MPI_Comm_idup
//   (iallreduce_worker.hpp) and returns a generalized request; below MPI_THREAD_MULTIPLE,
//   and for every other call, PMPI_Iallreduce.
// - One taihu::comm::Communicator per MPI communicator, made on the first call that takes
//   the taihu path (collective, as the call itself is), stored as an MPI attribute whose
//   delete callback frees it on MPI_Comm_free; MPI_Finalize frees the rest (reverse order of
//   creation) before PMPI_Finalize. Iallreduce workers are attributes too: MPI_Comm_free
//   lets the worker finish and free its duplicate, MPI_Finalize waits for all of them.
// - Blocking calls under MPI_THREAD_MULTIPLE: pass through by default (two threads may run
//   collectives on different communicators at once, and a lock would deadlock across ranks);
//   TAIHU_PMPI_THREADS=serial declares that one thread at a time calls collectives, and a
//   concurrent call is then reported as an MPI error.
// - Errors (bad environment, taihu failures) are printed with the rank and raised through
//   the communicator's error handler as MPI_ERR_OTHER; nothing aborts on its own.
// Environment: TAIHU_PMPI_DISABLE=1 (pass everything through), TAIHU_PMPI_IALLREDUCE=0 (pass
// every MPI_Iallreduce through), TAIHU_PMPI_MIN_BYTES=N (smaller calls pass through),
// TAIHU_PMPI_THREADS=passthrough|serial, TAIHU_VERBOSE=1 (one line per communicator,
// function, type and power-of-two size class saying which path was taken), and
// taihu::comm's own variables (TAIHU_ALLREDUCE, TAIHU_TOPOLOGY, TAIHU_COMM_PROBE, ...).
// Every rank must see the same values (mpirun -x).
#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "taihu/arch/error.hpp"
#include "taihu/arch/log.hpp"
#include "taihu/comm/communicator.hpp"
#include "iallreduce_worker.hpp"
#include "pmpi_shared.hpp"

#define TAIHU_PMPI_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

namespace tc = taihu::comm;

using taihu_pmpi::inside_taihu;
using taihu_pmpi::IallreduceWorker;
using taihu_pmpi::log_path;
using taihu_pmpi::ReentryGuard;

struct Config {
  bool disabled = false;
  long long min_bytes = 0;
  bool serial_under_multiple = false;
  bool iallreduce = true;  // TAIHU_PMPI_IALLREDUCE
  std::string error;  // a bad environment value, reported on every taihu-eligible call
};

bool parse_flag(const char* name, bool& out, std::string& error) {
  const char* v = std::getenv(name);
  if (!v || !*v) return true;
  const std::string s(v);
  if (s == "0" || s == "off" || s == "false") out = false;
  else if (s == "1" || s == "on" || s == "true") out = true;
  else {
    error = std::string(name) + "='" + s + "': use 0 or 1";
    return false;
  }
  return true;
}

Config read_config() {
  Config c;
  if (!parse_flag("TAIHU_PMPI_DISABLE", c.disabled, c.error)) return c;
  if (!parse_flag("TAIHU_PMPI_IALLREDUCE", c.iallreduce, c.error)) return c;
  if (const char* v = std::getenv("TAIHU_PMPI_MIN_BYTES"); v && *v) {
    char* end = nullptr;
    const long long n = std::strtoll(v, &end, 10);
    if (*end != '\0' || n < 0) {
      c.error = std::string("TAIHU_PMPI_MIN_BYTES='") + v + "': use a byte count >= 0";
      return c;
    }
    c.min_bytes = n;
  }
  if (const char* v = std::getenv("TAIHU_PMPI_THREADS"); v && *v) {
    const std::string s(v);
    if (s == "serial") c.serial_under_multiple = true;
    else if (s != "passthrough") c.error = "TAIHU_PMPI_THREADS='" + s + "': use passthrough or serial";
  }
  return c;
}

const Config& config() {
  static const Config c = read_config();
  return c;
}

// One MPI communicator's taihu state (the attribute's value).
struct Entry {
  MPI_Comm user_comm;
  std::unique_ptr<tc::Communicator> taihu;
};

struct State {
  std::mutex mutex;                 // guards everything below
  int keyval = MPI_KEYVAL_INVALID;
  std::vector<Entry*> entries;      // creation order
  int worker_keyval = MPI_KEYVAL_INVALID;
  std::vector<std::unique_ptr<IallreduceWorker>> workers;  // all ever made; joined at MPI_Finalize
  std::set<std::tuple<std::uintptr_t, std::string, int>> logged;  // (comm, path, size class)
  int lines_logged = 0;
};

State& state() {
  static State s;
  return s;
}

std::atomic<int> calls_in_flight{0};
std::atomic<bool> runtime_enabled{true};  // taihu_pmpi_set_enabled (benchmarks)

int delete_entry(MPI_Comm, int, void* value, void*) {
  auto* e = static_cast<Entry*>(value);
  {
    std::lock_guard<std::mutex> lock(state().mutex);
    auto& v = state().entries;
    for (auto it = v.begin(); it != v.end(); ++it)
      if (*it == e) {
        v.erase(it);
        break;
      }
  }
  int rc = MPI_SUCCESS;
  try {
    ReentryGuard guard;
    e->taihu.reset();  // collective frees: every rank is inside MPI_Comm_free / MPI_Finalize
  } catch (const std::exception& ex) {
    std::fprintf(stderr, "taihu-pmpi: freeing a communicator's allreduce state failed: %s\n", ex.what());
    rc = MPI_ERR_OTHER;
  }
  delete e;
  return rc;
}

int comm_rank(MPI_Comm comm) {
  int r = 0;
  PMPI_Comm_rank(comm, &r);
  return r;
}

std::string comm_label(MPI_Comm comm) {
  char name[MPI_MAX_OBJECT_NAME] = {0};
  int len = 0;
  PMPI_Comm_get_name(comm, name, &len);
  int size = 0;
  PMPI_Comm_size(comm, &size);
  std::string label = len > 0 ? std::string(name, static_cast<std::size_t>(len)) : "communicator";
  return label + " (" + std::to_string(size) + " ranks)";
}

std::string type_name(MPI_Datatype t) {
  char name[MPI_MAX_OBJECT_NAME] = {0};
  int len = 0;
  if (PMPI_Type_get_name(t, name, &len) != MPI_SUCCESS || len == 0) return "a derived datatype";
  return std::string(name, static_cast<std::size_t>(len));
}

const char* op_name(MPI_Op op) {
  if (op == MPI_SUM) return "MPI_SUM";
  if (op == MPI_MAX) return "MPI_MAX";
  if (op == MPI_MIN) return "MPI_MIN";
  if (op == MPI_PROD) return "MPI_PROD";
  return "another op";
}

long long message_bytes(MPI_Datatype t, int count) {
  int size = 0;
  if (PMPI_Type_size(t, &size) != MPI_SUCCESS) return 0;
  return static_cast<long long>(size) * count;
}

// The power-of-two size class: 0 for 0 bytes, else ceil(log2(bytes)).
int size_class(long long bytes) {
  int c = 0;
  while ((1LL << c) < bytes) ++c;
  return bytes == 0 ? -1 : c;
}

}  // namespace

// Declared in pmpi_shared.hpp (the Iallreduce worker logs too).
int taihu_pmpi::world_rank_or_minus_one() {
  int initialized = 0, finalized = 0, rank = -1;
  PMPI_Initialized(&initialized);
  PMPI_Finalized(&finalized);
  if (initialized && !finalized) PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

void taihu_pmpi::log_path(const char* function, MPI_Comm comm, MPI_Datatype type, MPI_Op op, int count,
              const std::string& path) {
  if (!taihu::arch::verbose_enabled() || comm_rank(comm) != 0) return;
  const long long bytes = count > 0 ? message_bytes(type, count) : 0;
  const std::string what = std::string(function) + ", " + type_name(type) + " " + op_name(op);
  State& s = state();
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    if (s.lines_logged >= 200) return;
    if (!s.logged.emplace(reinterpret_cast<std::uintptr_t>(comm), what + path, size_class(bytes)).second) return;
    if (++s.lines_logged == 200) taihu::arch::log_verbose("pmpi: 200 lines logged, no more");
  }
  int world_rank = 0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  taihu::arch::log_verbose("pmpi: rank %d: %s on %s, count %d (%lld B) -> %s", world_rank, what.c_str(),
                           comm_label(comm).c_str(), count, bytes, path.c_str());
}

namespace {

// Raises `message` through the communicator's error handler (fatal by default).
int report_error(MPI_Comm comm, const std::string& message) {
  int world_rank = -1;
  PMPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  std::fprintf(stderr, "taihu-pmpi (rank %d): %s\n", world_rank, message.c_str());
  std::fflush(stderr);
  PMPI_Comm_call_errhandler(comm, MPI_ERR_OTHER);
  return MPI_ERR_OTHER;
}

// Why this call cannot take the taihu path, or "" when it can. Depends only on values
// MPI requires to agree across the communicator's ranks, so all ranks take the same path.
std::string pass_reason(bool nonblocking, const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
                        MPI_Comm comm, long long& bytes) {
  bytes = 0;
  if (inside_taihu) return "internal";
  int initialized = 0, finalized = 0;
  PMPI_Initialized(&initialized);
  PMPI_Finalized(&finalized);
  if (!initialized || finalized) return "MPI not initialized";
  const Config& c = config();
  if (c.disabled) return "TAIHU_PMPI_DISABLE=1";
  if (!runtime_enabled.load()) return "disabled by taihu_pmpi_set_enabled";
  if (nonblocking && !c.iallreduce) return "TAIHU_PMPI_IALLREDUCE=0";
  if (comm == MPI_COMM_NULL) return "MPI_COMM_NULL";
  if (op != MPI_SUM) return "op is not MPI_SUM";
  std::size_t elem = 0;
  if (type == MPI_FLOAT) elem = sizeof(float);
  else if (type == MPI_DOUBLE) elem = sizeof(double);
  else return "datatype is not MPI_FLOAT or MPI_DOUBLE";
  if (count <= 0) return count == 0 ? "count 0" : "negative count";
  bytes = static_cast<long long>(count) * static_cast<long long>(elem);
  int inter = 0;
  PMPI_Comm_test_inter(comm, &inter);
  if (inter) return "inter-communicator";
  int size = 0;
  PMPI_Comm_size(comm, &size);
  if (size < 2) return "one rank";
  if (bytes < c.min_bytes) return "below TAIHU_PMPI_MIN_BYTES";
  int level = MPI_THREAD_SINGLE;
  PMPI_Query_thread(&level);
  if (nonblocking) {
    // The worker thread makes MPI calls while the application makes its own.
    if (level != MPI_THREAD_MULTIPLE) return "provided thread level below MPI_THREAD_MULTIPLE";
  } else if (level == MPI_THREAD_MULTIPLE && !c.serial_under_multiple) {
    return "MPI_THREAD_MULTIPLE (TAIHU_PMPI_THREADS=passthrough)";
  }
  if (recvbuf == nullptr) return "null receive buffer";
  if (sendbuf != MPI_IN_PLACE) {
    const auto* s = static_cast<const char*>(sendbuf);
    const auto* r = static_cast<const char*>(recvbuf);
    if (s == nullptr || (s < r + bytes && r < s + bytes)) return "send and receive buffers overlap";
  }
  return "";
}

// The communicator's taihu state, made on first use (collective over `comm`).
Entry* entry_for(MPI_Comm comm) {
  State& s = state();
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    if (s.keyval == MPI_KEYVAL_INVALID) {
      // Not copied by MPI_Comm_dup: a duplicate gets its own state on first use.
      const int rc = PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_entry, &s.keyval, nullptr);
      if (rc != MPI_SUCCESS) throw taihu::Error("MPI_Comm_create_keyval failed");
    }
  }
  void* value = nullptr;
  int found = 0;
  PMPI_Comm_get_attr(comm, s.keyval, &value, &found);
  if (found) return static_cast<Entry*>(value);
  auto e = std::make_unique<Entry>();
  e->user_comm = comm;
  {
    ReentryGuard guard;
    e->taihu = std::make_unique<tc::Communicator>(comm);
  }
  if (PMPI_Comm_set_attr(comm, s.keyval, e.get()) != MPI_SUCCESS) throw taihu::Error("MPI_Comm_set_attr failed");
  std::lock_guard<std::mutex> lock(s.mutex);
  s.entries.push_back(e.get());
  return e.release();
}

template <class T>
void run_taihu(Entry& e, const void* sendbuf, void* recvbuf, int count) {
  auto* data = static_cast<T*>(recvbuf);
  if (sendbuf != MPI_IN_PLACE) std::memcpy(data, sendbuf, static_cast<std::size_t>(count) * sizeof(T));
  ReentryGuard guard;
  e.taihu->allreduce(data, static_cast<std::size_t>(count), tc::Op::sum);
}

}  // namespace

TAIHU_PMPI_EXPORT int MPI_Allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                                    MPI_Comm comm) {
  long long bytes = 0;
  const std::string reason = pass_reason(false, sendbuf, recvbuf, count, datatype, op, comm, bytes);
  if (!reason.empty()) {
    if (reason != "internal" && reason != "MPI not initialized" && comm != MPI_COMM_NULL)
      log_path("MPI_Allreduce", comm, datatype, op, count, "PMPI_Allreduce (" + reason + ")");
    return PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm);
  }
  if (!config().error.empty()) return report_error(comm, config().error);
  struct InFlight {
    int before = calls_in_flight.fetch_add(1);
    ~InFlight() { calls_in_flight.fetch_sub(1); }
  } in_flight;
  if (in_flight.before != 0)
    return report_error(comm, "MPI_Allreduce called from two threads at once under TAIHU_PMPI_THREADS=serial");
  try {
    Entry* e = entry_for(comm);
    if (taihu::arch::verbose_enabled())
      log_path("MPI_Allreduce", comm, datatype, op, count,
               "taihu " + std::string(tc::to_string(e->taihu->choose(static_cast<std::size_t>(bytes)).algorithm)));
    if (datatype == MPI_FLOAT) run_taihu<float>(*e, sendbuf, recvbuf, count);
    else run_taihu<double>(*e, sendbuf, recvbuf, count);
  } catch (const std::exception& ex) {
    return report_error(comm, std::string("taihu allreduce failed: ") + ex.what());
  }
  return MPI_SUCCESS;
}

namespace {

// MPI_Comm_free of a communicator with a worker: let it finish what was posted and end
// (MPI_Finalize joins it; the object lives until after PMPI_Finalize).
int stop_worker(MPI_Comm, int, void* value, void*) {
  static_cast<IallreduceWorker*>(value)->request_stop();
  return MPI_SUCCESS;
}

// The communicator's Iallreduce worker, made at its first taken-over MPI_Iallreduce
// (which posts MPI_Comm_idup there: the caller does not block).
IallreduceWorker* worker_for(MPI_Comm comm) {
  State& s = state();
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    if (s.worker_keyval == MPI_KEYVAL_INVALID &&
        PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, stop_worker, &s.worker_keyval, nullptr) != MPI_SUCCESS)
      throw taihu::Error("MPI_Comm_create_keyval failed");
  }
  void* value = nullptr;
  int found = 0;
  PMPI_Comm_get_attr(comm, s.worker_keyval, &value, &found);
  if (found) return static_cast<IallreduceWorker*>(value);
  auto w = std::make_unique<IallreduceWorker>(comm);
  IallreduceWorker* raw = w.get();
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    s.workers.push_back(std::move(w));
  }
  if (PMPI_Comm_set_attr(comm, s.worker_keyval, raw) != MPI_SUCCESS) throw taihu::Error("MPI_Comm_set_attr failed");
  return raw;
}

}  // namespace

TAIHU_PMPI_EXPORT int MPI_Iallreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                                     MPI_Comm comm, MPI_Request* request) {
  long long bytes = 0;
  const std::string reason = pass_reason(true, sendbuf, recvbuf, count, datatype, op, comm, bytes);
  if (!reason.empty()) {
    if (reason != "internal" && reason != "MPI not initialized" && comm != MPI_COMM_NULL)
      log_path("MPI_Iallreduce", comm, datatype, op, count, "PMPI_Iallreduce (" + reason + ")");
    return PMPI_Iallreduce(sendbuf, recvbuf, count, datatype, op, comm, request);
  }
  if (!config().error.empty()) return report_error(comm, config().error);
  if (request == nullptr) return report_error(comm, "MPI_Iallreduce: null request pointer");
  try {
    // The worker logs the algorithm when it runs the call (TAIHU_VERBOSE).
    return worker_for(comm)->post(sendbuf, recvbuf, count, datatype, request);
  } catch (const std::exception& ex) {
    return report_error(comm, std::string("taihu MPI_Iallreduce failed: ") + ex.what());
  }
}

TAIHU_PMPI_EXPORT int MPI_Finalize(void) {
  State& s = state();
  int finalized = 0;
  PMPI_Finalized(&finalized);
  std::vector<std::unique_ptr<IallreduceWorker>> workers;
  if (!finalized) {
    {
      std::lock_guard<std::mutex> lock(s.mutex);
      workers.swap(s.workers);
    }
    // Every rank's workers finish what was posted and free their duplicates concurrently
    // (each collective only over its own duplicate), so the join order does not matter.
    for (auto& w : workers) w->request_stop();
    for (auto& w : workers) w->join();
    if (s.worker_keyval != MPI_KEYVAL_INVALID) PMPI_Comm_free_keyval(&s.worker_keyval);
  }
  if (!finalized && s.keyval != MPI_KEYVAL_INVALID) {
    // Newest first: the reverse of an order every rank agreed on (creation is collective).
    for (;;) {
      Entry* last = nullptr;
      {
        std::lock_guard<std::mutex> lock(s.mutex);
        if (s.entries.empty()) break;
        last = s.entries.back();
      }
      if (PMPI_Comm_delete_attr(last->user_comm, s.keyval) != MPI_SUCCESS) {
        std::lock_guard<std::mutex> lock(s.mutex);  // keep going; MPI frees the rest
        if (!s.entries.empty() && s.entries.back() == last) s.entries.pop_back();
      }
    }
    PMPI_Comm_free_keyval(&s.keyval);
    s.keyval = MPI_KEYVAL_INVALID;
  }
  // MPI_COMM_WORLD's attributes are deleted inside PMPI_Finalize (stop_worker on a joined
  // worker does nothing), so the worker objects go only after it.
  const int rc = PMPI_Finalize();
  workers.clear();
  return rc;
}

// For benchmarks: turn the taihu path on or off at run time (collectively, at the same
// point on every rank); returns the previous setting. Found with dlsym, so a program
// can also tell whether the preload is loaded.
TAIHU_PMPI_EXPORT int taihu_pmpi_set_enabled(int enabled) { return runtime_enabled.exchange(enabled != 0) ? 1 : 0; }
