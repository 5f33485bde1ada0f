// The optimized CPU kernel (at the ISA TAIHU_ISA selects) against the reference kernel
// for every physics, 2D and 3D, several space orders, random fields and coefficients.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>

#include "isa_skip.hpp"
#include "taihu/arch/error.hpp"
#include "taihu/arch/isa.hpp"
#include "taihu/arch/threads.hpp"
#include "taihu/stencil/propagator.hpp"
#include "taihu/stencil/wavelet.hpp"

using namespace taihu::stencil;

namespace {

// Random velocity (and density or anisotropy fields, as `physics` needs) on grid `g`.
Model random_model(const Grid& g, Physics physics, std::mt19937& rng) {
  Model m = homogeneous_model(g, 2000.f);
  m.physics = physics;
  std::uniform_real_distribution<float> u(0, 1);
  const auto n = m.vp.size();
  for (auto& v : m.vp) v = 1500 + 2500 * u(rng);
  if (physics == Physics::acoustic_density) {
    m.rho.resize(n);
    for (auto& r : m.rho) r = 1000 + 1500 * u(rng);
  }
  if (physics == Physics::tti) {
    m.theta.resize(n);
    m.phi.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
      m.theta[i] = 0.8f * u(rng);
      m.phi[i] = 3.f * u(rng);
    }
  }
  if (physics == Physics::vti || physics == Physics::tti) {
    m.epsilon.resize(n);
    m.delta.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
      m.delta[i] = 0.1f * u(rng);
      m.epsilon[i] = m.delta[i] + 0.2f * u(rng);
    }
  }
  return m;
}

// A small random model: 37 x 23 x 19 points in 3D, 53 x 41 in 2D.
Model random_model(int dim, Physics physics, std::mt19937& rng) {
  Grid g;
  g.dim = dim;
  g.n = dim == 3 ? std::array<long, 3>{37, 23, 19} : std::array<long, 3>{53, 41, 1};
  g.h = {8, 10, dim == 3 ? 12.0 : 1.0};
  return random_model(g, physics, rng);
}

// A 3D grid of ~200k points, three threads' worth of y slabs (parallel_size.hpp).
Grid three_slab_grid(std::array<long, 3> n) {
  Grid g;
  g.dim = 3;
  g.n = n;
  g.h = {10, 12, 9};
  return g;
}

void randomize(Propagator& p, std::mt19937& rng) {
  std::normal_distribution<float> nd;
  for (Field* f : p.current_fields()) {
    const Layout& L = f->layout();
    for (long i2 = 0; i2 < L.n[2]; ++i2)
      for (long i1 = 0; i1 < L.n[1]; ++i1)
        for (long i0 = 0; i0 < L.n[0]; ++i0) f->at(i0, i1, i2) = nd(rng);
  }
  Field& prev = p.previous();
  const Layout& L = prev.layout();
  for (long i2 = 0; i2 < L.n[2]; ++i2)
    for (long i1 = 0; i1 < L.n[1]; ++i1)
      for (long i0 = 0; i0 < L.n[0]; ++i0) prev.at(i0, i1, i2) = nd(rng);
}

// Largest |x - y| and largest |y| over two wavefields of the same layout.
struct FieldDiff {
  double maxabs = 0, maxdiff = 0;
};
FieldDiff field_diff(const Field& x, const Field& y) {
  const Layout& L = x.layout();
  FieldDiff d;
  for (long i2 = 0; i2 < L.n[2]; ++i2)
    for (long i1 = 0; i1 < L.n[1]; ++i1)
      for (long i0 = 0; i0 < L.n[0]; ++i0) {
        d.maxabs = std::max(d.maxabs, double(std::abs(y.at(i0, i1, i2))));
        d.maxdiff = std::max(d.maxdiff, double(std::abs(x.at(i0, i1, i2) - y.at(i0, i1, i2))));
      }
  return d;
}

// A 3D model of nz x 11 x 10 points (z lines of length nz) with no boundaries, and the
// options of the optimized kernel at the given space order.
struct ThinCase {
  Model model;
  Options options;
};
ThinCase thin_case(Physics physics, long nz, int order, unsigned seed) {
  std::mt19937 rng(seed);
  Grid g;
  g.dim = 3;
  g.n = {nz, 11, 10};
  g.h = {8, 10, 12};
  ThinCase c{random_model(g, physics, rng), Options{}};
  c.options.space_order = order;
  c.options.boundary.kind = BoundaryKind::none;
  return c;
}

