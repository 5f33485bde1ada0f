// The run loop of taihu-seismic (see run_command.hpp).
#include "cli/run_command.hpp"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>

#include "taihu/arch/build_config.hpp"
#include "taihu/arch/error.hpp"
#include "taihu/arch/timer.hpp"
#include "taihu/stencil/distributed.hpp"
#include "taihu/stencil/image.hpp"
#include "taihu/stencil/segy.hpp"

namespace taihu::stencil::cli {
namespace {

// Progress on stderr: a redrawn bar on a terminal, a line every 10% otherwise.
class Progress {
 public:
  Progress(std::size_t shot, std::size_t shots, double points) : shot_(shot), shots_(shots), points_(points) {}
  void operator()(int step, int nt) {
    const double t = clock_.seconds();
    const int pct = static_cast<int>(100.0 * step / nt);
    const double rate = t > 0 ? points_ * step / t / 1e6 : 0.0;
    const double eta = step > 0 ? t * (nt - step) / step : 0.0;
    if (tty_) {
      char bar[31];
      for (int i = 0; i < 30; ++i) bar[i] = i < pct * 30 / 100 ? '#' : '.';
      bar[30] = 0;
      std::fprintf(stderr, "\rshot %zu/%zu [%s] %3d%%  step %d/%d  %.0f Mpts/s  eta %.1f s ", shot_ + 1, shots_, bar, pct,
                   step, nt, rate, eta);
      if (step == nt) std::fprintf(stderr, "\n");
    } else if (pct >= next_ || step == nt) {
      std::fprintf(stderr, "shot %zu/%zu: %3d%%  step %d/%d  %.0f Mpts/s  eta %.1f s\n", shot_ + 1, shots_, pct, step, nt,
                   rate, eta);
      next_ = pct + 10;
    }
    std::fflush(stderr);
  }

 private:
  std::size_t shot_, shots_;
  double points_;
  arch::Stopwatch clock_;
  bool tty_ = ::isatty(2) != 0;
  int next_ = 0;
};

}  // namespace

int run_plan(const RunPlan& plan) {
  namespace fs = std::filesystem;
  int rank = 0, ranks = 1;
#if TAIHU_HAVE_MPI
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized) {
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  }
#endif
  const bool root = rank == 0;
  const Options& o = plan.options;
  // plan_from_config already refused this; a plan made another way must not find out
  // only after the whole simulation that its gathers cannot be written.
  if (const std::string why = segy_sampling_problem(o.dt, o.nt); !why.empty())
    throw Error("taihu-seismic: " + plan.output.dir + "/" + plan.output.segy + ": " + why);
  if (root) fs::create_directories(plan.output.dir);
  if (root && ranks > 1)
    std::fprintf(stderr, "taihu-seismic: %d MPI ranks, each shot decomposed along the slow axis\n", ranks);
  if (root) std::fprintf(stderr, "taihu-seismic: %s, %s, order %d, dt %.3g ms, %d steps (%.3f s), %s boundary%s, %s coefficients, %zu shot(s)\n",
               plan.model_description.c_str(), physics_name(plan.model.physics), o.space_order, o.dt * 1e3, o.nt,
               o.dt * (o.nt - 1), boundary_name(o.boundary.kind), o.boundary.free_surface ? " + free surface" : "",
               coefficient_precision_name(o.coefficients), plan.shots.size());
  if (root && plan.output.png) {
    const std::string path = plan.output.dir + "/model.png";
    write_png(path, model_picture(plan.model, "vp (m/s)"));
    std::fprintf(stderr, "wrote %s\n", path.c_str());
  }
  std::vector<ShotRecord> records;
  arch::Stopwatch total;
  for (std::size_t s = 0; s < plan.shots.size(); ++s) {
    Options run = o;
    Progress progress(s, plan.shots.size(), double(plan.model.grid.points()));
    run.on_progress = [&](int step, int nt) { progress(step, nt); };
    if (s == 0 && ranks == 1 && plan.output.png && plan.output.snapshot_every > 0) {
      run.snapshot_every = plan.output.snapshot_every;
      run.on_snapshot = [&](int step, const Field& f) {
        char name[64];
        std::snprintf(name, sizeof name, "/snapshot_%05d.png", step);
        char title[96];
        std::snprintf(title, sizeof title, "pressure, shot 1, t = %.3f s", step * o.dt);
        write_png(plan.output.dir + name, wavefield_picture(f, plan.model.grid, title));
      };
    }
#if TAIHU_HAVE_MPI
    if (ranks > 1)
      records.push_back(run_shot_distributed(MPI_COMM_WORLD, plan.model, plan.shots[s], run));
    else
#endif
      records.push_back(run_shot(plan.model, plan.shots[s], run));
    if (root && plan.output.png) {
      char name[64], title[128];
      std::snprintf(name, sizeof name, "/shot_%03zu.png", s + 1);
      std::snprintf(title, sizeof title, "shot %zu, source x = %.1f m, z = %.1f m", s + 1, plan.shots[s].source.x,
                    plan.shots[s].source.z);
      write_png(plan.output.dir + name, gather_picture(records.back(), title));
    }
  }
  if (!root) return 0;
  const std::string segy = plan.output.dir + "/" + plan.output.segy;
  // run_shot already refuses a diverged run; this keeps a non-finite sample out of the
  // file whatever produced the records (write_segy is atomic: nothing under the name).
  for (std::size_t s = 0; s < records.size(); ++s)
    for (float v : records[s].data)
      if (!std::isfinite(v))
        throw Error("taihu-seismic: shot " + std::to_string(s + 1) + " holds a non-finite sample; not writing " + segy);
  write_segy(segy, records);
  const double pts = double(plan.model.grid.points()) * o.nt * double(plan.shots.size());
  std::fprintf(stderr, "wrote %s (%zu traces of %d samples at %.3g ms); %.2f s, %.0f Mpts/s\n", segy.c_str(),
               plan.shots.size() * plan.shots[0].receivers.size(), o.nt, o.dt * 1e3, total.seconds(),
               pts / total.seconds() / 1e6);
  return 0;
}

}  // namespace taihu::stencil::cli
