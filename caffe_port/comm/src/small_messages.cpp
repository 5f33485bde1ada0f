// The small-message table of the calibration (calibration.hpp): at 4, 16, 64, ...
// kSmallCalibrationMax bytes, every candidate allreduce runs through this communicator's
// own dispatch, interleaved round by round so host noise hits all alike; the fastest
// median of the slowest rank wins. The MPI library's MPI_Allreduce is a candidate and
// keeps the size unless another is >= 5% faster: small messages cost scheduling and
// shaper bursts that the alpha-beta model of a bandwidth probe does not see, so
// measuring the real calls is what keeps them from being slower than the default.
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
  constexpr int kRounds = 7;        // odd: a true median
  constexpr int kCallsPerSample = 2;
  constexpr double kMargin = 0.95;  // another algorithm must beat MPI_Allreduce by 5%
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
      for (std::size_t k = 0; k < candidates[i].size(); ++k) {
        const std::size_t count = sizes[i] / sizeof(float);
        std::fill(data.begin(), data.begin() + static_cast<std::ptrdiff_t>(count), 1.0f);
        MPI_Barrier(world);
        const double t0 = arch::now_seconds();
        for (int c = 0; c < kCallsPerSample; ++c) run(data.data(), count, Op::sum, candidates[i][k]);
        double t = (arch::now_seconds() - t0) / kCallsPerSample, slowest = 0;
        MPI_Allreduce(&t, &slowest, 1, MPI_DOUBLE, MPI_MAX, world);
        times[i][k].push_back(slowest);
      }
  // Every rank holds the same slowest-rank times, so every rank picks alike.
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    MeasuredChoice best{sizes[i], Algorithm::mpi, median(times[i][0])};
    for (std::size_t k = 1; k < candidates[i].size(); ++k)
      if (const double t = median(times[i][k]); t < kMargin * median(times[i][0]) && t < best.seconds)
        best = {sizes[i], candidates[i][k], t};
    best.seconds = std::clamp(best.seconds, 1e-9, 1.0);
    table.push_back(best);
    if (rank == 0 && arch::verbose_enabled()) {
      std::ostringstream line;
      line.precision(1);
      line << std::fixed;
      for (std::size_t k = 0; k < candidates[i].size(); ++k)
        line << ' ' << to_string(candidates[i][k]) << ' ' << median(times[i][k]) * 1e6;
      arch::log_verbose("comm: small-message probe %zu B (median us):%s -> %s\n", sizes[i], line.str().c_str(),
                        std::string(to_string(best.algorithm)).c_str());
    }
  }
  return table;
}

}  // namespace taihu::comm