// `steps` steps of the kernel `o` asks for and of the reference, from the same random
// wavefields (drawn with `field_seed`).
FieldDiff steps_vs_reference(const Model& m, const Options& o, int steps, unsigned field_seed) {
  Options r = o;
  r.kernel = KernelKind::reference;
  Propagator fast(m, o), ref(m, r);
  std::mt19937 a(field_seed), b(field_seed);
  randomize(fast, a);
  randomize(ref, b);
  for (int it = 0; it < steps; ++it) {
    fast.step(nullptr, 0.f);
    ref.step(nullptr, 0.f);
  }
  return field_diff(fast.current(), ref.current());
}

// Relative L2 distance |x - y| / |y| over the interior of two wavefields.
double field_rel_l2(const Field& x, const Field& y) {
  const Layout& L = x.layout();
  double num = 0, den = 0;
  for (long i2 = 0; i2 < L.n[2]; ++i2)
    for (long i1 = 0; i1 < L.n[1]; ++i1)
      for (long i0 = 0; i0 < L.n[0]; ++i0) {
        const double d = double(x.at(i0, i1, i2)) - y.at(i0, i1, i2);
        num += d * d;
        den += double(y.at(i0, i1, i2)) * y.at(i0, i1, i2);
      }
  return std::sqrt(num / den);
}

// Relative max error allowed between the optimized kernel and the reference. With half
// coefficients both read the same rounded A (B, C), so acoustic and vti stay at float
// rounding; the density kernel's merged terms G = A grad(ln rho) are rounded as a whole
// (the reference differentiates ln rho itself), a relative 2^-11 of the gradient term.
double reference_tolerance(Physics physics, CoefficientPrecision cp) {
  return cp == CoefficientPrecision::half && physics == Physics::acoustic_density ? 2e-3 : 2e-5;
}

}  // namespace

class KernelsMatchReference : public ::testing::TestWithParam<std::tuple<int, Physics, int>> {};

TEST_P(KernelsMatchReference, FiveSteps) {
  TAIHU_TEST_REQUIRE_ISA();
  const auto [dim, physics, order] = GetParam();
  std::mt19937 rng(1234 + dim * 10 + order);
  const Model m = random_model(dim, physics, rng);
  Options o;
  o.space_order = order;
  o.boundary.kind = physics == Physics::tti ? BoundaryKind::sponge : BoundaryKind::cpml;
  o.boundary.width = 5;
  o.coefficients = CoefficientPrecision::float32;  // (HalfCoefficients covers half)
  const FieldDiff diff = steps_vs_reference(m, o, 5, 7);
  ASSERT_GT(diff.maxabs, 0.0);
  EXPECT_LT(diff.maxdiff, 2e-5 * diff.maxabs) << "kernel " << Propagator(m, o).kernel_in_use();
}

namespace {

// Every dimension x physics x space order, named like "3d_vti_o8" (shared by the
// float and the half-coefficient suites).
auto every_kernel_case() {
  return ::testing::Combine(::testing::Values(2, 3),
                            ::testing::Values(Physics::acoustic, Physics::acoustic_density, Physics::vti,
                                              Physics::tti),
                            ::testing::Values(2, 8, 16));
}

std::string kernel_case_name(const ::testing::TestParamInfo<std::tuple<int, Physics, int>>& p) {
  return std::to_string(std::get<0>(p.param)) + "d_" + physics_name(std::get<1>(p.param)) + "_o" +
         std::to_string(std::get<2>(p.param));
}

}  // namespace

INSTANTIATE_TEST_SUITE_P(
    Stencil, KernelsMatchReference,
    every_kernel_case(), kernel_case_name);

