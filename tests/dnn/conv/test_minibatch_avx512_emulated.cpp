// The minibatch algorithm's AVX-512 kernels (dnn/src/conv/kernels/avx512/
// minibatch_kernels_avx512.cpp: backward_weights_small, backward_weights_implicit,
// forward_implicit, backward_weights_packed) on any x86 CPU: that source file is
// compiled into this test with its intrinsics resolved to SIMDe's emulation (this
// binary does not link taihu::dnn, so its definitions are the only ones), and each
// kernel is checked against a double-precision loop of its contract in
// minibatch_kernels.hpp, including the odd 8-pixel segment, tile remainders and the
// elements it must leave alone. On AVX-512 CPUs the real instructions are checked by
// test_dnn_conv's minibatch tests under TAIHU_ISA=avx512.
#include "simde_avx512_shims.hpp"  // first: the kernel source below sees the emulation

#include "conv/kernels/avx512/minibatch_kernels_avx512.cpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "kernel_check_random.hpp"

namespace {

namespace mk = taihu::dnn::conv::minibatch_kernels;
using kernel_check::random_floats;
using i64 = std::int64_t;

// A float sum of `terms` products of [-1, 1) values against its double value: float
// rounding grows with the sum of the magnitudes.
void expect_close(float got, double want, double magnitude, const std::string& where) {
  EXPECT_NEAR(got, want, 2e-6 * magnitude + 1e-6) << where;
}

TEST(DnnConvAvx512Emulated, MinibatchSmallBackwardWeightsMatchesTheDefinition) {
  // kg: 4-channel tiles and single rows; rows: 6-column tiles and every remainder;
  // depth: whole vectors, a masked tail, and more than one 512-pixel pass.
  for (i64 kg : {1, 4, 7})
    for (i64 rows : {1, 5, 6, 13})
      for (i64 depth : {16, 37, 600}) {
        const i64 ld = depth + 3;
        const auto dy = random_floats(static_cast<std::size_t>(kg * ld), 71);
        const auto col = random_floats(static_cast<std::size_t>(rows * ld), 72);
        const auto dw0 = random_floats(static_cast<std::size_t>(kg * rows), 73);
        std::vector<float> dw = dw0;
        mk::backward_weights_small_avx512(dy.data(), col.data(), kg, rows, depth, ld, dw.data());
        for (i64 k = 0; k < kg; ++k)
          for (i64 r = 0; r < rows; ++r) {
            double want = dw0[static_cast<std::size_t>(k * rows + r)], mag = std::fabs(want);
            for (i64 p = 0; p < depth; ++p) {
              const double t = double(dy[static_cast<std::size_t>(k * ld + p)]) * col[static_cast<std::size_t>(r * ld + p)];
              want += t;
              mag += std::fabs(t);
            }
            expect_close(dw[static_cast<std::size_t>(k * rows + r)], want, mag,
                         "kg " + std::to_string(kg) + " rows " + std::to_string(rows) + " depth " +
                             std::to_string(depth) + " dw " + std::to_string(k) + "," + std::to_string(r));
          }
      }
}

// The implicit geometry: stride 1, no padding, output width a multiple of 8.
struct Implicit {
  i64 c, h, w, k, kh, kw;
  i64 oh() const { return h - kh + 1; }
  i64 ow() const { return w - kw + 1; }
  i64 rows() const { return c * kh * kw; }
  std::vector<i64> taps() const {
    std::vector<i64> t;
    for (i64 ci = 0; ci < c; ++ci)
      for (i64 r = 0; r < kh; ++r)
        for (i64 s = 0; s < kw; ++s) t.push_back(ci * h * w + r * w + s);
    return t;
  }
  mk::ImplicitBwdWeights args(const std::vector<i64>& taps) const {
    return {c, h, w, k, oh(), ow(), rows(), taps.data()};
  }
  std::string str() const {
    return "c" + std::to_string(c) + " " + std::to_string(h) + "x" + std::to_string(w) + " k" + std::to_string(k) +
           " " + std::to_string(kh) + "x" + std::to_string(kw);
  }
};

// ow 8 (a pair of segments spans two output rows; 7 rows: an odd segment), ow 24 with
// 3 segments per row, ow 16; 5 and 7 channels (a 4-channel tile and a remainder); 9, 18
// and 25 taps (6-tap tiles and remainders of 3 and 1).
const Implicit kImplicitShapes[] = {
    {2, 9, 10, 5, 3, 3}, {1, 7, 28, 7, 5, 5}, {3, 4, 18, 6, 2, 3}, {1, 12, 12, 4, 5, 5}};

TEST(DnnConvAvx512Emulated, MinibatchImplicitBackwardWeightsMatchesTheDefinition) {
  const i64 images = 4, n0 = 1, n1 = 4;
  for (const Implicit& s : kImplicitShapes) {
    const auto taps = s.taps();
    const i64 plane = s.oh() * s.ow(), K = s.k, rows = s.rows();
    const auto x = random_floats(static_cast<std::size_t>(images * s.c * s.h * s.w), 81);
    const auto dy = random_floats(static_cast<std::size_t>(images * K * plane), 82);
    const auto dwt0 = random_floats(static_cast<std::size_t>(rows * K), 83);
    std::vector<float> dwt = dwt0;
    mk::backward_weights_implicit_avx512(s.args(taps), x.data(), dy.data(), n0, n1, dwt.data());
    for (i64 t = 0; t < rows; ++t)
      for (i64 k = 0; k < K; ++k) {
        double want = dwt0[static_cast<std::size_t>(t * K + k)], mag = std::fabs(want);
        for (i64 n = n0; n < n1; ++n)
          for (i64 oy = 0; oy < s.oh(); ++oy)
            for (i64 ox = 0; ox < s.ow(); ++ox) {
              const double v = double(dy[static_cast<std::size_t>((n * K + k) * plane + oy * s.ow() + ox)]) *
                               x[static_cast<std::size_t>(n * s.c * s.h * s.w + taps[static_cast<std::size_t>(t)] +
                                                          oy * s.w + ox)];
              want += v;
              mag += std::fabs(v);
            }
        expect_close(dwt[static_cast<std::size_t>(t * K + k)], want, mag,
                     s.str() + " tap " + std::to_string(t) + " channel " + std::to_string(k));
      }
  }
}

TEST(DnnConvAvx512Emulated, MinibatchImplicitForwardMatchesTheDefinition) {
  const i64 images = 3;
  for (const Implicit& s : kImplicitShapes) {
    const auto taps = s.taps();
    const i64 plane = s.oh() * s.ow(), K = s.k, rows = s.rows(), per_image = plane / 8, total = images * per_image;
    const auto x = random_floats(static_cast<std::size_t>(images * s.c * s.h * s.w), 91);
    const auto w = random_floats(static_cast<std::size_t>(K * rows), 92);
    const auto bias = random_floats(static_cast<std::size_t>(K), 93);
    const auto y0 = random_floats(static_cast<std::size_t>(images * K * plane), 94);
    // Ranges of 8-pixel vectors across image boundaries, with 8-vector tiles and each
    // remainder (1..7 vectors: whole pairs and a lone half vector), with and without bias.
    for (i64 v0 : {i64{0}, i64{1}, i64{3}})
      for (i64 count : {i64{1}, i64{2}, i64{5}, i64{7}, i64{8}, total - 3})
        for (bool with_bias : {true, false}) {
          const i64 v1 = std::min(total, v0 + count);
          std::vector<float> y = y0;
          mk::forward_implicit_avx512(s.args(taps), x.data(), w.data(), with_bias ? bias.data() : nullptr, v0, v1,
                                      y.data());
          for (i64 n = 0; n < images; ++n)
            for (i64 k = 0; k < K; ++k)
              for (i64 p = 0; p < plane; ++p) {
                const auto at = static_cast<std::size_t>((n * K + k) * plane + p);
                const i64 v = n * per_image + p / 8;
                const std::string where = s.str() + " vectors [" + std::to_string(v0) + "," + std::to_string(v1) +
                                          ") image " + std::to_string(n) + " channel " + std::to_string(k) +
                                          " pixel " + std::to_string(p);
                if (v < v0 || v >= v1) {
                  EXPECT_EQ(y[at], y0[at]) << where << " written";
                  continue;
                }
                const i64 oy = p / s.ow(), ox = p % s.ow();
                double want = with_bias ? bias[static_cast<std::size_t>(k)] : 0.0, mag = std::fabs(want);
                for (i64 t = 0; t < rows; ++t) {
                  const double term =
                      double(w[static_cast<std::size_t>(k * rows + t)]) *
                      x[static_cast<std::size_t>(n * s.c * s.h * s.w + taps[static_cast<std::size_t>(t)] + oy * s.w +
                                                 ox)];
                  want += term;
                  mag += std::fabs(term);
                }
                expect_close(y[at], want, mag, where);
              }
        }
  }
}

TEST(DnnConvAvx512Emulated, MinibatchPackedBackwardWeightsMatchesTheDefinition) {
  // Steps even and odd (the last step a half vector), 5 channels (a tile and a
  // remainder), 13 taps at arbitrary offsets (tiles of 6 and a remainder of 1).
  const i64 k_count = 5, rows = 13;
  for (i64 steps : {i64{1}, i64{6}, i64{11}}) {
    const i64 x_size = 300 + steps * 16;
    std::vector<i64> offset;
    for (i64 t = 0; t < rows; ++t) offset.push_back((t * 37) % 290);
    const auto x = random_floats(static_cast<std::size_t>(x_size), 101);
    const auto dy = random_floats(static_cast<std::size_t>(k_count * steps * 8), 102);
    const auto dwt0 = random_floats(static_cast<std::size_t>(rows * k_count), 103);
    std::vector<float> dwt = dwt0;
    mk::backward_weights_packed_avx512(x.data(), dy.data(), steps, k_count, rows, offset.data(), dwt.data());
    for (i64 t = 0; t < rows; ++t)
      for (i64 k = 0; k < k_count; ++k) {
        double want = dwt0[static_cast<std::size_t>(t * k_count + k)], mag = std::fabs(want);
        for (i64 p = 0; p < steps; ++p)
          for (i64 lane = 0; lane < 8; ++lane) {
            const double v = double(dy[static_cast<std::size_t>(k * steps * 8 + p * 8 + lane)]) *
                             x[static_cast<std::size_t>(offset[static_cast<std::size_t>(t)] + p * 16 + lane)];
            want += v;
            mag += std::fabs(v);
          }
        expect_close(dwt[static_cast<std::size_t>(t * k_count + k)], want, mag,
                     "steps " + std::to_string(steps) + " tap " + std::to_string(t) + " channel " + std::to_string(k));
      }
  }
}

}  // namespace
