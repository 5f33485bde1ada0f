// The run loop of taihu-seismic (see run_command.hpp).
#include "cli/run_command.hpp"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <algorithm>
#include <filesystem>

#include "taihu/arch/build_config.hpp"
#include "taihu/arch/error.hpp"
#include "taihu/arch/timer.hpp"
#include "taihu/stencil/distributed.hpp"
#include "taihu/stencil/image.hpp"
#include "taihu/stencil/npy.hpp"
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

// The per-shot gather of shot s (0-based) under <dir>/<segy>.shots/.
std::string shot_file(const RunPlan& plan, std::size_t s) {
  char name[32];
  std::snprintf(name, sizeof name, "/shot_%05zu.segy", s + 1);
  return plan.output.dir + "/" + plan.output.segy + ".shots" + name;
}

// A gather already on disk from an earlier run of the same plan: same sampling, trace
// count and source; anything else (another survey's file) is recomputed.
bool load_done_shot(const RunPlan& plan, std::size_t s, ShotRecord* out) {
  const std::string path = shot_file(plan, s);
  if (!std::filesystem::exists(path)) return false;
  try {
    const SegyTraces t = read_segy(path);
    const Shot& shot = plan.shots[s];
    if (t.samples != plan.options.nt || std::abs(t.dt - plan.options.dt) > 1e-9 ||
        t.traces() != shot.receivers.size() || std::abs(t.source_x[0] - shot.source.x) > 0.01 ||
        std::abs(t.source_depth[0] - shot.source.z) > 0.01) {
      std::fprintf(stderr, "taihu-seismic: %s does not match shot %zu of this run; recomputing it\n", path.c_str(), s + 1);
      return false;
    }
    out->nt = plan.options.nt;
    out->dt = plan.options.dt;
    out->source = shot.source;
    out->receivers = shot.receivers;
    out->data = t.data;
    return true;
  } catch (const Error& e) {
    std::fprintf(stderr, "taihu-seismic: %s: %s; recomputing it\n", path.c_str(), e.what());
    return false;
  }
}

// Snapshot files of shot s (0-based) at a step: .npy always, .png with output.png.
// The .npy holds the whole wavefield in storage order: shape (nx, nz) in 2D,
// (ny, nx, nz) in 3D, so a[x, z]; the PNG shows its transpose (the middle y slice).
void write_snapshot(const RunPlan& plan, std::size_t s, int step, const Field& f, double dt) {
  const Grid& g = plan.model.grid;
  char stem[64];
  std::snprintf(stem, sizeof stem, "/shot_%03zu_snapshot_%05d", s + 1, step);
  std::vector<float> values(std::size_t(g.points()));
  for (long i2 = 0; i2 < g.n[2]; ++i2)
    for (long i1 = 0; i1 < g.n[1]; ++i1)
      for (long i0 = 0; i0 < g.n[0]; ++i0) values[std::size_t((i2 * g.n[1] + i1) * g.n[0] + i0)] = f.at(i0, i1, i2);
  std::vector<long> shape = {g.n[1], g.n[0]};
  if (g.dim == 3) shape.insert(shape.begin(), g.n[2]);
  write_npy(plan.output.dir + stem + ".npy", values.data(), shape);
  if (plan.output.png) {
    char title[96];
    std::snprintf(title, sizeof title, "pressure, shot %zu, t = %.3f s", s + 1, step * dt);
    write_png(plan.output.dir + stem + ".png", wavefield_picture(f, g, title));
  }
}

std::size_t shots_on_disk(const RunPlan& plan) {
  std::size_t n = 0;
  for (std::size_t s = 0; s < plan.shots.size(); ++s) n += std::filesystem::exists(shot_file(plan, s)) ? 1 : 0;
  return n;
}

}  // namespace

WorldRank world_rank() {
  WorldRank w;
#if TAIHU_HAVE_MPI
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized) {
    MPI_Comm_size(MPI_COMM_WORLD, &w.ranks);
    MPI_Comm_rank(MPI_COMM_WORLD, &w.rank);
  }
#endif
  return w;
}

