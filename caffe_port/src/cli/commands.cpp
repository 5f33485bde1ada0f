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
#include "taihu/caffe/proto.hpp"
#include "taihu/caffe/rng.hpp"
#include "taihu/caffe/solver.hpp"
#if TAIHU_CAFFE_PARALLEL
#include <mpi.h>

#include "taihu/caffe/data_parallel.hpp"
#endif

namespace taihu::caffe::cli {

namespace {

// Caffe's CHECK_GT(FLAGS_x.size(), 0) << message.
void require_flag(const Args& a, const char* name, const char* caffe_message) {
  if (a.get(name).empty()) throw Error(std::string(caffe_message) + " (--" + name + "=...)");
}

// Caffe's get_gpus(): "all" or device ids separated by ','. An id that is not a
// non-negative integer is an error naming it (Caffe's boost::lexical_cast threw).
std::vector<int> parse_gpus(const std::string& flag, const arch::GpuQuery& q) {
  std::vector<int> ids;
  if (flag == "all") {
    for (const auto& d : q.devices) ids.push_back(d.index);
    return ids;
  }
  std::stringstream list(flag);
  std::string item;
  while (std::getline(list, item, ',')) {
    std::size_t used = 0;
    long id = -1;
    try {
      id = std::stol(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != item.size() || id < 0 || id > std::numeric_limits<int>::max()) {
      throw Error("--gpu=" + flag + ": '" + item + "' is not a device id (give N, a list N,M,... or all)");
    }
    ids.push_back(static_cast<int>(id));
  }
  if (ids.empty()) throw Error("--gpu=" + flag + ": no device id (give N, a list N,M,... or all)");
  return ids;
}

// taihu-caffe runs on the CPU: a --gpu request is checked like Caffe's, then one
// warning says the run falls back to the CPU. Returns true when --gpu was given.
bool gpu_falls_back_to_cpu(const Args& a, const char* command) {
  const std::string flag = a.get("gpu");
  if (flag.empty()) {
    log_info("Use CPU.");
    return false;
  }
  const arch::GpuQuery q = arch::query_gpus();
  parse_gpus(flag, q);
  log_warning("--gpu=" + flag + ": " +
              (q.devices.empty() ? "no GPU is usable (" + q.status + ")"
                                 : std::string("taihu-caffe ") + command + " has no CUDA path (" + q.status + ")") +
              "; running on the CPU");
  log_info("Use CPU.");
  return true;
}

// The NetState a net is built with: phase, --level, --stage (Caffe's Net(file, phase, level, &stages)).
proto::NetState net_state(const Args& a, proto::Phase phase) {
  proto::NetState state;
  state.set_phase(phase);
  state.set_level(static_cast<int>(a.get_int("level", 0)));
  for (const std::string& s : split_list(a.get("stage"))) state.add_stage(s);
  return state;
}

// Caffe's CopyLayers: each comma-separated .caffemodel in order into the train net and
// every test net (a test net may have layers with weights the train net lacks).
void copy_layers(Solver* solver, const std::string& model_list) {
  for (const std::string& w : split_list(model_list)) {
    log_info("Finetuning from " + w);
    solver->net().copy_trained_layers_from(w);
    if (solver->test_nets().empty()) continue;
    proto::NetParameter weights;
    read_binary(w, "caffemodel (NetParameter)", &weights);
    for (const auto& test_net : solver->test_nets()) {
      // Only the test net's own layers: the train net already reported the rest.
      proto::NetParameter mine;
      for (const auto& layer : weights.layer()) {
        if (test_net->layer_by_name(layer.name())) *mine.add_layer() = layer;
      }
      test_net->copy_trained_layers_from(mine);
    }
  }
}

std::string fmt(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

}  // namespace

int train(const Args& a) {
  a.allow("train", {"solver", "snapshot", "weights", "iterations", "gpu", "level", "stage", "sigint_effect",
                    "sighup_effect", "compress", "bucket_mb", "allreduce"});
  require_flag(a, "solver", "Need a solver definition to train.");
  if (!a.get("snapshot").empty() && !a.get("weights").empty()) {
    throw Error("Give a snapshot to resume training or weights to finetune but not both.");
  }
  const long max_iter = a.get_int("iterations", 0, 1, std::numeric_limits<int>::max());
  const SolverAction sigint_effect = parse_signal_effect(a.get("sigint_effect", "stop"), "sigint_effect");
  const SolverAction sighup_effect = parse_signal_effect(a.get("sighup_effect", "snapshot"), "sighup_effect");
  if (!a.get("gpu").empty() && a.get("gpu") != "all") parse_gpus(a.get("gpu"), {});  // bad ids before any file is read
  proto::SolverParameter sp = read_solver_param(a.get("solver"));
  if (a.has("iterations")) sp.set_max_iter(static_cast<int>(max_iter));
  // Caffe adds --stage to the solver's train_state and sets its level from --level
  // (here only when --level is given, so a train_state level in the solver stays).
  if (a.has("level")) sp.mutable_train_state()->set_level(static_cast<int>(a.get_int("level", 0)));
  for (const std::string& stage : split_list(a.get("stage"))) sp.mutable_train_state()->add_stage(stage);
  // One warning for a GPU request: --gpu's here, or the solver's for solver_mode: GPU.
  if (gpu_falls_back_to_cpu(a, "train")) sp.set_solver_mode(proto::SolverParameter::CPU);
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
  if (!a.get("weights").empty()) copy_layers(solver.get(), a.get("weights"));
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
  if (!a.get("snapshot").empty()) log_info("Resuming from " + a.get("snapshot"));
  log_info("Starting Optimization");
  solver->solve(a.get("snapshot"));
#if TAIHU_CAFFE_PARALLEL
  if (action_comm != MPI_COMM_NULL) MPI_Comm_free(&action_comm);
#endif
  return 0;
}

int test(const Args& a) {
  a.allow("test", {"model", "weights", "iterations", "gpu", "level", "stage"});
  require_flag(a, "model", "Need a model definition to score.");
  require_flag(a, "weights", "Need model weights to score.");
  // Caffe: CHECK_GT(FLAGS_iterations, 0); the means below divide by it.
  const long iters = a.get_int("iterations", 50, 1, std::numeric_limits<int>::max());
  gpu_falls_back_to_cpu(a, "test");
  Net net(read_net_param(a.get("model")), net_state(a, proto::TEST));
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
  a.allow("time", {"model", "iterations", "phase", "gpu", "level", "stage"});
  require_flag(a, "model", "Need a model definition to time.");
  const long iters = a.get_int("iterations", 50, 1, std::numeric_limits<int>::max());
  const std::string phase_name = a.get("phase", "TRAIN");
  if (phase_name != "TRAIN" && phase_name != "TEST") {
    throw Error("--phase=" + phase_name + ": phase must be \"TRAIN\" or \"TEST\"");
  }
  const proto::Phase phase = phase_name == "TEST" ? proto::TEST : proto::TRAIN;
  gpu_falls_back_to_cpu(a, "time");
  Net net(read_net_param(a.get("model")), net_state(a, phase));
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

// Caffe's device_query: "Querying GPUs <--gpu>", then Caffe::DeviceQuery()'s lines for
// each device. Without --gpu Caffe prints nothing more (taihu adds what it runs on); a
// device that cannot be used is an error, as in Caffe (CPU-only build: NO_GPU).
int device_query(const Args& a) {
  a.allow("device_query", {"gpu"});
  const std::string flag = a.get("gpu");
  log_info("Querying GPUs " + flag);
  const arch::GpuQuery q = arch::query_gpus();
  if (flag.empty()) {
    log_info("No device given (--gpu=N, N,M,... or all). CUDA: " + q.status + "; taihu-caffe runs on " +
             std::to_string(arch::num_threads()) + " CPU thread(s) (TAIHU_NUM_THREADS)");
    return 0;
  }
  const std::vector<int> ids = parse_gpus(flag, q);
  if (q.devices.empty()) {
    throw Error("--gpu=" + flag + ": Cannot use GPU in CPU-only Caffe: check mode. (CUDA: " + q.status +
                "; taihu-caffe runs on the CPU)");
  }
  for (int id : ids) {
    const auto it = std::find_if(q.devices.begin(), q.devices.end(), [id](const arch::GpuInfo& d) { return d.index == id; });
    if (it == q.devices.end()) throw Error("--gpu=" + flag + ": invalid device ordinal " + std::to_string(id) + " (" + q.status + ")");
    const arch::GpuInfo& d = *it;
    auto dims = [](const int (&v)[3]) { return std::to_string(v[0]) + ", " + std::to_string(v[1]) + ", " + std::to_string(v[2]); };
    log_info("Device id:                     " + std::to_string(d.index));
    log_info("Major revision number:         " + std::to_string(d.compute_major));
    log_info("Minor revision number:         " + std::to_string(d.compute_minor));
    log_info("Name:                          " + d.name);
    log_info("Total global memory:           " + std::to_string(d.memory_bytes));
    log_info("Total shared memory per block: " + std::to_string(d.shared_memory_per_block));
    log_info("Total registers per block:     " + std::to_string(d.registers_per_block));
    log_info("Warp size:                     " + std::to_string(d.warp_size));
    log_info("Maximum memory pitch:          " + std::to_string(d.memory_pitch));
    log_info("Maximum threads per block:     " + std::to_string(d.max_threads_per_block));
    log_info("Maximum dimension of block:    " + dims(d.max_block_dim));
    log_info("Maximum dimension of grid:     " + dims(d.max_grid_dim));
    log_info("Clock rate:                    " + std::to_string(d.clock_rate_khz));
    log_info("Total constant memory:         " + std::to_string(d.constant_memory));
    log_info("Texture alignment:             " + std::to_string(d.texture_alignment));
    log_info(std::string("Concurrent copy and execution: ") + (d.copy_compute_overlap ? "Yes" : "No"));
    log_info("Number of multiprocessors:     " + std::to_string(d.multiprocessors));
    log_info(std::string("Kernel execution timeout:      ") + (d.kernel_timeout ? "Yes" : "No"));
  }
  return 0;
}

}  // namespace taihu::caffe::cli
