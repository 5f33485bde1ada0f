// bench_autotune_transfer: does tuning transfer across shapes? Tunes a few ResNet-50
// convolution layers (3x3, stride 1, batch 1) into a log, then tunes a held-out ResNet
// layer repeatedly three ways -- from scratch (no log), with the log's nearest shapes'
// best schedules as seeds only, and with seeds plus the cost model trained on every
// record of the log (the default) -- and prints for each run the time and the trials
// until the best search median is within 95% of (a) the run's own final result and
// (b) the best final result of all runs of the layer. Each repetition runs the three
// ways in a rotated order (drift on a shared machine hits each alike). Also prints the
// Spearman correlation between the log-trained model's predictions and the measured
// times of the scratch runs' schedules (real measurements of the held-out layer).
//
//   bench_autotune_transfer [--budget 40s] [--source-budget 40s] [--reps 3] [--threads 1]
//                           [--source-log FILE (reused when it exists)] [--spec conv2d|gemm]
// The final confirmation is off (the whole budget searches); times are search medians.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "taihu/arch/error.hpp"
#include "taihu/autotune/cost_model.hpp"
#include "taihu/autotune/parser.hpp"
#include "taihu/autotune/transfer.hpp"
#include "taihu/autotune/tuner.hpp"

namespace ta = taihu::autotune;

namespace {

struct Layer {
  const char* name;
  const char* shape;
};
// ResNet-50's stride-1 3x3 convolutions (one per stage), batch 1; conv3_x is held out.
const std::vector<Layer> kConvSource = {{"conv2_x 64->64 56x56", "N=1,C=64,H=56,W=56,KO=64,R=3,S=3,P=1"},
                                        {"conv4_x 256->256 14x14", "N=1,C=256,H=14,W=14,KO=256,R=3,S=3,P=1"},
                                        {"conv5_x 512->512 7x7", "N=1,C=512,H=7,W=7,KO=512,R=3,S=3,P=1"}};
const Layer kConvNew = {"conv3_x 128->128 28x28", "N=1,C=128,H=28,W=28,KO=128,R=3,S=3,P=1"};
// The same layers' 1x1 projections as GEMMs (M = output channels, N = pixels, K = input channels).
const std::vector<Layer> kGemmSource = {{"conv2_x 1x1 64->256 56x56", "M=256,N=3136,K=64"},
                                        {"conv4_x 1x1 1024->256 14x14", "M=256,N=196,K=1024"},
                                        {"conv5_x 1x1 512->2048 7x7", "M=2048,N=49,K=512"}};
const Layer kGemmNew = {"conv3_x 1x1 128->512 28x28", "M=512,N=784,K=128"};

double parse_seconds(const std::string& flag, const std::string& v) {
  try {
    std::size_t used = 0;
    double x = std::stod(v, &used);
    const std::string unit = v.substr(used);
    if (unit == "m") x *= 60;
    else if (!unit.empty() && unit != "s") throw taihu::Error("");
    if (!(x > 0)) throw taihu::Error("");
    return x;
  } catch (const std::exception&) {
    throw taihu::Error(flag + ": '" + v + "' is not a duration (e.g. 40s, 2m, 90)");
  }
}

struct Run {
  std::string way;
  int rep = 0;
  std::vector<std::pair<double, double>> progress;  // (elapsed s, best s) at each improvement
  std::vector<std::pair<int, double>> trials;       // (trial, best s) at each improvement
  double final_s = 0;
  int total_trials = 0;
  ta::TuneResult result;
};

// First time / trial at which the best is within 95% of `reference` (throughput).
std::pair<double, int> time_to_95(const Run& r, double reference) {
  for (std::size_t i = 0; i < r.progress.size(); ++i)
    if (r.progress[i].second * 0.95 <= reference) return {r.progress[i].first, r.trials[i].first};
  return {NAN, -1};
}

}  // namespace