// The 3D acoustic line kernels of every space order, and the hand-written order-8 x86
// kernel (acoustic_o8_x86.hpp: 16 points per iteration at AVX2, 16-wide at AVX-512,
// the rest of the line by the template kernel), on z lines of lengths around the vector
// widths (1 .. 2 vectors, ragged ends, shorter than one vector), against the reference;
// TAIHU_STENCIL_HAND=0 (template kernels only) must agree too. Also the temporally
// blocked pair on those lengths equals two single steps bitwise.
TEST(StencilLineLengths, AcousticMatchesReferenceOnEveryLength) {
  TAIHU_TEST_REQUIRE_ISA();
  for (long nz : {3L, 8L, 15L, 16L, 17L, 24L, 31L, 32L, 33L, 47L, 49L}) {
    for (int order : {4, 8}) {
      for (const char* hand : {"1", "0"}) {
       for (CoefficientPrecision cp : {CoefficientPrecision::float32, CoefficientPrecision::half}) {
        setenv("TAIHU_STENCIL_HAND", hand, 1);
        ThinCase tc = thin_case(Physics::acoustic, nz, order, static_cast<unsigned>(nz * 31 + order));
        tc.options.coefficients = cp;
        const FieldDiff diff = steps_vs_reference(tc.model, tc.options, 3, 5);
        ASSERT_GT(diff.maxabs, 0.0);
        EXPECT_LT(diff.maxdiff, 2e-5 * diff.maxabs)
            << "nz " << nz << " order " << order << " hand " << hand << " " << coefficient_precision_name(cp);

        // Two fused steps == two single steps, bitwise (the same line kernel runs both).
        Propagator single(tc.model, tc.options), fused(tc.model, tc.options);
        const Layout& L = single.current().layout();
        std::mt19937 c(6), d(6);
        randomize(single, c);
        randomize(fused, d);
        single.step(nullptr, 0.f);
        single.step(nullptr, 0.f);
        fused.step_pair_blocked();
        long mismatches = 0;
        for (long i2 = 0; i2 < L.n[2]; ++i2)
          for (long i1 = 0; i1 < L.n[1]; ++i1)
            for (long i0 = 0; i0 < L.n[0]; ++i0)
              mismatches += single.current().at(i0, i1, i2) != fused.current().at(i0, i1, i2);
        EXPECT_EQ(mismatches, 0) << "nz " << nz << " order " << order << " hand " << hand << " "
                                 << coefficient_precision_name(cp);
       }
      }
    }
  }
  unsetenv("TAIHU_STENCIL_HAND");
}

// The order-8 acoustic sweep two planes at a time (AVX2 line_pair_acoustic_o8_x86[_half], y
// neighbours loaded once for both planes; TAIHU_STENCIL_PAIR=0 turns it off) runs the
// single-line arithmetic per point: bitwise equal to single lines, on z lines with ragged
// ends and in slabs of 1-3 threads (odd slab heights leave a last single plane), and
// within the usual tolerance of the reference, with float and half coefficients. A weight
// or plane off by one fails both.
TEST(StencilPlanePairs, BitwiseEqualToSingleLines) {
  TAIHU_TEST_REQUIRE_ISA();
  for (long nz : {16L, 17L, 33L, 47L, 64L}) {
    for (int threads : {1, 2, 3}) {
     for (CoefficientPrecision cp : {CoefficientPrecision::float32, CoefficientPrecision::half}) {
      taihu::arch::set_num_threads(threads);
      ThinCase tc = thin_case(Physics::acoustic, nz, 8, static_cast<unsigned>(nz * 7 + threads));
      tc.options.coefficients = cp;
      const FieldDiff diff = steps_vs_reference(tc.model, tc.options, 3, 9);
      ASSERT_GT(diff.maxabs, 0.0);
      EXPECT_LT(diff.maxdiff, 2e-5 * diff.maxabs)
          << "nz " << nz << ", " << threads << " threads, " << coefficient_precision_name(cp);
      Propagator pairs(tc.model, tc.options), lines(tc.model, tc.options);
      std::mt19937 r1(17), r2(17);
      randomize(pairs, r1);
      randomize(lines, r2);
      for (int it = 0; it < 2; ++it) {
        pairs.step(nullptr, 0.f);
        setenv("TAIHU_STENCIL_PAIR", "0", 1);
        lines.step(nullptr, 0.f);
        unsetenv("TAIHU_STENCIL_PAIR");
      }
      const Layout& L = pairs.current().layout();
      long mismatches = 0;
      for (long i2 = 0; i2 < L.n[2]; ++i2)
        for (long i1 = 0; i1 < L.n[1]; ++i1)
          for (long i0 = 0; i0 < L.n[0]; ++i0)
            mismatches += pairs.current().at(i0, i1, i2) != lines.current().at(i0, i1, i2);
      EXPECT_EQ(mismatches, 0) << "nz " << nz << ", " << threads << " threads, " << coefficient_precision_name(cp);
     }
    }
  }
  taihu::arch::set_num_threads(0);
}

// The 3D order-8 variable-density and VTI line kernels (coupled_o8_avx2.hpp on AVX2:
// 8 points per iteration, the ragged end by the template kernel) on z lines around the
// vector width, with the hand-written kernels on and off, against the reference.
TEST(StencilLineLengths, DensityAndVtiMatchReferenceOnEveryLength) {
  TAIHU_TEST_REQUIRE_ISA();
  for (Physics physics : {Physics::acoustic_density, Physics::vti}) {
    for (long nz : {3L, 7L, 8L, 9L, 16L, 17L, 31L}) {
      for (const char* hand : {"1", "0"}) {
        for (CoefficientPrecision cp : {CoefficientPrecision::float32, CoefficientPrecision::half}) {
          setenv("TAIHU_STENCIL_HAND", hand, 1);
          ThinCase tc = thin_case(physics, nz, 8, static_cast<unsigned>(nz * 17 + int(physics)));
          tc.options.coefficients = cp;
          const FieldDiff diff = steps_vs_reference(tc.model, tc.options, 3, 5);
          ASSERT_GT(diff.maxabs, 0.0);
          EXPECT_LT(diff.maxdiff, reference_tolerance(physics, cp) * diff.maxabs)
              << physics_name(physics) << " nz " << nz << " hand " << hand << " " << coefficient_precision_name(cp);
        }
      }
    }
  }
  unsetenv("TAIHU_STENCIL_HAND");
}

