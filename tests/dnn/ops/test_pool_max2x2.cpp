// MAX pooling's 2x2 stride-2 unpadded kernels (dnn/src/ops/pool_kernels_<isa>.cpp,
// chosen inside pooling_forward/backward<float>; the binary runs once per TAIHU_ISA
// level) against a naive window loop written here: values, argmax masks (first strict
// maximum in row-then-column order, -1 when no tap beats the lowest float), and dx
// (dy at the argmax, +0 elsewhere); and bit for bit against the double instantiation,
// which runs the generic loops. Shapes: LeNet's and VGG-like planes, odd heights and
// widths (Caffe's clipped last window), rows whose output width is not a multiple of
// 16, 8 or 4 (the AVX-512 kernel's 16-window steps, the AVX2 kernel's 8, the SSE2 4,
// single windows),
// one-window planes; values on a coarse grid (ties), -0.0, NaN and -inf inputs,
// -0.0 gradients; with and without a mask; 1 and 2 threads.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "ops_test_support.hpp"
#include "taihu/arch/threads.hpp"
#include "taihu/dnn/pooling.hpp"

namespace {

using taihu::dnn::index_t;
using taihu::dnn::PoolingShape;

PoolingShape shape(index_t n, index_t c, index_t h, index_t w) {
  PoolingShape s;
  s.batch = n; s.channels = c; s.height = h; s.width = w;
  s.kernel_h = s.kernel_w = 2;
  s.stride_h = s.stride_w = 2;
  s.method = taihu::dnn::PoolMethod::max;
  return s;
}

bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

class PoolMax2x2 : public ops_test::OpsTest {
 protected:
  void TearDown() override { taihu::arch::set_num_threads(0); }

