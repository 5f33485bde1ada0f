// The taihu-caffe commands. See cli/commands.hpp.
#include "cli/commands.hpp"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <sstream>

#include "cli/signal_actions.hpp"
#include "taihu/arch/error.hpp"
#include "taihu/arch/gpu.hpp"
#include "taihu/arch/threads.hpp"
#include "taihu/arch/timer.hpp"
#include "taihu/caffe/data_sources.hpp"
#include "taihu/caffe/log.hpp"
#include "taihu/caffe/net.hpp"
#include "taihu/caffe/rng.hpp"
#include "taihu/caffe/solver.hpp"
#if TAIHU_CAFFE_PARALLEL
#include <mpi.h>

#include "taihu/caffe/data_parallel.hpp"
#endif

namespace taihu::caffe::cli {

std::string Args::get(const std::string& name, const std::string& fallback) const {
  auto it = flags.find(name);
  return it == flags.end() ? fallback : it->second;
}

long Args::get_int(const std::string& name, long fallback) const {
  auto it = flags.find(name);
  if (it == flags.end()) return fallback;
  try {
    std::size_t used = 0;
    const long v = std::stol(it->second, &used);
    if (used == it->second.size()) return v;
  } catch (const std::exception&) {
  }
  throw Error("--" + name + "=" + it->second + ": not an integer");
}

long Args::get_int(const std::string& name, long fallback, long lo, long hi) const {
  if (!has(name)) return fallback;  // the command's own default
  const long v = get_int(name, fallback);
  if (v < lo || v > hi) {
    throw Error("--" + name + "=" + get(name) + ": must be " +
                (hi == std::numeric_limits<long>::max() ? ">= " + std::to_string(lo)
                                                        : "in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]"));
  }
  return v;
}

namespace {

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

}  // namespace

void Args::allow(const char* command, std::initializer_list<const char*> known, bool takes_positional) const {
  for (const auto& [name, value] : flags) {
    if (std::any_of(known.begin(), known.end(), [&](const char* k) { return name == k; })) continue;
    std::string msg = "unknown command line flag '" + name + "'";
    const char* nearest = nullptr;
    std::size_t best = 3;  // a hint only for a likely typo
    for (const char* k : known) {
      const std::size_t d = edit_distance(name, k);
      if (d < best) best = d, nearest = k;
    }
    if (nearest) msg += " (did you mean --" + std::string(nearest) + "?)";
    throw Error(msg + "; `taihu-caffe help` lists the flags of " + command);
  }
  if (!takes_positional && !positional.empty()) {
    throw Error(std::string(command) + " takes no positional arguments (got '" + positional.front() + "')");
  }
}

Args parse_args(int argc, char** argv, int first) {
  Args a;
  for (int i = first; i < argc; ++i) {
    std::string s = argv[i];
    if (s.size() > 1 && s[0] == '-') {
      s = s.substr(s[1] == '-' ? 2 : 1);
      const auto eq = s.find('=');
      if (eq != std::string::npos) {
        a.flags[s.substr(0, eq)] = s.substr(eq + 1);
      } else if (i + 1 < argc && argv[i + 1][0] != '-') {
        a.flags[s] = argv[++i];
      } else {
        a.flags[s] = "true";
      }
    } else {
      a.positional.push_back(s);
    }
  }
  return a;
}

namespace {

void require_flag(const Args& a, const char* name, const char* command) {
  if (!a.has(name)) throw Error(std::string(command) + " needs --" + name + "=...");
}

std::string fmt(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

}  // namespace

int train(const Args& a) {
  a.allow("train", {"solver", "snapshot", "weights", "iterations", "compress", "bucket_mb", "allreduce", "sigint_effect",
                    "sighup_effect"});
  require_flag(a, "solver", "train");
  if (a.has("snapshot") && a.has("weights")) throw Error("give --snapshot or --weights, not both");
  const long max_iter = a.get_int("iterations", 0, 1, std::numeric_limits<int>::max());
  const SolverAction sigint_effect = parse_signal_effect(a.get("sigint_effect", "stop"), "sigint_effect");
  const SolverAction sighup_effect = parse_signal_effect(a.get("sighup_effect", "snapshot"), "sighup_effect");
  proto::SolverParameter sp = read_solver_param(a.get("solver"));
  if (a.has("iterations")) sp.set_max_iter(static_cast<int>(max_iter));
  log_info("Using " + std::to_string(arch::num_threads()) + " CPU thread(s) (TAIHU_NUM_THREADS)");
  int mpi_ranks = 1;
#if TAIHU_CAFFE_PARALLEL
  int mpi_on = 0;
  MPI_Initialized(&mpi_on);
  if (mpi_on) MPI_Comm_size(MPI_COMM_WORLD, &mpi_ranks);
  DataParallelOptions dp_options;
  if (mpi_ranks > 1) {
    dp_options.compression = parse_compression(a.get("compress", "none"), "--compress");
    const long mb = a.get_int("bucket_mb", 25, 1, 1L << 20);
    dp_options.bucket_bytes = static_cast<std::size_t>(mb) << 20;
    if (a.has("allreduce")) dp_options.comm.algorithm = comm::parse_algorithm(a.get("allreduce"), "--allreduce");
    prepare_data_parallel(MPI_COMM_WORLD, &sp);
  }
#endif
  if (mpi_ranks == 1 && (a.has("compress") || a.has("bucket_mb") || a.has("allreduce"))) {
    log_warning("--compress, --bucket_mb and --allreduce apply only to data-parallel runs (mpirun -np P, P > 1)");
  }
  auto solver = create_solver(sp);
  solver->set_progress(true);
  if (a.has("weights")) {
    std::stringstream list(a.get("weights"));
    std::string w;
    while (std::getline(list, w, ',')) {
      log_info("Finetuning from " + w);
      solver->net().copy_trained_layers_from(w);
    }
  }
#if TAIHU_CAFFE_PARALLEL
  std::unique_ptr<DataParallel> parallel;
  if (mpi_ranks > 1) parallel = std::make_unique<DataParallel>(*solver, MPI_COMM_WORLD, dp_options);
#endif
  SignalActions signals(sigint_effect, sighup_effect);
  std::function<SolverAction()> action = [&signals] { return signals.take(); };
#if TAIHU_CAFFE_PARALLEL
  // Every rank must take the same action at the same iteration: the strongest request
  // of any rank wins, agreed on a communicator of its own (the gradients use WORLD).
  MPI_Comm action_comm = MPI_COMM_NULL;
  if (mpi_ranks > 1) {
    MPI_Comm_dup(MPI_COMM_WORLD, &action_comm);
    action = [&signals, action_comm] {
      int request = static_cast<int>(signals.take());
      MPI_Allreduce(MPI_IN_PLACE, &request, 1, MPI_INT, MPI_MAX, action_comm);
      return static_cast<SolverAction>(request);
    };
  }
#endif
  solver->set_action_function(action);
  solver->solve(a.get("snapshot"));
#if TAIHU_CAFFE_PARALLEL
  if (action_comm != MPI_COMM_NULL) MPI_Comm_free(&action_comm);
#endif
  return 0;
}

int test(const Args& a) {
  a.allow("test", {"model", "weights", "iterations"});
  require_flag(a, "model", "test");
  require_flag(a, "weights", "test");
  // Caffe: CHECK_GT(FLAGS_iterations, 0); the means below divide by it.
  const long iters = a.get_int("iterations", 50, 1, std::numeric_limits<int>::max());
  Net net(read_net_param(a.get("model")), proto::TEST);
  net.copy_trained_layers_from(a.get("weights"));
  log_info("Running for " + std::to_string(iters) + " iterations.");
  std::size_t outputs = 0;
  for (const Blob* b : net.output_blobs()) outputs += static_cast<std::size_t>(b->count());
  std::vector<double> scores(outputs, 0.0);  // sized once: a reshaping net cannot index past it
  double loss = 0;
  for (long i = 0; i < iters; ++i) {
    loss += net.forward();
    std::size_t k = 0;
    for (std::size_t j = 0; j < net.output_blobs().size(); ++j) {
      const Blob* b = net.output_blobs()[j];
      const std::string& name = net.blob_names()[static_cast<std::size_t>(net.output_blob_indices()[j])];
      for (std::int64_t e = 0; e < b->count() && k < scores.size(); ++e, ++k) {
        scores[k] += b->data()[e];
        log_info("Batch " + std::to_string(i) + ", " + name + " = " + fmt(b->data()[e]));
      }
    }
  }
  log_info("Loss: " + fmt(loss / static_cast<double>(iters)));
  std::size_t k = 0;
  for (std::size_t j = 0; j < net.output_blobs().size(); ++j) {
    const std::string& name = net.blob_names()[static_cast<std::size_t>(net.output_blob_indices()[j])];
    const float w = net.output_loss_weight(static_cast<int>(j));
    for (std::int64_t e = 0; e < net.output_blobs()[j]->count() && k < scores.size(); ++e, ++k) {
      const double mean = scores[k] / static_cast<double>(iters);
      std::string line = name + " = " + fmt(mean);
      if (w != 0.f) line += " (* " + fmt(w) + " = " + fmt(w * mean) + " loss)";
      log_info(line);
    }
  }
  return 0;
}

int time(const Args& a) {
  a.allow("time", {"model", "iterations", "phase"});
  require_flag(a, "model", "time");
  const long iters = a.get_int("iterations", 50, 1, std::numeric_limits<int>::max());
  const std::string phase_name = a.get("phase", "TRAIN");
  if (phase_name != "TRAIN" && phase_name != "TEST") throw Error("--phase=" + phase_name + ": must be TRAIN or TEST");
  const proto::Phase phase = phase_name == "TEST" ? proto::TEST : proto::TRAIN;
  Net net(read_net_param(a.get("model")), phase);
  // Inputs of deploy nets hold random values so every layer does real work.
  for (int i = 0; i < net.num_layers(); ++i) {
    if (std::string(net.layers()[static_cast<std::size_t>(i)]->type()) != "Input") continue;
    std::uniform_real_distribution<float> u(-1.f, 1.f);
    for (Blob* b : net.top_vecs()[static_cast<std::size_t>(i)]) {
      for (std::int64_t e = 0; e < b->count(); ++e) b->mutable_data()[e] = u(process_rng());
    }
  }
  log_info("Performing Forward");
  log_info("Initial loss: " + fmt(net.forward()));
  log_info("Performing Backward");
  net.backward();
  const auto n = static_cast<std::size_t>(net.num_layers());
  std::vector<double> fwd(n, 0), bwd(n, 0);
  double fwd_total = 0, bwd_total = 0, iter_total = 0;
  log_info("*** Benchmark begins ***");
  log_info("Testing for " + std::to_string(iters) + " iterations.");
  for (long it = 0; it < iters; ++it) {
    arch::Stopwatch iter_timer;
    for (std::size_t i = 0; i < n; ++i) {
      arch::Stopwatch t;
      net.forward_layer(static_cast<int>(i));
      fwd[i] += t.seconds() * 1e3;
    }
    arch::Stopwatch ft;
    for (std::size_t i = n; i-- > 0;) {
      arch::Stopwatch t;
      net.backward_layer(static_cast<int>(i));
      bwd[i] += t.seconds() * 1e3;
    }
    bwd_total += ft.seconds() * 1e3;
    const double ms = iter_timer.seconds() * 1e3;
    iter_total += ms;
    log_info("Iteration: " + std::to_string(it + 1) + " forward-backward time: " + fmt(ms) + " ms.");
  }
  for (std::size_t i = 0; i < n; ++i) fwd_total += fwd[i];
  log_info("Average time per layer: ");
  for (std::size_t i = 0; i < n; ++i) {
    char line[256];
    std::snprintf(line, sizeof line, "%10s\tforward: %g ms.", net.layer_names()[i].c_str(), fwd[i] / static_cast<double>(iters));
    log_info(line);
    std::snprintf(line, sizeof line, "%10s\tbackward: %g ms.", net.layer_names()[i].c_str(), bwd[i] / static_cast<double>(iters));
    log_info(line);
  }
  log_info("Average Forward pass: " + fmt(fwd_total / static_cast<double>(iters)) + " ms.");
  log_info("Average Backward pass: " + fmt(bwd_total / static_cast<double>(iters)) + " ms.");
  log_info("Average Forward-Backward: " + fmt(iter_total / static_cast<double>(iters)) + " ms.");
  log_info("*** Benchmark ends ***");
  return 0;
}

int convert_mnist(const Args& a) {
  a.allow("convert_mnist", {"first", "count", "backend"}, true);
  if (a.positional.size() != 3) throw Error("convert_mnist needs IMAGES LABELS DB (got " + std::to_string(a.positional.size()) + " arguments)");
  if (a.has("backend") && a.get("backend") != "lmdb") throw Error("--backend=" + a.get("backend") + ": only lmdb is supported");
  const ImageSet set = read_idx(a.positional[0], a.positional[1]);
  const auto first = static_cast<std::size_t>(a.get_int("first", 0, 0, std::numeric_limits<long>::max()));
  if (first > set.count()) throw Error("--first=" + std::to_string(first) + " is past the " + std::to_string(set.count()) + " images");
  const auto count = static_cast<std::size_t>(
      a.get_int("count", static_cast<long>(set.count() - first), 0, static_cast<long>(set.count() - first)));
  log_info("A total of " + std::to_string(set.count()) + " items.");
  log_info("Rows: " + std::to_string(set.height) + " Cols: " + std::to_string(set.width));
  write_lmdb(set, first, count, a.positional[2]);
  log_info("Processed " + std::to_string(count) + " files.");
  return 0;
}

int make_digits(const Args& a) {
  a.allow("make_digits", {"count", "seed"}, true);
  if (a.positional.size() != 2) throw Error("make_digits needs IMAGES LABELS output paths (.gz for gzip)");
  const long count = a.get_int("count", 10000, 1, std::numeric_limits<std::uint32_t>::max());
  const ImageSet set = synthetic_digits(static_cast<std::size_t>(count), static_cast<std::uint64_t>(a.get_int("seed", 1)));
  write_idx_images(a.positional[0], set);
  write_idx_labels(a.positional[1], set);
  log_info("Wrote " + std::to_string(count) + " synthetic digits to " + a.positional[0] + " and " + a.positional[1]);
  return 0;
}

int device_query(const Args& a) {
  a.allow("device_query", {});
  log_info("CPU threads: " + std::to_string(arch::num_threads()) + " (TAIHU_NUM_THREADS)");
  const arch::GpuQuery q = arch::query_gpus();
  log_info("CUDA: " + q.status);
  for (const auto& d : q.devices) {
    log_info("Device id:                     " + std::to_string(d.index));
    log_info("Name:                          " + d.name);
    log_info("Major revision number:         " + std::to_string(d.compute_major));
    log_info("Minor revision number:         " + std::to_string(d.compute_minor));
    log_info("Total global memory:           " + std::to_string(d.memory_bytes));
    log_info("Number of multiprocessors:     " + std::to_string(d.multiprocessors));
  }
  return 0;
}

}  // namespace taihu::caffe::cli