TEST(TemporalBlocking, StepPairEqualsTwoSteps) {
  TAIHU_TEST_REQUIRE_ISA();
  std::mt19937 rng(99);
  Model m = random_model(3, Physics::acoustic, rng);
  Options o;
  o.space_order = 8;
  o.boundary.kind = BoundaryKind::none;
  Propagator a(m, o), b(m, o);
  std::mt19937 r1(5), r2(5);
  randomize(a, r1);
  randomize(b, r2);
  for (int i = 0; i < 2; ++i) {
    a.step_pair_blocked();
    b.step(nullptr, 0.f);
    b.step(nullptr, 0.f);
  }
  const Layout& L = a.current().layout();
  for (long i2 = 0; i2 < L.n[2]; ++i2)
    for (long i1 = 0; i1 < L.n[1]; ++i1)
      for (long i0 = 0; i0 < L.n[0]; ++i0) {
        ASSERT_EQ(a.current().at(i0, i1, i2), b.current().at(i0, i1, i2));
        ASSERT_EQ(a.previous().at(i0, i1, i2), b.previous().at(i0, i1, i2));
      }
  Options bad = o;
  bad.boundary.kind = BoundaryKind::cpml;
  bad.boundary.width = 5;
  Propagator c(m, bad);
  EXPECT_THROW(c.step_pair_blocked(), taihu::Error);
}

// The wavefront with several y slabs per call (threads meet through flags at the slab
// edges, more threads than this machine's cores included), or with x tiles over threads
// pipelined along y (TAIHU_STENCIL_PAIR_SPLIT=x), over whole planes (L2-sized tiles) and in
// tiles of 7 x lines (TAIHU_STENCIL_TILE), equals two single steps bitwise, for a short
// and a long stencil and order 8 (two planes per round on AVX2; 3 threads give slabs of
// odd height).
TEST(TemporalBlocking, SlabsOfThreadsEqualTwoSteps) {
  TAIHU_TEST_REQUIRE_ISA();
  std::mt19937 rng(3);
  const Model m = random_model(three_slab_grid({48, 40, 104}), Physics::acoustic, rng);
  for (const char* split : {"y", "x"})
  for (const char* tile : {"0", "7"})
  for (int threads : {2, 3}) {
    for (int order : {4, 8, 16}) {  // (8: the AVX2 plane-pair kernel, odd slab heights)
      taihu::arch::set_num_threads(threads);
      setenv("TAIHU_STENCIL_TILE", tile, 1);
      setenv("TAIHU_STENCIL_PAIR_SPLIT", split, 1);
      Options o;
      o.space_order = order;
      o.boundary.kind = BoundaryKind::none;
      Propagator a(m, o), b(m, o);
      std::mt19937 r1(11), r2(11);
      randomize(a, r1);
      randomize(b, r2);
      a.step_pair_blocked();
      unsetenv("TAIHU_STENCIL_TILE");
      unsetenv("TAIHU_STENCIL_PAIR_SPLIT");
      b.step(nullptr, 0.f);
      b.step(nullptr, 0.f);
      const Layout& L = a.current().layout();
      long mismatches = 0;
      for (long i2 = 0; i2 < L.n[2]; ++i2)
        for (long i1 = 0; i1 < L.n[1]; ++i1)
          for (long i0 = 0; i0 < L.n[0]; ++i0)
            mismatches += a.current().at(i0, i1, i2) != b.current().at(i0, i1, i2) ||
                          a.previous().at(i0, i1, i2) != b.previous().at(i0, i1, i2);
      EXPECT_EQ(mismatches, 0) << threads << " threads, order " << order << ", tile " << tile << ", split " << split;
    }
  }
  taihu::arch::set_num_threads(0);
}

