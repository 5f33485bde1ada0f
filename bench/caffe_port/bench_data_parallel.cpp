// bench_data_parallel: taihu-caffe data-parallel training throughput (images/s) of
// LeNet on synthetic digits, P ranks x 1 thread (taihu::caffe::DataParallel: sharded
// data, bucketed allreduce overlapped with backward) against the anchor 1 rank x P
// threads with the same total batch, in the same mpirun so host noise hits both.
//   OMP_NUM_THREADS=1 mpirun -np 2 --bind-to none bench_data_parallel
//       [--batch 32 (per rank)] [--iters 60] [--rounds 5] [--compress topk:0.01]
//       [--threads P (anchor threads)] [--bucket_kb 25600] [--csv FILE]
// A round = one anchor run (rank 0 alone with P threads, the other ranks asleep in a
// polled barrier so they take no CPU) and one data-parallel run (all ranks, 1 thread),
// in alternating order; each run's time is the slowest rank's, after 5 warm-up
// iterations; a first warm-up round is discarded. The median images/s over the rounds
// are reported with ratio = data-parallel / anchor (target >= 0.9).
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "taihu/arch/error.hpp"
#include "taihu/arch/threads.hpp"
#include "taihu/arch/timer.hpp"
#include "taihu/caffe/data_parallel.hpp"
#include "taihu/caffe/data_shard.hpp"
#include "taihu/caffe/data_sources.hpp"
#include "taihu/caffe/log.hpp"
#include "taihu/caffe/solver.hpp"

namespace tc = taihu::caffe;

namespace {

struct Args {
  int batch = 32, iters = 60, rounds = 5, threads = 0, bucket_kb = 25 * 1024;
  std::string compress = "none", csv;
};

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string k = argv[i];
    if (i + 1 >= argc) throw taihu::Error("bench_data_parallel: " + k + " needs a value");
    const std::string v = argv[++i];
    if (k == "--batch") a.batch = std::stoi(v);
    else if (k == "--iters") a.iters = std::stoi(v);
    else if (k == "--rounds") a.rounds = std::stoi(v);
    else if (k == "--threads") a.threads = std::stoi(v);
    else if (k == "--compress") a.compress = v;
    else if (k == "--bucket_kb") a.bucket_kb = std::stoi(v);
    else if (k == "--csv") a.csv = v;
    else throw taihu::Error("bench_data_parallel: unknown flag " + k);
  }
  if (a.batch < 1 || a.iters < 1 || a.rounds < 1 || a.bucket_kb < 1) {
    throw taihu::Error("bench_data_parallel: --batch, --iters, --rounds, --bucket_kb must be >= 1");
  }
  return a;
}