int run_plan(const RunPlan& plan) {
  namespace fs = std::filesystem;
  const auto [rank, ranks] = world_rank();
  const bool root = rank == 0;
  const bool domain = ranks > 1 && plan.mpi == MpiMode::domain;
  const Options& o = plan.options;
  // plan_from_config already refused this; a plan made another way must not find out
  // only after the whole simulation that its gathers cannot be written.
  if (const std::string why = segy_sampling_problem(o.dt, o.nt); !why.empty())
    throw Error("taihu-seismic: " + plan.output.dir + "/" + plan.output.segy + ": " + why);
  const std::string shots_dir = plan.output.dir + "/" + plan.output.segy + ".shots";
  if (root) fs::create_directories(plan.output.dir);
  if (root && fs::is_directory(shots_dir))
    for (const auto& e : fs::directory_iterator(shots_dir))  // temp files of a killed run
      if (e.path().filename().string().find(".segy.tmp.") != std::string::npos) fs::remove(e.path());
#if TAIHU_HAVE_MPI
  if (ranks > 1) MPI_Barrier(MPI_COMM_WORLD);
#endif
  if (root && ranks > 1)
    std::fprintf(stderr, "taihu-seismic: %d MPI ranks, %s\n", ranks,
                 domain ? "each shot decomposed along the slow axis" : "whole shots dealt to ranks");
  if (root) std::fprintf(stderr, "taihu-seismic: %s, %s, order %d, dt %.3g ms, %d steps (%.3f s), %s boundary%s, %s coefficients, %zu shot(s)\n",
               plan.model_description.c_str(), physics_name(plan.model.physics), o.space_order, o.dt * 1e3, o.nt,
               o.dt * (o.nt - 1), boundary_name(o.boundary.kind), o.boundary.free_surface ? " + free surface" : "",
               coefficient_precision_name(o.coefficients), plan.shots.size());
  if (root && plan.output.png) {
    const std::string path = plan.output.dir + "/model.png";
    write_png(path, model_picture(plan.model, "vp (m/s)"));
    std::fprintf(stderr, "wrote %s\n", path.c_str());
  }
  arch::Stopwatch total;
  const std::size_t first = domain ? 0 : std::size_t(rank), stride = domain ? 1 : std::size_t(ranks);
  std::size_t skipped = 0, computed = 0, mine = 0;
  for (std::size_t s = first; s < plan.shots.size(); s += stride) ++mine;
  for (std::size_t s = first; s < plan.shots.size(); s += stride) {
    ShotRecord record;
    // In domain mode every rank must agree on skipping: rank 0 decides.
    int done = root || !domain ? int(load_done_shot(plan, s, &record)) : 0;
#if TAIHU_HAVE_MPI
    if (domain) MPI_Bcast(&done, 1, MPI_INT, 0, MPI_COMM_WORLD);
#endif
    if (done) {
      ++skipped;
      continue;
    }
    arch::Stopwatch clock;
    Options run = o;
    Progress progress(s, plan.shots.size(), double(plan.model.grid.points()));
    if (root || !domain) run.on_progress = [&](int step, int nt) { progress(step, nt); };
    const bool snap = plan.output.snapshot_every > 0 &&
                      std::find(plan.output.snapshot_shots.begin(), plan.output.snapshot_shots.end(), int(s + 1)) !=
                          plan.output.snapshot_shots.end();
    if (snap && !domain) {
      run.snapshot_every = plan.output.snapshot_every;
      run.on_snapshot = [&](int step, const Field& f) { write_snapshot(plan, s, step, f, o.dt); };
    } else if (snap && root) {
      std::fprintf(stderr, "taihu-seismic: no snapshots of shot %zu: in simulation.mpi = domain no rank holds the whole wavefield\n", s + 1);
    }
#if TAIHU_HAVE_MPI
    if (domain)
      record = run_shot_distributed(MPI_COMM_WORLD, plan.model, plan.shots[s], run);
    else
#endif
      record = run_shot(plan.model, plan.shots[s], run);
    if (!root && domain) continue;
    // run_shot refuses a diverged run; this keeps a non-finite sample out of the file
    // whatever produced the record (write_segy is atomic: nothing under the name).
    for (float v : record.data)
      if (!std::isfinite(v))
        throw Error("taihu-seismic: shot " + std::to_string(s + 1) + " holds a non-finite sample; not writing it");
    // The directory appears with the first gather, and goes again if that write fails.
    fs::create_directories(shots_dir);
    try {
      write_segy(shot_file(plan, s), {record});
    } catch (...) {
      std::error_code ec;
      if (fs::is_empty(shots_dir, ec)) fs::remove(shots_dir, ec);
      throw;
    }
    ++computed;
    if (plan.output.png) {
      char name[64], title[128];
      std::snprintf(name, sizeof name, "/shot_%03zu.png", s + 1);
      std::snprintf(title, sizeof title, "shot %zu, source x = %.1f m, z = %.1f m", s + 1, plan.shots[s].source.x,
                    plan.shots[s].source.z);
      write_png(plan.output.dir + name, gather_picture(record, title));
    }
    const std::size_t left = mine - skipped - computed;
    std::fprintf(stderr, "survey: %zu/%zu shots on disk; rank %d: shot %zu in %.1f s, %zu left, eta %.1f s\n",
                 shots_on_disk(plan), plan.shots.size(), rank, s + 1, clock.seconds(), left,
                 double(left) * total.seconds() / double(computed));
  }
  if (skipped) std::fprintf(stderr, "rank %d: %zu shot(s) already on disk, skipped\n", rank, skipped);
#if TAIHU_HAVE_MPI
  if (ranks > 1) MPI_Barrier(MPI_COMM_WORLD);
#endif
  if (!root) return 0;
  // The combined file from the per-shot gathers and the plan's geometry: the same bytes
  // whoever computed which shot.
  std::vector<ShotRecord> records(plan.shots.size());
  for (std::size_t s = 0; s < plan.shots.size(); ++s)
    if (!load_done_shot(plan, s, &records[s]))
      throw Error("taihu-seismic: " + shot_file(plan, s) + " is missing after the run");
  const std::string segy = plan.output.dir + "/" + plan.output.segy;
  if (plan.geometry.empty()) {
    write_segy(segy, records);
  } else {  // the geometry file's headers, trace for trace
    std::vector<float> all;
    for (const ShotRecord& r : records) all.insert(all.end(), r.data.begin(), r.data.end());
    write_segy_like(segy, plan.geometry, all);
  }
  const double pts = double(plan.model.grid.points()) * o.nt * double(computed);
  std::fprintf(stderr, "wrote %s (%zu traces of %d samples at %.3g ms); %.2f s, %.0f Mpts/s on rank 0\n", segy.c_str(),
               plan.shots.size() * plan.shots[0].receivers.size(), o.nt, o.dt * 1e3, total.seconds(),
               pts / total.seconds() / 1e6);
  return 0;
}

}  // namespace taihu::stencil::cli