// The 3D sweep in tiles of x lines (TAIHU_STENCIL_TILE; here 5 lines over 23, so a ragged
// last tile) matches the reference for every optimized physics; a bad value is an error.
TEST(TiledSweep, MatchesReference) {
  TAIHU_TEST_REQUIRE_ISA();
  for (Physics physics : {Physics::acoustic, Physics::acoustic_density, Physics::vti, Physics::tti}) {
    std::mt19937 rng(77);
    const Model m = random_model(3, physics, rng);
    Options o;
    o.space_order = 8;
    o.boundary.kind = BoundaryKind::none;
    o.coefficients = CoefficientPrecision::float32;
    Options r = o;
    r.kernel = KernelKind::reference;
    Propagator fast(m, o), ref(m, r);
    std::mt19937 a(9), b(9);
    randomize(fast, a);
    randomize(ref, b);
    setenv("TAIHU_STENCIL_TILE", "5", 1);
    for (int it = 0; it < 3; ++it) {
      fast.step(nullptr, 0.f);
      ref.step(nullptr, 0.f);
    }
    unsetenv("TAIHU_STENCIL_TILE");
    const FieldDiff diff = field_diff(fast.current(), ref.current());
    ASSERT_GT(diff.maxabs, 0.0);
    EXPECT_LT(diff.maxdiff, 2e-5 * diff.maxabs) << physics_name(physics);
  }
  std::mt19937 rng(1);
  const Model m = random_model(3, Physics::acoustic, rng);
  Options defaults;
  defaults.boundary.width = 5;  // the default 20 does not fit 37x23x19 (check_boundary_fits)
  Propagator p(m, defaults);
  setenv("TAIHU_STENCIL_TILE", "wide", 1);
  EXPECT_THROW(p.step(nullptr, 0.f), taihu::Error);
  unsetenv("TAIHU_STENCIL_TILE");
}

// The automatic tile widths (no TAIHU_STENCIL_TILE): with z lines of 2053 points an L2-sized
// y window (l2_tile_lines) or derivative ring (tti_tile_lines) holds only a few x lines on
// any L2 up to tens of MiB, so the 23 lines split into ragged tiles; 2 threads, the
// dynamic schedule, every optimized physics still matches the reference (the same
// tolerance as above: float sums in another order over 3 steps).
TEST(TiledSweep, AutomaticTilesMatchReference) {
  TAIHU_TEST_REQUIRE_ISA();
  unsetenv("TAIHU_STENCIL_TILE");
  for (Physics physics : {Physics::acoustic, Physics::acoustic_density, Physics::vti, Physics::tti}) {
    std::mt19937 rng(78);
    Grid g;
    g.dim = 3;
    g.n = {2053, 23, 10};
    g.h = {8, 10, 12};
    const Model m = random_model(g, physics, rng);
    Options o;
    o.space_order = 8;
    o.boundary.kind = BoundaryKind::none;
    o.coefficients = CoefficientPrecision::float32;
    Options r = o;
    r.kernel = KernelKind::reference;
    taihu::arch::set_num_threads(2);
    Propagator fast(m, o), ref(m, r);
    std::mt19937 a(10), b(10);
    randomize(fast, a);
    randomize(ref, b);
    for (int it = 0; it < 3; ++it) {
      fast.step(nullptr, 0.f);
      ref.step(nullptr, 0.f);
    }
    taihu::arch::set_num_threads(0);
    for (int f = 0; f < int(fast.current_fields().size()); ++f) {
      const FieldDiff diff = field_diff(*fast.current_fields()[f], *ref.current_fields()[f]);
      ASSERT_GT(diff.maxabs, 0.0);
      EXPECT_LT(diff.maxdiff, 2e-5 * diff.maxabs) << physics_name(physics) << " field " << f;
    }
  }
}

// TAIHU_STENCIL_SCHEDULE=dynamic (the default 3D single step: (x tile, y chunk) blocks
// handed to free threads) equals the static y slabs (=static) bitwise: every point runs the same line kernel
// whichever block it falls in (odd chunk heights end with single planes, which the
// plane-pair kernel matches bitwise). 3 threads, orders 4 and 8, float and half
// coefficients, whole planes and 7-line tiles; and it matches the reference.
TEST(TiledSweep, DynamicScheduleEqualsStaticSlabs) {
  TAIHU_TEST_REQUIRE_ISA();
  std::mt19937 rng(31);
  const Model m = random_model(three_slab_grid({40, 30, 170}), Physics::acoustic, rng);
  for (int order : {4, 8})
    for (CoefficientPrecision cp : {CoefficientPrecision::float32, CoefficientPrecision::half})
      for (const char* tile : {"0", "7"}) {
        Options o;
        o.space_order = order;
        o.boundary.kind = BoundaryKind::none;
        o.coefficients = cp;
        Options r = o;
        r.kernel = KernelKind::reference;
        taihu::arch::set_num_threads(3);
        setenv("TAIHU_STENCIL_TILE", tile, 1);
        Propagator slabs(m, o), blocks(m, o), ref(m, r);
        std::mt19937 a(5), b(5), c(5);
        randomize(slabs, a);
        randomize(blocks, b);
        randomize(ref, c);
        for (int it = 0; it < 2; ++it) {
          setenv("TAIHU_STENCIL_SCHEDULE", "static", 1);
          slabs.step(nullptr, 0.f);
          setenv("TAIHU_STENCIL_SCHEDULE", "dynamic", 1);
          blocks.step(nullptr, 0.f);
          unsetenv("TAIHU_STENCIL_SCHEDULE");
          ref.step(nullptr, 0.f);
        }
        unsetenv("TAIHU_STENCIL_TILE");
        taihu::arch::set_num_threads(0);
        const Layout& L = slabs.current().layout();
        long mismatches = 0;
        for (long i2 = 0; i2 < L.n[2]; ++i2)
          for (long i1 = 0; i1 < L.n[1]; ++i1)
            for (long i0 = 0; i0 < L.n[0]; ++i0)
              mismatches += slabs.current().at(i0, i1, i2) != blocks.current().at(i0, i1, i2);
        EXPECT_EQ(mismatches, 0) << "order " << order << " tile " << tile << " " << coefficient_precision_name(cp);
        const FieldDiff diff = field_diff(blocks.current(), ref.current());
        ASSERT_GT(diff.maxabs, 0.0);
        EXPECT_LT(diff.maxdiff, 2e-5 * diff.maxabs) << "order " << order << " tile " << tile;
      }
}

