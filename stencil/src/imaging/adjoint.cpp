// Adjoint propagation and the adjoint source wavelet (see migration.hpp).
#include <algorithm>
#include <array>
#include <cmath>

#include "kernels/kernel_api.hpp"
#include "physics/divergence.hpp"
#include "taihu/arch/error.hpp"
#include "taihu/stencil/migration.hpp"

namespace taihu::stencil {
namespace {

// Calls f(point index in the layout, weight) for every grid point of a sinc stencil
// (points outside the grid are dropped, as Propagator::sample does).
template <class F>
void for_each_point(const Grid& g, const Layout& L, const PointStencil& st, F&& f) {
  for (int k2 = 0; k2 < st.count[2]; ++k2)
    for (int k1 = 0; k1 < st.count[1]; ++k1)
      for (int k0 = 0; k0 < st.count[0]; ++k0) {
        const long c[3] = {st.first[0] + k0, st.first[1] + k1, st.first[2] + k2};
        const float w = st.w[0][k0] * st.w[1][k1] * st.w[2][k2];
        if (w == 0.f) continue;
        bool inside = true;
        for (int a = 0; a < 3; ++a) inside = inside && c[a] >= 0 && c[a] < g.n[a];
        if (inside) f(L.index(c[0], c[1], c[2]), w);
      }
}

}  // namespace

void propagate_adjoint(const Model& model, const std::vector<Position>& receivers, const std::vector<float>& data,
                       const Options& options, const std::function<void(int n, const Propagator& prop)>& each) {
  const Options opt = resolved(model, options);
  const int nt = opt.nt;
  if (data.size() != receivers.size() * std::size_t(nt))
    throw Error("taihu: propagate_adjoint: " + std::to_string(data.size()) + " samples for " +
                std::to_string(receivers.size()) + " receivers of " + std::to_string(nt) + " steps");
  Propagator prop(model, opt);
  const Grid& g = model.grid;
  const Layout& L = prop.current().layout();
  const float* A = prop.velocity_term().data();
  // R^T with the weights run_shot samples with, times A (mu = A lambda).
  struct Tap {
    long index;
    float weight;  // A * sinc weight
    std::size_t receiver;
  };
  std::vector<Tap> taps;
  for (std::size_t r = 0; r < receivers.size(); ++r)
    for_each_point(g, L, point_stencil(g, receivers[r]), [&](long i, float w) { taps.push_back({i, A[i] * w, r}); });
  // Variable density: the kernel steps mu with A (L mu - g . D mu), g_a = D_a ln(rho);
  // the transpose needs A (L mu + sum_a D_a(g_a mu)), so the difference
  // A sum_a (D_a(g_a mu) + g_a D_a mu) is added here (D_a antisymmetric: centred
  // weights, zero outside the grid).
  const bool density = model.physics == Physics::acoustic_density;
  const kernels::FdWeights fd = kernels::make_weights(g, opt.space_order);
  std::array<std::vector<float>, 3> grad;  // g_a over the padded layout
  std::vector<float> product;              // g_a mu, one axis at a time
  if (density) {
    std::vector<float> lnrho(std::size_t(L.total), 0.f);
    for (long i2 = -L.pad[2]; i2 < L.n[2] + L.pad[2]; ++i2)
      for (long i1 = -L.pad[1]; i1 < L.n[1] + L.pad[1]; ++i1)
        for (long i0 = -L.pad[0]; i0 < L.n[0] + L.pad[0]; ++i0) {
          const long c0 = std::clamp(i0, 0L, g.n[0] - 1), c1 = std::clamp(i1, 0L, g.n[1] - 1),
                     c2 = std::clamp(i2, 0L, g.n[2] - 1);
          lnrho[std::size_t(L.index(i0, i1, i2))] = float(std::log(double(model.rho[std::size_t((c2 * g.n[1] + c1) * g.n[0] + c0)])));
        }
    const long stride[3] = {1, L.s1, L.s2};
    for (int a = 0; a < g.dim; ++a) {
      grad[a].assign(std::size_t(L.total), 0.f);
      for (long i2 = 0; i2 < L.n[2]; ++i2)
        for (long i1 = 0; i1 < L.n[1]; ++i1)
          for (long i0 = 0; i0 < L.n[0]; ++i0) {
            const long i = L.index(i0, i1, i2);
            float d = 0.f;
            for (int k = 1; k <= fd.half; ++k) d += fd.d1[a][k] * (lnrho[std::size_t(i + k * stride[a])] - lnrho[std::size_t(i - k * stride[a])]);
            grad[a][std::size_t(i)] = d;
          }
    }
    product.assign(std::size_t(L.total), 0.f);
  }
  int n = nt - 1;
  const std::function<void(Field&)> inject = [&](Field& next) {
    float* u = next.data();
    if (density) {
      const float* mu = prop.current().data();  // mu(n+1): the level the kernel just used
      const long stride[3] = {1, L.s1, L.s2};
      for (int a = 0; a < g.dim; ++a) {
        const float* ga = grad[a].data();
        for (long i2 = 0; i2 < L.n[2]; ++i2)
          for (long i1 = 0; i1 < L.n[1]; ++i1)
            for (long i0 = 0; i0 < L.n[0]; ++i0) {
              const long i = L.index(i0, i1, i2);
              product[std::size_t(i)] = ga[i] * mu[i];
            }
        const float* p = product.data();
        for (long i2 = 0; i2 < L.n[2]; ++i2)
          for (long i1 = 0; i1 < L.n[1]; ++i1)
            for (long i0 = 0; i0 < L.n[0]; ++i0) {
              const long i = L.index(i0, i1, i2), s = stride[a];
              float dgm = 0.f, dm = 0.f;
              for (int k = 1; k <= fd.half; ++k) {
                dgm += fd.d1[a][k] * (p[i + k * s] - p[i - k * s]);
                dm += fd.d1[a][k] * (mu[i + k * s] - mu[i - k * s]);
              }
              u[i] += A[i] * (dgm + ga[i] * dm);
            }
      }
    }
    for (const Tap& t : taps) u[t.index] += t.weight * data[t.receiver * std::size_t(nt) + std::size_t(n)];
  };
  // The adjoint of an injection-free run diverges exactly when the forward one does.
  std::vector<float> unit(std::size_t(nt), 0.f);
  unit[0] = 1.f;
  DivergenceGuard guard(model, opt, unit);
  for (; n >= 0; --n) {
    prop.step(inject);
    const int done = nt - n;
    if (done % kDivergenceCheckEvery == 0 || n == 0) {
      const float m = prop.max_abs();
      if (!std::isfinite(m)) guard.check(m, done);
    }
    each(n, prop);
  }
}

std::vector<double> adjoint_source_wavelet(const Model& model, const Position& source,
                                           const std::vector<Position>& receivers, const std::vector<float>& data,
                                           const Options& options) {
  const Options opt = resolved(model, options);
  const Grid& g = model.grid;
  const PointStencil st = point_stencil(g, source);
  const double cell = g.h[0] * g.h[1] * (g.dim == 3 ? g.h[2] : 1.0);
  std::vector<double> out(std::size_t(opt.nt), 0.0);
  // The forward step adds float(dt^2 / cell * f) * w to u(n+1): f(n)'s adjoint is
  // dt^2/cell * sum w lambda(n+1), lambda(n+1) = mu / A read when step n+1 is done.
  propagate_adjoint(model, receivers, data, opt, [&](int n, const Propagator& prop) {
    if (n == 0) return;
    const float* mu = prop.current().data();
    const float* A = prop.velocity_term().data();
    double sum = 0;
    for_each_point(g, prop.current().layout(), st, [&](long i, float w) { sum += double(w) * mu[i] / A[i]; });
    out[std::size_t(n - 1)] = sum * opt.dt * opt.dt / cell;
  });
  return out;
}

}  // namespace taihu::stencil
