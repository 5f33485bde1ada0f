// One shot's migration and the image filters (see migration.hpp).
#include <algorithm>
#include <cmath>

#include "imaging/source_wavefield.hpp"
#include "kernels/parallel_size.hpp"
#include "taihu/arch/error.hpp"
#include "taihu/stencil/migration.hpp"

namespace taihu::stencil {

namespace {

void check_physics_and_record(const Model& model, const ShotRecord& observed, const Options& opt) {
  if (model.physics != Physics::acoustic && model.physics != Physics::acoustic_density)
    throw Error(std::string("taihu: migration supports the acoustic and density physics, not ") +
                physics_name(model.physics));
  if (observed.nt != opt.nt || observed.receivers.size() * std::size_t(opt.nt) != observed.data.size())
    throw Error("taihu: migrate_shot: the observed gather has " + std::to_string(observed.nt) +
                " samples per trace, the run " + std::to_string(opt.nt));
}

// The adjoint pass of `observed` against `source`: the zero-lag cross-correlation image
// and the source illumination.
ShotImage image_shot(const Model& model, SourceWavefield& source, const ShotRecord& observed, const Options& opt) {
  const Grid& g = model.grid;
  const std::size_t points = std::size_t(g.points());
  std::vector<double> image(points, 0.0), illumination(points, 0.0);
  const int threads = threads_for_points(double(points));
  propagate_adjoint(model, observed.receivers, observed.data, opt, [&](int n, const Propagator& prop) {
    const float* u = source.at(n);
    const float* mu = prop.current().data();
    const Layout& L = prop.current().layout();
#pragma omp parallel for collapse(2) schedule(static) num_threads(threads)
    for (long i2 = 0; i2 < g.n[2]; ++i2)
      for (long i1 = 0; i1 < g.n[1]; ++i1) {
        const std::size_t base = std::size_t((i2 * g.n[1] + i1) * g.n[0]);
        const float* m = mu + L.index(0, i1, i2);
        for (long i0 = 0; i0 < g.n[0]; ++i0) {
          const double s = u[base + std::size_t(i0)];
          image[base + std::size_t(i0)] += s * m[i0];
          illumination[base + std::size_t(i0)] += s * s;
        }
      }
  });
  ShotImage out;
  out.plan = source.plan();
  out.plan.forward_steps = source.forward_steps();
  out.image.resize(points);
  out.illumination.resize(points);
  // mu = A lambda with A = v^2 dt^2 constant in time: divide once at the end.
  const double dt2 = opt.dt * opt.dt;
  for (std::size_t i = 0; i < points; ++i) {
    out.image[i] = float(image[i] / (double(model.vp[i]) * model.vp[i] * dt2));
    out.illumination[i] = float(illumination[i]);
  }
  return out;
}

}  // namespace

ShotImage migrate_shot(const Model& model, const Shot& shot, const ShotRecord& observed, const Options& options,
                       double checkpoint_bytes) {
  const Options opt = resolved(model, options);
  check_physics_and_record(model, observed, opt);
  SourceWavefield source(model, shot, opt, checkpoint_bytes);
  return image_shot(model, source, observed, opt);
}

ShotImage migrate_scattered(const Model& model, const Shot& shot, const ShotRecord& recorded, const Options& options,
                            double checkpoint_bytes) {
  const Options opt = resolved(model, options);
  check_physics_and_record(model, recorded, opt);
  SourceWavefield source(model, shot, opt, checkpoint_bytes, &recorded.receivers);
  // A binomial plan runs its first pass (and samples the receivers) on the first
  // request, the adjoint's first step, which needs the data already: ask for it here.
  if (!source.recorded()) source.at(opt.nt - 1);
  ShotRecord scattered = recorded;
  if (const ShotRecord* direct = source.recorded())
    for (std::size_t i = 0; i < scattered.data.size(); ++i) scattered.data[i] -= direct->data[i];
  return image_shot(model, source, scattered, opt);
}

std::vector<float> illumination_compensated(const std::vector<float>& image, const std::vector<float>& illumination,
                                            double eps, double reference) {
  if (image.size() != illumination.size()) throw Error("taihu: illumination_compensated: sizes differ");
  double peak = reference;
  if (!(peak > 0))
    for (float s : illumination) peak = std::max(peak, double(s));
  const double floor = eps * peak > 0 ? eps * peak : 1.0;
  std::vector<float> out(image.size());
  for (std::size_t i = 0; i < image.size(); ++i) out[i] = float(image[i] / (illumination[i] + floor));
  return out;
}

std::vector<float> muted_above(const Grid& g, const std::vector<float>& image, double depth, double taper) {
  if (image.size() != std::size_t(g.points())) throw Error("taihu: muted_above: the image does not match the grid");
  std::vector<float> out = image;
  for (long z = 0; z < g.n[0]; ++z) {
    const double d = double(z) * g.h[0];
    const double w = d >= depth ? 1.0 : d <= depth - taper ? 0.0 : 0.5 + 0.5 * std::cos(M_PI * (depth - d) / taper);
    if (w == 1.0) continue;
    for (long c = 0; c < g.n[1] * g.n[2]; ++c) out[std::size_t(c * g.n[0] + z)] = float(w * out[std::size_t(c * g.n[0] + z)]);
  }
  return out;
}

std::vector<float> laplacian_filtered(const Grid& g, const std::vector<float>& image) {
  if (image.size() != std::size_t(g.points())) throw Error("taihu: laplacian_filtered: the image does not match the grid");
  std::vector<float> out(image.size(), 0.f);
  const long stride[3] = {1, g.n[0], g.n[0] * g.n[1]};
  for (long i2 = 0; i2 < g.n[2]; ++i2)
    for (long i1 = 0; i1 < g.n[1]; ++i1)
      for (long i0 = 0; i0 < g.n[0]; ++i0) {
        const long c[3] = {i0, i1, i2};
        const long i = (i2 * g.n[1] + i1) * g.n[0] + i0;
        double lap = 0;
        for (int a = 0; a < g.dim; ++a) {
          const double lo = c[a] > 0 ? image[std::size_t(i - stride[a])] : 0.0;
          const double hi = c[a] + 1 < g.n[a] ? image[std::size_t(i + stride[a])] : 0.0;
          lap += (lo - 2.0 * image[std::size_t(i)] + hi) / (g.h[a] * g.h[a]);
        }
        out[std::size_t(i)] = float(-lap);
      }
  return out;
}

Model smoothed_model(const Model& model, double radius_metres) {
  Model out = model;
  if (!(radius_metres > 0)) return out;
  const Grid& g = model.grid;
  std::vector<double> s(model.vp.size());
  for (std::size_t i = 0; i < s.size(); ++i) s[i] = 1.0 / model.vp[i];
  std::vector<double> tmp(s.size());
  const long stride[3] = {1, g.n[0], g.n[0] * g.n[1]};
  // A running box mean along each axis (edge cells repeated), twice.
  for (int pass = 0; pass < 2; ++pass)
    for (int a = 0; a < g.dim; ++a) {
      const long r = std::lround(radius_metres / g.h[a]);
      if (r < 1) continue;
      const long n = g.n[a];
      for (std::size_t i = 0; i < s.size(); ++i) {
        const long c = long(i) / stride[a] % n;
        const long base = long(i) - c * stride[a];
        double sum = 0;
        for (long k = -r; k <= r; ++k) sum += s[std::size_t(base + std::clamp(c + k, 0L, n - 1) * stride[a])];
        tmp[i] = sum / double(2 * r + 1);
      }
      s.swap(tmp);
    }
  for (std::size_t i = 0; i < s.size(); ++i) out.vp[i] = float(1.0 / s[i]);
  return out;
}

}  // namespace taihu::stencil