// 3D TTI streams y slabs with a per-thread ring of derivative planes: with 3 threads'
// slabs (each primes its ring from its neighbours' planes), over whole planes and in
// tiles of 7 x lines (each tile re-primes its ring), it still matches the reference.
TEST(StencilTti, ThreeThreadSlabsMatchReference) {
  TAIHU_TEST_REQUIRE_ISA();
  std::mt19937 rng(21);
  const Model m = random_model(three_slab_grid({40, 30, 170}), Physics::tti, rng);
  Options o;
  o.space_order = 8;
  o.boundary.kind = BoundaryKind::none;
  Options r = o;
  r.kernel = KernelKind::reference;
  for (const char* tile : {"0", "7"}) {
    taihu::arch::set_num_threads(3);
    setenv("TAIHU_STENCIL_TILE", tile, 1);
    Propagator fast(m, o), ref(m, r);
    std::mt19937 a(4), b(4);
    randomize(fast, a);
    randomize(ref, b);
    for (int it = 0; it < 2; ++it) {
      fast.step(nullptr, 0.f);
      ref.step(nullptr, 0.f);
    }
    unsetenv("TAIHU_STENCIL_TILE");
    taihu::arch::set_num_threads(0);
    const FieldDiff diff = field_diff(fast.current(), ref.current());
    ASSERT_GT(diff.maxabs, 0.0);
    EXPECT_LT(diff.maxdiff, 2e-5 * diff.maxabs) << "tile " << tile;
  }
}

// Compressed coefficients (Options::coefficients = half): the optimized kernel reading the
// packed halves against the reference reading the same rounded values as floats, every
// physics (tti keeps float storage, rounded), 2D and 3D, orders 2, 8 and 16. The same run
// against the float32 reference must differ by more than that tolerance (acoustic, vti,
// tti), or the test could not tell rounded coefficients from unrounded ones.
class HalfCoefficients : public ::testing::TestWithParam<std::tuple<int, Physics, int>> {};

TEST_P(HalfCoefficients, MatchReferenceOnRoundedCoefficients) {
  TAIHU_TEST_REQUIRE_ISA();
  const auto [dim, physics, order] = GetParam();
  std::mt19937 rng(4321 + dim * 10 + order);
  const Model m = random_model(dim, physics, rng);
  Options o;
  o.space_order = order;
  o.boundary.kind = physics == Physics::tti ? BoundaryKind::sponge : BoundaryKind::cpml;
  o.boundary.width = 5;
  o.coefficients = CoefficientPrecision::half;
  const FieldDiff diff = steps_vs_reference(m, o, 5, 7);
  ASSERT_GT(diff.maxabs, 0.0);
  const double tol = reference_tolerance(physics, o.coefficients);
  EXPECT_LT(diff.maxdiff, tol * diff.maxabs) << "kernel " << Propagator(m, o).kernel_in_use();

  Options f = o;
  f.coefficients = CoefficientPrecision::float32;
  f.kernel = KernelKind::reference;
  Propagator half(m, o), single(m, f);
  std::mt19937 a(7), b(7);
  randomize(half, a);
  randomize(single, b);
  for (int it = 0; it < 5; ++it) {
    half.step(nullptr, 0.f);
    single.step(nullptr, 0.f);
  }
  const FieldDiff vs_float = field_diff(half.current(), single.current());
  if (physics != Physics::acoustic_density) {
    EXPECT_GT(vs_float.maxdiff, tol * vs_float.maxabs);
  }
  EXPECT_LT(vs_float.maxdiff, 5e-3 * vs_float.maxabs);  // but stays small
}