int main(int argc, char** argv) try {
  double budget = 40, source_budget = 40;
  int reps = 3, threads = 1;
  std::string source_log = "/tmp/taihu-transfer-source.jsonl", spec_name = "conv2d";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw taihu::Error(a + ": needs a value");
      return argv[++i];
    };
    if (a == "--budget") budget = parse_seconds(a, value());
    else if (a == "--source-budget") source_budget = parse_seconds(a, value());
    else if (a == "--reps") reps = std::stoi(value());
    else if (a == "--threads") threads = std::stoi(value());
    else if (a == "--source-log") source_log = value();
    else if (a == "--spec") spec_name = value();
    else throw taihu::Error("unknown argument '" + a + "' (see the comment at the top of bench_transfer.cpp)");
  }
  if (spec_name != "conv2d" && spec_name != "gemm") throw taihu::Error("--spec: '" + spec_name + "' (use conv2d or gemm)");
  if (reps < 1 || threads < 1) throw taihu::Error("--reps and --threads must be at least 1");
  const auto& sources = spec_name == "conv2d" ? kConvSource : kGemmSource;
  const Layer& fresh = spec_name == "conv2d" ? kConvNew : kGemmNew;
  const ta::Spec spec = ta::parse_spec_file(std::string(TAIHU_DSL_DIR) + "/" + spec_name + ".tdsl");

  ta::TuneOptions base;
  base.threads = threads;
  base.confirm_top = 0;
  if (!std::filesystem::exists(source_log)) {
    for (const Layer& l : sources) {
      ta::Problem p(spec, ta::parse_shape(l.shape));
      ta::Space s(p);
      ta::TuneOptions o = base;
      o.budget_s = source_budget;
      o.log_path = source_log;
      const ta::TuneResult r = ta::tune(p, s, o);
      std::printf("source %-28s %4d trials  best %.4f ms\n", l.name, r.trials, r.best_s * 1e3);
      std::fflush(stdout);
    }
  } else {
    std::printf("source log %s exists: reused\n", source_log.c_str());
  }

  ta::Problem p(spec, ta::parse_shape(fresh.shape));
  ta::Space s(p);
  const std::vector<std::string> ways = {"scratch", "seeds only", "seeds + model"};
  std::vector<Run> runs;
  for (int rep = 0; rep < reps; ++rep)
    for (std::size_t k = 0; k < ways.size(); ++k) {
      Run run;
      run.way = ways[(k + static_cast<std::size_t>(rep)) % ways.size()];
      run.rep = rep;
      ta::TuneOptions o = base;
      o.budget_s = budget;
      o.seed = static_cast<std::uint64_t>(rep + 1);
      const std::string copy = source_log + ".run." + std::to_string(::getpid());
      if (run.way != "scratch") {
        std::filesystem::copy_file(source_log, copy, std::filesystem::copy_options::overwrite_existing);
        o.log_path = copy;
        o.transfer_model = run.way == "seeds + model";
      }
      double best = INFINITY;
      o.on_progress = [&](const ta::Progress& pr) {
        if (pr.best_s > 0 && pr.best_s < best) {
          best = pr.best_s;
          run.progress.emplace_back(pr.elapsed_s, best);
          run.trials.emplace_back(pr.trial, best);
        }
      };
      run.result = ta::tune(p, s, o);
      std::filesystem::remove(copy);
      run.final_s = run.result.best_s;
      run.total_trials = run.result.trials;
      std::printf("rep %d %-14s %4d trials  final %.4f ms\n", rep + 1, run.way.c_str(), run.total_trials, run.final_s * 1e3);
      std::fflush(stdout);
      runs.push_back(std::move(run));
    }

  double overall = INFINITY;
  for (const Run& r : runs) overall = std::min(overall, r.final_s);
  std::printf("\n%s, new layer %s (%s), %d thread(s), budget %.0f s per run; best final of all runs %.4f ms\n", spec_name.c_str(),
              fresh.name, fresh.shape, threads, budget, overall * 1e3);
  std::printf("%-4s %-14s %10s %14s %10s %20s %20s\n", "rep", "way", "final ms", "first ms", "trials", "to 95% own (s/tr)", "to 95% best (s/tr)");
  for (const std::string& way : ways)
    for (const Run& r : runs) {
      if (r.way != way) continue;
      const auto own = time_to_95(r, r.final_s), all = time_to_95(r, overall);
      char a[32], b[32];
      std::snprintf(a, sizeof a, "%.1f / %d", own.first, own.second);
      if (all.second < 0) std::snprintf(b, sizeof b, "not reached");
      else std::snprintf(b, sizeof b, "%.1f / %d", all.first, all.second);
      std::printf("%-4d %-14s %10.4f %14.4f %10d %20s %20s\n", r.rep + 1, r.way.c_str(), r.final_s * 1e3,
                  r.progress.empty() ? 0.0 : r.progress.front().second * 1e3, r.total_trials, a, b);
    }

  // The log-trained model against the held-out layer's real measurements (scratch runs).
  const ta::Record key = ta::record_for(p, base);
  const ta::TransferFeatures features(p, s, threads);
  const auto samples = ta::transfer_samples(p, s, features, key, ta::load_log(source_log));
  std::vector<std::vector<double>> x;
  std::vector<double> y, w;
  for (const auto& smp : samples) x.push_back(smp.x), y.push_back(smp.y), w.push_back(smp.weight);
  ta::CostModel model;
  if (!x.empty()) model.fit(x, y, w);
  std::vector<double> predicted, measured;
  for (const Run& r : runs) {
    if (r.way != "scratch") continue;
    for (std::size_t i = 0; i < r.result.records.size(); ++i)
      if (r.result.records[i].ok && r.result.records[i].repeats > 1) {
        predicted.push_back(model.trained() ? model.predict(features(p, s, r.result.measured[i])) : 0.0);
        measured.push_back(r.result.records[i].median_s);
      }
  }
  if (model.trained() && predicted.size() >= 3)
    std::printf("\nSpearman(model trained on the %zu records of the other layers, measured times of %zu fully measured schedules "
                "of the new layer) = %.3f\n",
                samples.size(), measured.size(), ta::spearman(predicted, measured));
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "bench_autotune_transfer: %s\n", e.what());
  return 1;
}