// Caffe's LeNet (examples/caffe/lenet_train_test.prototxt) on a FileData source.
std::string lenet(const std::string& dir, int batch) {
  return R"(
    name: 'LeNet'
    layer { name: 'mnist' type: 'FileData' top: 'data' top: 'label' include { phase: TRAIN }
            transform_param { scale: 0.00390625 }
            file_data_param { source: ')" + dir + "/img.gz' label_source: '" + dir + "/lab.gz' batch_size: " +
         std::to_string(batch) + R"( shuffle: true } }
    layer { name: 'conv1' type: 'Convolution' bottom: 'data' top: 'conv1' param { lr_mult: 1 } param { lr_mult: 2 }
            convolution_param { num_output: 20 kernel_size: 5 stride: 1 weight_filler { type: 'xavier' } bias_filler { type: 'constant' } } }
    layer { name: 'pool1' type: 'Pooling' bottom: 'conv1' top: 'pool1' pooling_param { pool: MAX kernel_size: 2 stride: 2 } }
    layer { name: 'conv2' type: 'Convolution' bottom: 'pool1' top: 'conv2' param { lr_mult: 1 } param { lr_mult: 2 }
            convolution_param { num_output: 50 kernel_size: 5 stride: 1 weight_filler { type: 'xavier' } bias_filler { type: 'constant' } } }
    layer { name: 'pool2' type: 'Pooling' bottom: 'conv2' top: 'pool2' pooling_param { pool: MAX kernel_size: 2 stride: 2 } }
    layer { name: 'ip1' type: 'InnerProduct' bottom: 'pool2' top: 'ip1' param { lr_mult: 1 } param { lr_mult: 2 }
            inner_product_param { num_output: 500 weight_filler { type: 'xavier' } bias_filler { type: 'constant' } } }
    layer { name: 'relu1' type: 'ReLU' bottom: 'ip1' top: 'ip1' }
    layer { name: 'ip2' type: 'InnerProduct' bottom: 'ip1' top: 'ip2' param { lr_mult: 1 } param { lr_mult: 2 }
            inner_product_param { num_output: 10 weight_filler { type: 'xavier' } bias_filler { type: 'constant' } } }
    layer { name: 'loss' type: 'SoftmaxWithLoss' bottom: 'ip2' bottom: 'label' top: 'loss' }
  )";
}

tc::proto::SolverParameter solver_param(const std::string& dir, int batch) {
  tc::proto::SolverParameter sp;
  tc::parse_text("base_lr: 0.01 momentum: 0.9 weight_decay: 0.0005 lr_policy: 'inv' gamma: 0.0001 power: 0.75 "
                 "max_iter: 100000 display: 0 random_seed: 1",
                 "<bench solver>", &sp);
  tc::parse_text(lenet(dir, batch), "<bench net>", sp.mutable_net_param());
  return sp;
}

// A barrier that sleeps while it waits, so parked ranks leave the cores to the anchor.
void sleepy_barrier(MPI_Comm comm) {
  MPI_Request r;
  MPI_Ibarrier(comm, &r);
  int done = 0;
  while (MPI_Test(&r, &done, MPI_STATUS_IGNORE), !done) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

double slowest(double seconds) {
  double worst = 0;
  MPI_Allreduce(&seconds, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return worst;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int rc = 0;
  try {
    const Args a = parse(argc, argv);
    const int anchor_threads = a.threads > 0 ? a.threads : size;
    tc::set_log_sink([](const std::string&) {});
    const std::string dir = (std::filesystem::temp_directory_path() / ("taihu-bench-dp-" + std::to_string(rank))).string();
    std::filesystem::create_directories(dir);
    const tc::ImageSet set = tc::synthetic_digits(6000, 1);
    tc::write_idx_images(dir + "/img.gz", set);
    tc::write_idx_labels(dir + "/lab.gz", set);
    const int total = a.batch * size, warm = 5;
    std::vector<double> anchor_ips, dp_ips;
    int buckets = 0, overlapped = 0;
    auto run_anchor = [&] {  // rank 0 alone, P threads, batch P*b
      double t = 0;
      if (rank == 0) {
        taihu::arch::set_num_threads(anchor_threads);
        tc::set_train_data_shard({0, 1});
        auto s = tc::create_solver(solver_param(dir, total));
        s->step(warm);
        taihu::arch::Stopwatch w;
        s->step(a.iters);
        t = w.seconds();
      }
      sleepy_barrier(MPI_COMM_WORLD);
      return total * a.iters / slowest(t);
    };
    auto run_parallel = [&] {  // every rank, 1 thread, batch b
      taihu::arch::set_num_threads(1);
      tc::proto::SolverParameter sp = solver_param(dir, a.batch);
      tc::prepare_data_parallel(MPI_COMM_WORLD, &sp);
      auto s = tc::create_solver(sp);
      tc::DataParallelOptions o;
      o.compression = tc::parse_compression(a.compress, "--compress");
      o.bucket_bytes = static_cast<std::size_t>(a.bucket_kb) << 10;
      tc::DataParallel dp(*s, MPI_COMM_WORLD, o);
      s->step(warm);
      MPI_Barrier(MPI_COMM_WORLD);
      taihu::arch::Stopwatch w;
      s->step(a.iters);
      const double ips = total * a.iters / slowest(w.seconds());
      dp.verify_weights("bench weights");
      buckets = dp.bucket_count();
      overlapped = dp.buckets_started_before_wait();
      tc::set_train_data_shard({0, 1});
      return ips;
    };
    // Round 0 warms both up and is discarded; the order alternates between rounds.
    for (int round = 0; round <= a.rounds; ++round) {
      double an = 0, dpv = 0;
      if (round % 2 == 0) {
        an = run_anchor();
        dpv = run_parallel();
      } else {
        dpv = run_parallel();
        an = run_anchor();
      }
      if (round == 0) continue;
      anchor_ips.push_back(an);
      dp_ips.push_back(dpv);
    }
    if (rank == 0) {
      const double an = median(anchor_ips), dpm = median(dp_ips);
      std::printf("LeNet training, total batch %d, %d iterations x %d rounds (median), compression %s\n", total, a.iters,
                  a.rounds, a.compress.c_str());
      std::printf("%-34s %12s\n", "configuration", "images/s");
      std::printf("%-34s %12.0f\n", ("anchor: 1 rank x " + std::to_string(anchor_threads) + " threads").c_str(), an);
      std::printf("%-34s %12.0f\n", ("data parallel: " + std::to_string(size) + " ranks x 1 thread").c_str(), dpm);
      std::printf("ratio (data parallel / anchor): %.2fx   buckets %d (%d started before backward ended)\n", dpm / an,
                  buckets, overlapped);
      std::printf("rounds anchor:");
      for (double v : anchor_ips) std::printf(" %.0f", v);
      std::printf("\nrounds data parallel:");
      for (double v : dp_ips) std::printf(" %.0f", v);
      std::printf("\n");
      if (!a.csv.empty()) {
        std::ofstream f(a.csv);
        f << "ranks,total_batch,anchor_images_per_s,dp_images_per_s,ratio\n"
          << size << ',' << total << ',' << an << ',' << dpm << ',' << dpm / an << '\n';
      }
    }
    std::filesystem::remove_all(dir);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_data_parallel (rank %d): %s\n", rank, e.what());
    rc = 1;
  }
  if (rc != 0 && size > 1) MPI_Abort(MPI_COMM_WORLD, rc);
  MPI_Finalize();
  return rc;
}