INSTANTIATE_TEST_SUITE_P(
    Stencil, HalfCoefficients,
    every_kernel_case(), kernel_case_name);

// The precision cost of half coefficients on a propagating wave: a shot in a layered 3D
// model (acoustic, density, vti; CPML), 120 steps, the wavefield and the gather of the
// half run against the float32 run: relative L2 below 1e-3 (measured: stencil/README.md),
// and not zero (the halves are really used).
TEST(StencilHalfCoefficients, WavefieldAndGatherCloseToFloat) {
  TAIHU_TEST_REQUIRE_ISA();
  Grid g;
  g.dim = 3;
  g.n = {48, 40, 36};
  g.h = {10, 10, 10};
  for (Physics physics : {Physics::acoustic, Physics::acoustic_density, Physics::vti}) {
    Model m = homogeneous_model(g, 2000.f);
    m.physics = physics;
    const auto n = m.vp.size();
    if (physics == Physics::acoustic_density) m.rho.assign(n, 2000.f);
    if (physics == Physics::vti) {
      m.epsilon.assign(n, 0.2f);
      m.delta.assign(n, 0.1f);
    }
    for (long y = 0; y < g.n[2]; ++y)  // three layers along z, a smooth gradient in between
      for (long x = 0; x < g.n[1]; ++x)
        for (long z = 0; z < g.n[0]; ++z) {
          const auto i = static_cast<std::size_t>((y * g.n[1] + x) * g.n[0] + z);
          m.vp[i] = z < 16 ? 1800.f : z < 32 ? 2400.f + 10.f * float(z - 16) : 3300.f;
          if (!m.rho.empty()) m.rho[i] = z < 16 ? 1900.f : 2300.f;
        }
    Options o;
    o.space_order = 8;
    o.nt = 120;
    o.coefficients = CoefficientPrecision::float32;
    o.f0 = 15;
    o.boundary.width = 8;
    Shot shot{{100, 200, 180}, {}, {}};
    for (int r = 0; r < 10; ++r) shot.receivers.push_back({50.0, 40.0 + 32.0 * r, 180.0});
    Options half = o;
    half.coefficients = CoefficientPrecision::half;
    const Options ro = resolved(m, o);
    shot.wavelet = ricker(o.f0, ro.dt, o.nt);
    Propagator pf(m, o), ph(m, half);
    std::vector<float> gf, gh;
    const PointStencil src = point_stencil(g, shot.source);
    for (int it = 0; it < o.nt; ++it) {
      pf.step(&src, shot.wavelet[std::size_t(it)]);
      ph.step(&src, shot.wavelet[std::size_t(it)]);
      for (const Position& r : shot.receivers) {
        const PointStencil ps = point_stencil(g, r);
        gf.push_back(pf.sample(ps));
        gh.push_back(ph.sample(ps));
      }
    }
    double num = 0, den = 0;
    for (std::size_t i = 0; i < gf.size(); ++i) {
      num += double(gh[i] - gf[i]) * (gh[i] - gf[i]);
      den += double(gf[i]) * gf[i];
    }
    const double gather = std::sqrt(num / den), field = field_rel_l2(ph.current(), pf.current());
    EXPECT_GT(field, 0.0) << physics_name(physics);
    EXPECT_LT(field, 1e-3) << physics_name(physics);
    EXPECT_LT(gather, 1e-3) << physics_name(physics);
    std::printf("[ half vs float ] %s: wavefield rel L2 %.2e, gather rel L2 %.2e after %d steps\n",
                physics_name(physics), field, gather, o.nt);
  }
}

