// The small-message table of the calibration (calibration.hpp): at 4, 16, 64, ...
// kSmallCalibrationMax bytes, every candidate allreduce runs through this communicator's
// own dispatch, interleaved round by round (the order rotating) so host noise hits all
// alike; each sample is a stream of calls (256 KiB / size, 2..16) of which the second
// half is timed, as a program's back-to-back calls run. The MPI library's MPI_Allreduce is the reference and keeps the size unless
// another candidate beats it in >= 9 of 11 rounds (a sign test: 3% by chance when they
// are equal) with a median >= 10% lower; of those, the lowest median wins. Small
// messages cost scheduling and shaper bursts that the alpha-beta model of a bandwidth
// probe does not see, and on a loaded host one call varies 10x: a plain fastest-median
// rule picked Rabenseifner at 1 KiB on the namespace cluster, which then ran 0.5-0.6x
// MPI_Allreduce; the paired rule keeps such coin tosses with the library's default.
#include <algorithm>
#include <sstream>
#include <vector>

#include "communicator_impl.hpp"
#include "taihu/arch/log.hpp"
#include "taihu/arch/timer.hpp"

namespace taihu::comm {

namespace {
double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}
}  // namespace

std::vector<MeasuredChoice> Communicator::Impl::measure_small_messages() {
  constexpr int kRounds = 11;       // odd: a true median
  constexpr int kMinWins = 9;       // rounds a candidate must beat MPI_Allreduce in
  constexpr std::size_t kDrainBytes = 256 * 1024;  // calls per sample: this / size, 2..16
  constexpr double kMargin = 0.9;   // and its median must be >= 10% lower
  std::vector<MeasuredChoice> table;
  if (size < 2) return table;
  std::vector<std::size_t> sizes;
  for (std::size_t b = 4; b <= kSmallCalibrationMax; b *= 4) sizes.push_back(b);
  // Candidates per size: the library's default first (the reference), then taihu's.
  std::vector<std::vector<Algorithm>> candidates(sizes.size());
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    std::vector<Algorithm>& c = candidates[i];
    c = {Algorithm::mpi, Algorithm::recursive_doubling, Algorithm::rabenseifner,
         layout.nodes() == 1 ? Algorithm::shared_memory : Algorithm::hierarchical};
    const Algorithm model_pick = model.choose(layout, sizes[i]).algorithm;
    if (std::find(c.begin(), c.end(), model_pick) == c.end()) c.push_back(model_pick);
  }
  std::vector<float> data(kSmallCalibrationMax / sizeof(float));
  struct Quiet {  // the forced runs are not the program's choices: run() logs none
    bool& flag;
    explicit Quiet(bool& f) : flag(f) { flag = true; }
    ~Quiet() { flag = false; }
  } quiet(measuring);
  std::vector<std::vector<std::vector<double>>> times(sizes.size());
  for (std::size_t i = 0; i < sizes.size(); ++i) times[i].resize(candidates[i].size());
  for (int round = 0; round < kRounds; ++round)
    for (std::size_t i = 0; i < sizes.size(); ++i)
      for (std::size_t j = 0; j < candidates[i].size(); ++j) {
        const std::size_t k = (j + static_cast<std::size_t>(round)) % candidates[i].size();
        const std::size_t count = sizes[i] / sizeof(float);
        std::fill(data.begin(), data.begin() + static_cast<std::ptrdiff_t>(count), 1.0f);
        // Back to back, only the second half timed: the first half drains what a pause
        // refilled (a link shaper's burst: 16 KiB recursive doubling timed alone crossed
        // the namespace cluster's uplink in the burst, then ran 0.28x MPI_Allreduce in a
        // steady stream of calls).
        const int calls = static_cast<int>(std::clamp<std::size_t>(kDrainBytes / sizes[i], 2, 16));
        MPI_Barrier(world);
        for (int c = 0; c < calls / 2; ++c) run(data.data(), count, Op::sum, candidates[i][k]);
        const double t0 = arch::now_seconds();
        for (int c = calls / 2; c < calls; ++c) run(data.data(), count, Op::sum, candidates[i][k]);
        double t = (arch::now_seconds() - t0) / (calls - calls / 2), slowest = 0;
        MPI_Allreduce(&t, &slowest, 1, MPI_DOUBLE, MPI_MAX, world);
        times[i][k].push_back(slowest);
      }
  // Every rank holds the same slowest-rank times, so every rank picks alike.
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    const double reference = median(times[i][0]);
    MeasuredChoice best{sizes[i], Algorithm::mpi, reference};
    for (std::size_t k = 1; k < candidates[i].size(); ++k) {
      int wins = 0;
      for (int round = 0; round < kRounds; ++round) wins += times[i][k][round] < times[i][0][round] ? 1 : 0;
      if (const double t = median(times[i][k]); wins >= kMinWins && t < kMargin * reference && t < best.seconds)
        best = {sizes[i], candidates[i][k], t};
    }
    best.seconds = std::clamp(best.seconds, 1e-9, 1.0);
    table.push_back(best);
    if (rank == 0 && arch::verbose_enabled()) {
      std::ostringstream line;
      line.precision(1);
      line << std::fixed;
      for (std::size_t k = 0; k < candidates[i].size(); ++k) {
        int wins = 0;
        for (int round = 0; round < kRounds; ++round) wins += times[i][k][round] < times[i][0][round] ? 1 : 0;
        line << ' ' << to_string(candidates[i][k]) << ' ' << median(times[i][k]) * 1e6;
        if (k > 0) line << " (" << wins << '/' << kRounds << ')';
      }
      arch::log_verbose("comm: small-message probe %zu B (median us, rounds faster than mpi):%s -> %s\n", sizes[i], line.str().c_str(),
                        std::string(to_string(best.algorithm)).c_str());
    }
  }
  return table;
}

}  // namespace taihu::comm
