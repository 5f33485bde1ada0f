// The migrate loop of taihu-seismic (see migrate_command.hpp).
#include "cli/migrate_command.hpp"
#include "cli/run_command.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>

#include "taihu/arch/build_config.hpp"
#if TAIHU_HAVE_MPI
#include <mpi.h>
#endif
#include "taihu/arch/error.hpp"
#include "taihu/arch/timer.hpp"
#include "taihu/stencil/image.hpp"
#include "taihu/stencil/migration.hpp"
#include "taihu/stencil/npy.hpp"
#include "taihu/stencil/segy.hpp"
#include "taihu/stencil/wavelet.hpp"

namespace taihu::stencil::cli {
namespace {

// Peak resident memory of this process (Linux VmHWM), MiB; 0 if unknown.
double peak_rss_mib() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;
  return 0;
}

// Shots and their gathers from a SEG-Y file: consecutive traces of one field record
// form a shot; its source and receivers come from the trace headers.
std::vector<ShotRecord> gathers_from_segy(const std::string& path, const Grid& grid) {
  const SegyTraces t = read_segy(path);
  if (t.traces() == 0) throw Error("taihu: migration.data '" + path + "' holds no traces");
  std::vector<ShotRecord> shots;
  for (std::size_t i = 0; i < t.traces(); ++i) {
    const Position src{t.source_depth[i], t.source_x[i], t.source_y[i]};
    if (i == 0 || t.field_record[i] != t.field_record[i - 1]) {
      shots.emplace_back();
      shots.back().nt = t.samples;
      shots.back().dt = t.dt;
      shots.back().source = src;
      try {
        point_stencil(grid, src);
      } catch (const Error& e) {
        throw Error("taihu: migration.data '" + path + "' trace " + std::to_string(i + 1) + " (field record " +
                    std::to_string(t.field_record[i]) + "): the source " + e.what());
      }
    }
    const Position rec{t.group_depth[i], t.group_x[i], t.group_y[i]};
    try {
      point_stencil(grid, rec);
    } catch (const Error& e) {
      throw Error("taihu: migration.data '" + path + "' trace " + std::to_string(i + 1) + ": the receiver " + e.what());
    }
    ShotRecord& s = shots.back();
    s.receivers.push_back(rec);
    const float* d = t.data.data() + i * std::size_t(t.samples);
    s.data.insert(s.data.end(), d, d + t.samples);
  }
  return shots;
}

void write_image_files(const std::string& dir, const std::string& name, const Grid& g, const std::vector<float>& v,
                       const std::string& title, bool png) {
  std::vector<long> shape = {g.n[1], g.n[0]};
  if (g.dim == 3) shape.insert(shape.begin(), g.n[2]);
  write_npy(dir + "/" + name + ".npy", v.data(), shape);
  if (png) write_png(dir + "/" + name + ".png", image_picture(g, v, title));
}

// TAIHU_RTM_FUSED=0: model the direct data in a run of its own (4 sweeps a step, the
// behaviour before migrate_scattered), for A/B timing; the image is bitwise the same.
bool separate_direct_run() {
  const char* v = std::getenv("TAIHU_RTM_FUSED");
  return v && v[0] == '0';
}

}  // namespace