// coefficients = auto settles to half for density, vti and 3D acoustic and float elsewhere; the
// optimized kernel then reads 2 B per coefficient (packed) instead of 4; bad names throw.
TEST(StencilHalfCoefficients, AutoChoiceAndBytesPerPoint) {
  TAIHU_TEST_REQUIRE_ISA();
  struct Expect {
    Physics physics;
    CoefficientPrecision chosen;
    int float_bytes, half_bytes;
    int dim;
  };
  for (const Expect& x : {Expect{Physics::acoustic, CoefficientPrecision::half, 4, 2, 3},
                          Expect{Physics::acoustic, CoefficientPrecision::float32, 4, 2, 2},
                          Expect{Physics::acoustic_density, CoefficientPrecision::half, 16, 8, 3},
                          Expect{Physics::vti, CoefficientPrecision::half, 12, 6, 3},
                          Expect{Physics::tti, CoefficientPrecision::float32, 36, 36, 3}}) {
    std::mt19937 rng(3);
    const Model m = random_model(x.dim, x.physics, rng);
    Options o;
    o.boundary.kind = BoundaryKind::sponge;
    o.boundary.width = 5;  // the default 20 does not fit 37x23x19 (check_boundary_fits)
    EXPECT_EQ(o.coefficients, CoefficientPrecision::automatic);
    EXPECT_EQ(resolved(m, o).coefficients, x.chosen) << physics_name(x.physics) << " " << x.dim << "D";
    o.coefficients = CoefficientPrecision::float32;
    EXPECT_EQ(Propagator(m, o).coefficient_bytes_per_point(), x.float_bytes) << physics_name(x.physics);
    o.coefficients = CoefficientPrecision::half;  // (tti: A, B, C rounded but kept as floats, like R)
    EXPECT_EQ(Propagator(m, o).coefficient_bytes_per_point(), x.half_bytes) << physics_name(x.physics);
  }
  EXPECT_EQ(parse_coefficient_precision("half"), CoefficientPrecision::half);
  EXPECT_EQ(parse_coefficient_precision("float"), CoefficientPrecision::float32);
  EXPECT_EQ(parse_coefficient_precision("auto"), CoefficientPrecision::automatic);
  EXPECT_THROW(parse_coefficient_precision("bfloat16"), taihu::Error);
}

// A 2D step runs in one OpenMP region (kernel lines, CPML loops, sources by one thread,
// sponge and free surface per line): every physics and boundary, with a source in the
// absorbing corner and an injection callback, on 3 threads, equals the step that forks a
// region per phase (TAIHU_STENCIL_ONE_REGION=0) bit for bit, halos included.
TEST(OneRegionStep, BitwiseEqualToRegionPerPhase) {
  TAIHU_TEST_REQUIRE_ISA();
  Grid g;
  g.dim = 2;
  g.n = {461, 443, 1};  // ~204k points: three threads (parallel_size.hpp)
  g.h = {8, 10, 1};
  struct Case {
    BoundaryKind kind;
    bool free_surface;
  };
  for (Physics physics : {Physics::acoustic, Physics::acoustic_density, Physics::vti, Physics::tti})
    for (Case bc : {Case{BoundaryKind::cpml, false}, Case{BoundaryKind::cpml, true}, Case{BoundaryKind::sponge, true},
                    Case{BoundaryKind::sponge, false}, Case{BoundaryKind::none, false}}) {
      if (physics == Physics::tti && bc.kind == BoundaryKind::cpml) continue;  // not offered for tti
      std::mt19937 rng(11);
      const Model m = random_model(g, physics, rng);
      Options o;
      o.space_order = 8;
      o.boundary.kind = bc.kind;
      o.boundary.width = 12;
      o.boundary.free_surface = bc.free_surface;
      taihu::arch::set_num_threads(3);
      setenv("TAIHU_STENCIL_ONE_REGION", "0", 1);
      Propagator phased(m, o);
      unsetenv("TAIHU_STENCIL_ONE_REGION");
      Propagator fused(m, o);
      std::mt19937 a(5), b(5);
      randomize(phased, a);
      randomize(fused, b);
      const PointStencil src = point_stencil(g, Position{20.0 * g.h[0] + 3.3, 7.0 * g.h[1] + 1.7});
      for (int it = 0; it < 4; ++it) {
        const float amplitude = 1e3f * float(it + 1);
        phased.step(&src, amplitude);
        fused.step(&src, amplitude);
        const std::function<void(Field&)> inject = [&](Field& next) { next.at(5, 430, 0) += 0.25f * float(it); };
        phased.step(inject);
        fused.step(inject);
      }
      taihu::arch::set_num_threads(0);
      const std::string what = std::string(physics_name(physics)) + " " + boundary_name(bc.kind) +
                               (bc.free_surface ? " + free surface" : "");
      const std::vector<Field*> x = phased.current_fields(), y = fused.current_fields();
      ASSERT_EQ(x.size(), y.size());
      for (std::size_t k = 0; k < x.size(); ++k) {
        const long total = x[k]->layout().total;
        EXPECT_EQ(0, std::memcmp(x[k]->data(), y[k]->data(), sizeof(float) * std::size_t(total))) << what << " field " << k;
      }
      EXPECT_EQ(0, std::memcmp(phased.previous().data(), fused.previous().data(),
                               sizeof(float) * std::size_t(phased.previous().layout().total)))
          << what << " previous level";
      const FieldDiff moved = field_diff(fused.current(), fused.previous());
      EXPECT_GT(moved.maxdiff, 0.0) << what;  // the steps did something
    }
}