  void check(const PoolingShape& s, int threads) {
    SCOPED_TRACE(::testing::Message() << s.batch << "x" << s.channels << "x" << s.height << "x" << s.width
                                      << ", threads " << threads);
    taihu::arch::set_num_threads(threads);
    std::mt19937 gen(static_cast<unsigned>(s.height * 131 + s.width + threads));
    std::uniform_int_distribution<int> grid(-3, 3);  // a coarse grid: windows often tie
    const auto in = static_cast<std::size_t>(s.input_elements()), out = static_cast<std::size_t>(s.output_elements());
    std::vector<float> x(in), dy(out);
    for (std::size_t i = 0; i < in; ++i) {
      x[i] = 0.5f * static_cast<float>(grid(gen));
      if (i % 37 == 5) x[i] = std::numeric_limits<float>::quiet_NaN();
      if (i % 41 == 7) x[i] = -std::numeric_limits<float>::infinity();
      if (i % 43 == 9) x[i] = -0.0f;
    }
    // One all-NaN window and one all -inf window: no tap wins, mask -1.
    const index_t w = s.width;
    for (index_t dh = 0; dh < 2; ++dh)
      for (index_t dw = 0; dw < 2; ++dw) {
        x[static_cast<std::size_t>(dh * w + dw)] = std::numeric_limits<float>::quiet_NaN();
        if (s.height >= 4) x[static_cast<std::size_t>((2 + dh) * w + dw)] = -std::numeric_limits<float>::infinity();
      }
    for (std::size_t i = 0; i < out; ++i) dy[i] = i % 7 == 0 ? -0.0f : 0.25f * static_cast<float>(grid(gen));

    std::vector<float> y(out, 9.f), y_nomask(out, 9.f), dx(in, 7.f);
    std::vector<std::int32_t> mask(out, 99);
    taihu::dnn::pooling_forward<float>(s, x.data(), y.data(), mask.data());
    taihu::dnn::pooling_forward<float>(s, x.data(), y_nomask.data(), nullptr);
    taihu::dnn::pooling_backward<float>(s, dy.data(), mask.data(), dx.data());

    // Naive loops.
    const index_t oh = (s.height + 1) / 2, ow = (s.width + 1) / 2, plane = s.height * s.width;
    ASSERT_EQ(s.out_h(), oh);
    ASSERT_EQ(s.out_w(), ow);
    std::vector<float> ref_dx(in, 0.0f);
    for (index_t p = 0; p < s.batch * s.channels; ++p)
      for (index_t ph = 0; ph < oh; ++ph)
        for (index_t pw = 0; pw < ow; ++pw) {
          float best = std::numeric_limits<float>::lowest();
          std::int32_t arg = -1;
          for (index_t ih = 2 * ph; ih < 2 * ph + 2 && ih < s.height; ++ih)
            for (index_t iw = 2 * pw; iw < 2 * pw + 2 && iw < s.width; ++iw) {
              const float v = x[static_cast<std::size_t>(p * plane + ih * w + iw)];
              if (v > best) {
                best = v;
                arg = static_cast<std::int32_t>(ih * w + iw);
              }
            }
          const auto o = static_cast<std::size_t>(p * oh * ow + ph * ow + pw);
          ASSERT_TRUE(same_bits(y[o], best)) << "plane " << p << " (" << ph << ", " << pw << "): " << y[o];
          ASSERT_TRUE(same_bits(y_nomask[o], best)) << "plane " << p << " (" << ph << ", " << pw << ")";
          ASSERT_EQ(mask[o], arg) << "plane " << p << " (" << ph << ", " << pw << ")";
          if (arg >= 0) ref_dx[static_cast<std::size_t>(p * plane + arg)] += dy[o];
        }
    for (std::size_t i = 0; i < in; ++i) ASSERT_TRUE(same_bits(dx[i], ref_dx[i])) << i << ": " << dx[i] << " vs " << ref_dx[i];

    // The double instantiation (generic loops) gives the same masks and values.
    std::vector<double> xd(x.begin(), x.end()), dyd(dy.begin(), dy.end()), yd(out), dxd(in);
    std::vector<std::int32_t> maskd(out);
    taihu::dnn::pooling_forward<double>(s, xd.data(), yd.data(), maskd.data());
    taihu::dnn::pooling_backward<double>(s, dyd.data(), maskd.data(), dxd.data());
    for (std::size_t i = 0; i < out; ++i) {
      ASSERT_EQ(mask[i], maskd[i]) << i;
      if (maskd[i] >= 0) {
        ASSERT_TRUE(same_bits(y[i], static_cast<float>(yd[i]))) << i;
      }
    }
    for (std::size_t i = 0; i < in; ++i) ASSERT_TRUE(same_bits(dx[i], static_cast<float>(dxd[i]))) << i;
  }
};

TEST_F(PoolMax2x2, MatchesNaiveLoopOnLeNetAndVggShapes) {
  for (int t : {1, 2}) {
    check(shape(4, 20, 24, 24), t);   // LeNet pool1
    check(shape(4, 50, 8, 8), t);     // LeNet pool2
    check(shape(1, 8, 56, 56), t);    // VGG-like
  }
}

TEST_F(PoolMax2x2, OddSizesRaggedRowsAndSmallPlanes) {
  for (int t : {1, 2}) {
    check(shape(3, 2, 6, 10), t);   // ow 5: scalar windows only
    check(shape(2, 3, 2, 2), t);    // one window
    check(shape(1, 1, 4, 34), t);   // ow 17: two vector steps and a scalar window
    check(shape(2, 3, 5, 4), t);    // odd height: a clipped last window row
    check(shape(2, 3, 4, 35), t);   // odd width: 16 full windows in vectors + a clipped one
    check(shape(1, 2, 7, 33), t);   // both odd
    check(shape(1, 1, 3, 3), t);    // 2x2 outputs, three clipped
    check(shape(1, 1, 2, 17), t);   // one vector step and a clipped window
    check(shape(2, 1, 5, 43), t);   // 2 x 8 + 4 windows per step, one window, a clipped one
    check(shape(1, 2, 3, 32), t);   // exactly one 16-window step (AVX-512)
    check(shape(1, 1, 5, 75), t);   // 2 x 16 (or 4 x 8) + 4 + 1 windows and a clipped one
    check(shape(1, 1, 2, 112), t);  // 3 x 16 + 2 x 4 (or 7 x 8) windows
  }
}

}  // namespace
