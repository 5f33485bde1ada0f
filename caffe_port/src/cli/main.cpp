// taihu-caffe: Caffe's command-line trainer on taihu. `taihu-caffe help` lists the commands.
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>

#include "cli/commands.hpp"
#include "cli/mpi_session.hpp"
#include "taihu/arch/environment.hpp"

namespace {

const char* kUsage =
    "usage: taihu-caffe <command> [flags]\n"
    "commands:\n"
    "  train --solver=S [--snapshot=X.solverstate | --weights=W1.caffemodel[,W2...]] [--iterations=N]\n"
    "        [--sigint_effect=stop|snapshot|none (stop)] [--sighup_effect=stop|snapshot|none (snapshot)]\n"
    "        (stop: end after this iteration and write the final snapshot)\n"
    "        under mpirun -np P: data-parallel (batch_size per rank) [--compress=topk:0.01|threshold:T]\n"
    "        [--bucket_mb=25] [--allreduce=auto|ring|rabenseifner|shm|hierarchical|mpi]\n"
    "  test --model=M --weights=W [--iterations=50]\n"
    "  time --model=M [--iterations=50] [--phase=TRAIN|TEST]   per-layer forward/backward ms\n"
    "  train, test, time: [--level=N] [--stage=S1,S2...] (the NetState for include/exclude rules)\n"
    "        [--gpu=N|N,M,...|all] (accepted; taihu-caffe warns once and runs on the CPU)\n"
    "  convert_mnist IMAGES LABELS DB [--first=0] [--count=all]   IDX (gzip ok) to LMDB\n"
    "  make_digits IMAGES LABELS [--count=10000] [--seed=1]   synthetic digits as IDX\n"
    "  device_query [--gpu=N|N,M,...|all]   Caffe's device information for each device\n"
    "unknown flags and bad flag values are errors, as with Caffe's gflags\n"
    "environment: TAIHU_NUM_THREADS (threads), TAIHU_ISA, TAIHU_VERBOSE=1\n";

int run_command(const std::string& cmd, const taihu::caffe::cli::Args& a) {
  using namespace taihu::caffe::cli;
  if (cmd == "train") return train(a);
  if (cmd == "test") return test(a);
  if (cmd == "time") return time(a);
  if (cmd == "convert_mnist") return convert_mnist(a);
  if (cmd == "make_digits") return make_digits(a);
  if (cmd == "device_query") return device_query(a);
  // Caffe's GetBrewFunction: the available actions, then "Unknown action: <cmd>".
  std::fprintf(stderr, "taihu-caffe: Unknown action: %s (available: train, test, time, device_query, convert_mnist, "
               "make_digits)\n%s", cmd.c_str(), kUsage);
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace taihu::caffe::cli;
  if (argc < 2 || !std::strcmp(argv[1], "help") || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h")) {
    std::fputs(kUsage, argc < 2 ? stderr : stdout);
    return argc < 2 ? 1 : 0;
  }
  // As gflags, flags may come before or after the command: the command is the first
  // argument that is neither a flag nor a flag's value.
  Args args;
  try {
    args = parse_args(argc, argv, 1);
  } catch (const FlagError& e) {
    std::fprintf(stderr, "ERROR: %s\n", e.what());  // gflags' own words and exit status
    return 1;
  }
  if (args.has("help")) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  if (args.positional.empty()) {
    std::fprintf(stderr, "taihu-caffe: no command given\n%s", kUsage);
    return 1;
  }
  const std::string cmd = args.positional.front();
  args.positional.erase(args.positional.begin());
  std::string who;
  try {
    MpiSession mpi(&argc, &argv);
    if (mpi.size() > 1) who = " (rank " + std::to_string(mpi.rank()) + ")";
    int rc = 1;
    try {
      taihu::arch::check_environment();  // the library would warn and go on; a tool rejects
      rc = run_command(cmd, args);
    } catch (const FlagError& e) {
      std::fprintf(stderr, "ERROR: %s\n", e.what());
      rc = 1;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "taihu-caffe %s%s: error: %s\n", cmd.c_str(), who.c_str(), e.what());
      rc = 1;
    }
    return mpi.finish(rc);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "taihu-caffe %s: error: %s\n", cmd.c_str(), e.what());
    return 1;
  }
}