int migrate(const Config& config, RunPlan plan) {
  namespace fs = std::filesystem;
  const auto [rank, ranks] = world_rank();
  const bool root = rank == 0;
  arch::Stopwatch total;
  const Model& truth = plan.model;
  const double smooth = config.has("migration.smooth") ? config.get_double("migration.smooth") : 100.0;
  if (!(smooth >= 0) || !std::isfinite(smooth))
    throw Error("taihu: " + config.where("migration.smooth") + " must be >= 0 metres");
  double budget = std::numeric_limits<double>::infinity();
  if (config.has("migration.checkpoint_memory"))
    budget = config.get_positive("migration.checkpoint_memory") * 1024.0 * 1024.0;
  const Model model = smoothed_model(truth, smooth);
  Options o = plan.options;
  o.boundary.design_speed = truth.max_speed();  // the same absorber in every run whose difference is taken
  std::vector<Shot> shots = plan.shots;
  std::vector<ShotRecord> observed;
  const bool from_file = config.has("migration.data");
  if (from_file) {
    const std::string path = config.resolve_path(config.get_string("migration.data"));
    observed = gathers_from_segy(path, model.grid);
    o.dt = observed[0].dt;
    o.nt = observed[0].nt;
    try {
      o = resolved(model, o);
    } catch (const Error& e) {
      throw Error("taihu: migration.data '" + path + "' is sampled at dt = " + std::to_string(o.dt) + " s: " + e.what());
    }
    const auto wavelet = ricker(o.f0, o.dt, o.nt);
    shots.clear();
    for (const ShotRecord& r : observed) shots.push_back({r.source, r.receivers, wavelet});
  }
  if (root)
    std::fprintf(stderr,
                 "taihu-seismic migrate: %s, migration velocity smoothed over %g m, order %d, dt %.3g ms, %d steps, "
                 "%s boundary, %zu shot(s)%s\n",
                 plan.model_description.c_str(), smooth, o.space_order, o.dt * 1e3, o.nt,
                 boundary_name(o.boundary.kind), shots.size(),
                 from_file ? "" : "; observed data modelled in the true model minus the smoothed one");
  if (root) fs::create_directories(plan.output.dir);
  const std::size_t points = std::size_t(model.grid.points());
  std::vector<float> image(points, 0.f), illumination(points, 0.f);
  double steps = 0;
  int mine = 0;
  for (std::size_t s = std::size_t(rank); s < shots.size(); s += std::size_t(ranks), ++mine) {
    arch::Stopwatch clock;
    ShotImage im;
    if (from_file) {
      im = migrate_shot(model, shots[s], observed[s], o, budget);
    } else if (separate_direct_run()) {
      ShotRecord d = run_shot(truth, shots[s], o);
      const ShotRecord direct = run_shot(model, shots[s], o);
      for (std::size_t i = 0; i < d.data.size(); ++i) d.data[i] -= direct.data[i];
      im = migrate_shot(model, shots[s], d, o, budget);
      steps += 2.0 * o.nt;
    } else {
      // The true model's data minus the smooth model's direct data, which the source
      // wavefield's pass samples on the way (migrate_scattered).
      im = migrate_scattered(model, shots[s], run_shot(truth, shots[s], o), o, budget);
      steps += double(o.nt);
    }
    for (std::size_t i = 0; i < points; ++i) {
      image[i] += im.image[i];
      illumination[i] += im.illumination[i];
    }
    steps += double(im.plan.forward_steps) + o.nt;
    if (mine == 0) std::fprintf(stderr, "rank %d: source wavefield: %s\n", rank, im.plan.describe().c_str());
    const double left = double((shots.size() - 1 - s) / std::size_t(ranks)) * total.seconds() / (mine + 1);
    std::fprintf(stderr, "shot %zu/%zu (x = %.1f m) migrated on rank %d in %.2f s; eta %.1f s\n", s + 1, shots.size(),
                 shots[s].source.x, rank, clock.seconds(), left);
  }
#if TAIHU_HAVE_MPI
  if (ranks > 1) {
    MPI_Reduce(root ? MPI_IN_PLACE : image.data(), image.data(), int(points), MPI_FLOAT, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(root ? MPI_IN_PLACE : illumination.data(), illumination.data(), int(points), MPI_FLOAT, MPI_SUM, 0,
               MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, &steps, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  }
#endif
  if (!root) return 0;
  for (float v : image)
    if (!std::isfinite(v)) throw Error("taihu: the image holds a non-finite value; not writing it");
  const Grid& g = model.grid;
  const std::string dir = plan.output.dir;
  // The mute: below the deepest source or receiver by one wavelength of the slowest
  // speed at f0 unless migration.mute says otherwise; the compensation's scale comes
  // from the illumination below it (the sources' own cells would set it otherwise).
  double acquisition = 0;
  for (const Shot& sh : shots) {
    acquisition = std::max(acquisition, sh.source.z);
    for (const Position& r : sh.receivers) acquisition = std::max(acquisition, r.z);
  }
  const double wavelength = model.vp_min() / o.f0;
  const double mute = config.has("migration.mute") ? config.get_double("migration.mute") : acquisition + wavelength;
  if (!(mute >= 0) || !std::isfinite(mute)) throw Error("taihu: " + config.where("migration.mute") + " must be >= 0 metres");
  const double taper = std::min(mute, wavelength / 2);
  std::fprintf(stderr, "image muted above %.1f m (cosine taper from %.1f m)\n", mute, mute - taper);
  image = muted_above(g, image, mute, taper);
  double reference = 0;  // the compensation's scale: the illumination below the mute
  for (float v : muted_above(g, illumination, mute, taper)) reference = std::max(reference, double(v));
  const auto compensated = illumination_compensated(image, illumination, 1e-3, reference);
  const auto filtered = laplacian_filtered(g, compensated);
  write_image_files(dir, "image_xcorr", g, image, "RTM image, zero-lag cross-correlation", plan.output.png);
  write_npy(dir + "/image_compensated.npy", compensated.data(),
            g.dim == 3 ? std::vector<long>{g.n[2], g.n[1], g.n[0]} : std::vector<long>{g.n[1], g.n[0]});
  write_npy(dir + "/illumination.npy", illumination.data(),
            g.dim == 3 ? std::vector<long>{g.n[2], g.n[1], g.n[0]} : std::vector<long>{g.n[1], g.n[0]});
  write_image_files(dir, "image", g, filtered, "RTM image, illumination-compensated, Laplacian-filtered",
                    plan.output.png);
  write_segy_image(dir + "/image.segy", g, filtered);
  const double seconds = total.seconds();
  std::fprintf(stderr,
               "wrote %s/image.{segy,npy%s}, image_xcorr, image_compensated, illumination; %zu shot(s) in %.2f s: "
               "%.0f grid steps (%.2f x the %zu x %d forward steps), %.0f Mpts/s, peak memory %.0f MiB (rank 0)\n",
               dir.c_str(), plan.output.png ? ",png" : "", shots.size(), seconds, steps,
               steps / (double(shots.size()) * o.nt), shots.size(), o.nt, steps * double(points) / seconds / 1e6,
               peak_rss_mib());
  return 0;
}

}  // namespace taihu::stencil::cli
