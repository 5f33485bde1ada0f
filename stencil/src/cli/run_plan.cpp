// Config -> RunPlan (see run_plan.hpp).
#include "taihu/stencil/run_plan.hpp"

#include <cmath>
#include <cstdio>
#include <set>

#include "taihu/arch/error.hpp"
#include "taihu/stencil/raw_model.hpp"
#include "taihu/stencil/segy.hpp"
#include "taihu/stencil/wavelet.hpp"

namespace taihu::stencil {

const std::vector<std::string>& known_config_keys() {
  static const std::vector<std::string> keys = {
      "model.vp", "model.shape", "model.order", "model.spacing", "model.endian", "model.scale", "model.physics",
      "model.rho", "model.epsilon", "model.delta", "model.theta", "model.phi", "model.segy_dz",
      "simulation.space_order", "simulation.dt", "simulation.tmax", "simulation.f0", "simulation.kernel",
      "simulation.coefficients",
      "simulation.boundary", "simulation.width", "simulation.free_surface", "simulation.wavelet",
      "simulation.wavelet_dt", "simulation.mpi",
      "acquisition.shots", "acquisition.source_depth", "acquisition.source_y", "acquisition.receivers",
      "acquisition.receiver_depth", "acquisition.receiver_y", "acquisition.geometry",
      "output.dir", "output.segy", "output.png", "output.snapshot_every", "output.snapshot_shots",
      "migration.data", "migration.smooth", "migration.checkpoint_memory", "migration.mute"};
  return keys;
}

namespace {

RawFieldSpec spec_for(const Config& c, const std::string& path) {
  RawFieldSpec s;
  s.path = c.resolve_path(path);
  s.shape = c.get_shape("model.shape");
  s.order = c.get_string("model.order", s.shape.size() == 3 ? "z,x,y" : "z,x");
  s.spacing = c.get_positive_doubles("model.spacing");
  const std::string endian = c.get_string("model.endian", "little");
  if (endian != "little" && endian != "big")
    throw Error("taihu: " + c.origin() + ": key 'model.endian' must be little or big, got '" + endian + "'");
  s.big_endian = endian == "big";
  return s;
}

// A field given as a file path or as one constant number.
std::vector<float> field_or_constant(const Config& c, const std::string& key, const Grid& g, double scale) {
  const std::string v = c.get_string(key);
  char* end = nullptr;
  const double constant = std::strtod(v.c_str(), &end);
  if (end == v.c_str() + v.size()) return std::vector<float>(static_cast<std::size_t>(g.points()), float(constant * scale));
  RawFieldSpec s = spec_for(c, v);
  s.scale = scale;
  auto f = read_raw_field(s);
  if (f.size() != static_cast<std::size_t>(g.points())) throw Error("taihu: '" + key + "' does not match the vp grid");
  return f;
}

// acquisition.geometry: shots, receivers and sampling from a SEG-Y file's trace headers
// (consecutive traces of one field record form a shot), replacing the acquisition keys.
void geometry_from_segy(const Config& c, RunPlan& plan) {
  for (const char* k : {"acquisition.shots", "acquisition.receivers", "acquisition.source_depth",
                        "acquisition.receiver_depth", "simulation.tmax", "simulation.dt"})
    if (c.has(k))
      throw Error("taihu: " + c.where(k) + " conflicts with " + c.where("acquisition.geometry") +
                  ", whose trace headers give the geometry and the sampling");
  const std::string path = c.resolve_path(c.get_string("acquisition.geometry"));
  const SegyTraces t = read_segy(path);
  const std::string what = "acquisition.geometry '" + path + "'";
  if (t.traces() == 0) throw Error("taihu: " + what + " holds no traces");
  bool any_coordinate = false;
  for (std::size_t i = 0; i < t.traces(); ++i)
    any_coordinate = any_coordinate || t.source_x[i] != 0 || t.group_x[i] != 0 || t.source_y[i] != 0 || t.group_y[i] != 0;
  if (!any_coordinate)
    throw Error("taihu: " + what + ": every trace's SourceX/Y and GroupX/Y header (bytes 73-88) is 0: no geometry to model");
  if (!(t.dt > 0)) throw Error("taihu: " + what + ": the headers give no sample interval");
  Options& o = plan.options;
  o.dt = t.dt;
  o.nt = t.samples;
  try {
    check_cfl(plan.model, o.space_order, o.dt);
  } catch (const Error& e) {
    throw Error("taihu: " + what + " is sampled at dt = " + std::to_string(t.dt) + " s, which this model cannot run at: " +
                e.what());
  }
  const std::vector<float> wavelet = c.get_string("simulation.wavelet", "ricker") == "ricker"
      ? ricker(o.f0, o.dt, o.nt)
      : resample_wavelet(read_wavelet_text(c.resolve_path(c.get_string("simulation.wavelet"))),
                         c.get_positive("simulation.wavelet_dt"), o.dt, o.nt);
  const Grid& g = plan.model.grid;
  auto place = [&](const Position& p, std::size_t trace, const char* role) {
    try {
      point_stencil(g, p);
    } catch (const Error& e) {
      char buf[200];
      std::snprintf(buf, sizeof buf, "trace %zu (field record %d): the %s at x %.2f, y %.2f, depth %.2f m is outside "
                    "the model", trace + 1, t.field_record[trace], role, p.x, p.y, p.z);
      throw Error("taihu: " + what + " " + buf + " (" + g.describe() + "; coordinates are metres from its first node): " +
                  e.what());
    }
  };
  plan.shots.clear();
  for (std::size_t i = 0; i < t.traces(); ++i) {
    const Position src{t.source_depth[i], t.source_x[i], t.source_y[i]};
    const Position rec{t.group_depth[i], t.group_x[i], t.group_y[i]};
    if (i == 0 || t.field_record[i] != t.field_record[i - 1]) {
      place(src, i, "source");
      plan.shots.push_back({src, {}, wavelet});
    }
    place(rec, i, "receiver");
    plan.shots.back().receivers.push_back(rec);
  }
  plan.geometry = path;
}

}  // namespace

RunPlan plan_from_config(const Config& c) {
  {
    const auto& k = known_config_keys();
    c.check_known(std::set<std::string>(k.begin(), k.end()));
  }
  RunPlan plan;
  // Model.
  const std::string vp = c.get_string("model.vp", "layered");
  if (vp == "layered") {
    RawFieldSpec s;
    s.shape = c.has("model.shape") ? c.get_shape("model.shape") : std::vector<long>{401, 201};
    s.order = s.shape.size() == 3 ? "z,x,y" : "z,x";
    s.spacing = c.has("model.spacing") ? c.get_positive_doubles("model.spacing") : std::vector<double>{10.0};
    s.path = "layered";
    const Grid g = grid_of(s);
    plan.model = layered_model(g);
    plan.model_description = "built-in layered model " + g.describe();
  } else if (vp.size() > 5 && (vp.substr(vp.size() - 5) == ".segy" || vp.substr(vp.size() - 4) == ".sgy")) {
    const auto h = c.get_positive_doubles("model.spacing");
    plan.model = read_segy_model(c.resolve_path(vp), h.at(0), c.get_positive("model.segy_dz", h.at(0)),
                                 c.get_positive("model.scale", 1.0));
    plan.model_description = vp + " " + plan.model.grid.describe();
  } else {
    RawFieldSpec s = spec_for(c, vp);
    s.scale = c.get_positive("model.scale", 1.0);
    plan.model = read_raw_model(s);
    plan.model_description = vp + " " + plan.model.grid.describe();
  }
  Model& m = plan.model;
  m.physics = parse_physics(c.get_string("model.physics", "acoustic"));
  if (m.physics == Physics::acoustic_density) m.rho = field_or_constant(c, "model.rho", m.grid, 1.0);
  if (m.physics == Physics::vti || m.physics == Physics::tti) {
    m.epsilon = field_or_constant(c, "model.epsilon", m.grid, 1.0);
    m.delta = field_or_constant(c, "model.delta", m.grid, 1.0);
  }
  if (m.physics == Physics::tti) {  // degrees in the file
    m.theta = field_or_constant(c, "model.theta", m.grid, M_PI / 180.0);
    if (c.has("model.phi")) m.phi = field_or_constant(c, "model.phi", m.grid, M_PI / 180.0);
  }
  validate(m);  // values finite and in a physical range, named by cell
  const double vmin = m.vp_min(), vmax = m.vp_max();
  if (vmax > 0 && vmax < 20) {
    if (c.has("model.scale"))
      throw Error("taihu: " + c.origin() + ": vp ranges " + std::to_string(vmin) + ".." + std::to_string(vmax) +
                  " m/s after model.scale: that looks like km/s; use 'model.scale = 1000'");
    for (auto& v : m.vp) v *= 1000.f;  // km/s file without a scale: say so and convert
    plan.model_description += " (values look like km/s: converted to m/s; set model.scale to override)";
  }
  // Simulation.
  Options& o = plan.options;
  o.space_order = static_cast<int>(c.get_long("simulation.space_order", 8));
  o.f0 = c.get_positive("simulation.f0", 10.0);
  // simulation.dt absent or "auto": 0.6 x the stable limit (Options::dt = 0); a number
  // must be > 0 (a negative dt once meant "auto" silently).
  const bool auto_dt = !c.has("simulation.dt") || c.get_string("simulation.dt") == "auto";
  o.dt = auto_dt ? 0.0 : c.get_positive("simulation.dt");
  o.kernel = parse_kernel(c.get_string("simulation.kernel", "optimized"));
  o.coefficients = parse_coefficient_precision(
      c.get_string("simulation.coefficients", coefficient_precision_name(Options{}.coefficients)));
  o.boundary.kind = parse_boundary(c.get_string("simulation.boundary", "cpml"));
  o.boundary.width = static_cast<int>(c.get_long("simulation.width", 20));
  o.boundary.free_surface = c.get_bool("simulation.free_surface", false);
  o = resolved(m, o);  // fills dt, checks the CFL condition
  // SEG-Y stores whole microseconds: an automatic dt is rounded down to one (still
  // stable), so the file's sample interval is the one the run used.
  if (auto_dt && o.dt >= 1e-6) o.dt = std::floor(o.dt * 1e6 + 1e-9) * 1e-6;
  const double tmax = c.get_positive("simulation.tmax", 1.0);
  // Every sample goes into one SEG-Y trace: refuse here, before the wavelet, the gathers
  // and the simulation, what the file could not hold (and any step count an int cannot).
  {
    char dt_text[160], tmax_text[160];
    if (auto_dt)
      std::snprintf(dt_text, sizeof dt_text, "dt = %g s (automatic: 0.6 x the stable limit, max vp %g m/s)", o.dt,
                    m.max_speed());
    else
      std::snprintf(dt_text, sizeof dt_text, "dt = %g s (%s)", o.dt, c.where("simulation.dt").c_str());
    std::snprintf(tmax_text, sizeof tmax_text, "tmax = %g s (%s)", tmax,
                  c.has("simulation.tmax") ? c.where("simulation.tmax").c_str() : "default");
    if (const std::string why = segy_sampling_problem(o.dt, 1); !why.empty())
      throw Error("taihu: " + std::string(dt_text) + ": " + why);
    const double steps = tmax / o.dt + 1;
    if (!(steps < double(kSegyMaxSamples) + 0.5)) {
      char buf[200];
      std::snprintf(buf, sizeof buf, "%.4g time steps; a SEG-Y trace holds at most %ld samples", steps,
                    kSegyMaxSamples);
      throw Error("taihu: " + std::string(tmax_text) + " at " + dt_text + " is " + buf);
    }
  }
  o.nt = static_cast<int>(std::lround(tmax / o.dt)) + 1;
  std::vector<float> wavelet;
  const std::string wv = c.get_string("simulation.wavelet", "ricker");
  if (wv == "ricker") {
    wavelet = ricker(o.f0, o.dt, o.nt);
  } else {
    wavelet = resample_wavelet(read_wavelet_text(c.resolve_path(wv)), c.get_positive("simulation.wavelet_dt"), o.dt, o.nt);
  }
  // Acquisition.
  const Grid& g = m.grid;
  const double xmax = double(g.n[1] - 1) * g.h[1];
  const double ymid = g.dim == 3 ? double(g.n[2] - 1) * g.h[2] / 2 : 0.0;
  const std::vector<double> shots = c.has("acquisition.shots") ? c.get_range("acquisition.shots") : std::vector<double>{xmax / 2};
  const double sz = c.get_double("acquisition.source_depth", 2 * g.h[0]);
  const double sy = c.get_double("acquisition.source_y", ymid);
  std::vector<double> rx;
  if (c.has("acquisition.receivers")) {
    rx = c.get_range("acquisition.receivers");
  } else {
    for (long i = 0; i < g.n[1]; ++i) rx.push_back(double(i) * g.h[1]);
  }
  const double rz = c.get_double("acquisition.receiver_depth", 2 * g.h[0]);
  const double ry = c.get_double("acquisition.receiver_y", ymid);
  std::vector<Position> receivers;
  for (double x : rx) receivers.push_back({rz, x, ry});
  for (double x : shots) {
    Shot s{{sz, x, sy}, receivers, wavelet};
    point_stencil(g, s.source);  // throws with the position if outside
    for (const auto& r : receivers) point_stencil(g, r);
    plan.shots.push_back(std::move(s));
  }
  if (c.has("acquisition.geometry")) geometry_from_segy(c, plan);
  // Output.
  plan.output.dir = c.get_string("output.dir", "seismic_out");  // relative to the working directory
  plan.output.segy = c.get_string("output.segy", "shots.segy");
  plan.output.png = c.get_bool("output.png", true);
  plan.output.snapshot_every = static_cast<int>(c.get_long("output.snapshot_every", 0));
  if (plan.output.snapshot_every < 0)
    throw Error("taihu: " + c.where("output.snapshot_every") + " must be >= 0 (0: no snapshots)");
  if (c.has("output.snapshot_shots")) {
    plan.output.snapshot_shots.clear();
    if (c.get_string("output.snapshot_shots") == "all") {
      for (std::size_t s = 0; s < plan.shots.size(); ++s) plan.output.snapshot_shots.push_back(int(s + 1));
    } else {
      for (double v : c.get_range("output.snapshot_shots")) {
        if (v != std::floor(v) || v < 1 || v > double(plan.shots.size()))
          throw Error("taihu: " + c.where("output.snapshot_shots") + ": shot " + std::to_string(v) +
                      " is not one of the run's shots 1.." + std::to_string(plan.shots.size()) + " (or 'all')");
        plan.output.snapshot_shots.push_back(int(v));
      }
    }
  }
  const std::string mpi = c.get_string("simulation.mpi", "shots");
  if (mpi != "shots" && mpi != "domain")
    throw Error("taihu: " + c.where("simulation.mpi") + " must be 'shots' (whole shots per rank) or 'domain' (each "
                "shot decomposed over the ranks), got '" + mpi + "'");
  plan.mpi = mpi == "shots" ? MpiMode::shots : MpiMode::domain;
  return plan;
}

}  // namespace taihu::stencil
