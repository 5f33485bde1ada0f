// AVE pooling of planes with short rows (dnn/src/ops/pool_lanes.hpp, eight planes at a
// time in the lanes; the binary runs once per TAIHU_ISA level) against naive float loops
// written here in the generic loops' order, bit for bit: forward sums each window from 0
// row then column and divides by rows x columns of the window clipped to the padded
// plane; backward zero-fills dx and adds dy / size window by window. Shapes: CIFAR-10
// quick's 16 x 16 and 8 x 8 pools, padding, stride 1 and 3, odd sizes; 15 planes (one
// group of 8 and one of 7) and 8; 1 and 2 threads.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <tuple>
#include <vector>

#include "ops_test_support.hpp"
#include "taihu/arch/threads.hpp"
#include "taihu/dnn/pooling.hpp"

namespace {

using taihu::dnn::index_t;
using taihu::dnn::PoolingShape;

bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

class PoolAveLanes : public ops_test::OpsTest {
 protected:
  void TearDown() override { taihu::arch::set_num_threads(0); }

  void check(index_t n, index_t c, index_t h, index_t w, index_t k, index_t stride, index_t pad, int threads) {
    const PoolingShape s = ops_test::pool_shape(n, c, h, w, k, stride, pad, taihu::dnn::PoolMethod::average);
    SCOPED_TRACE(::testing::Message() << n << "x" << c << "x" << h << "x" << w << " k" << k << " s" << stride << " p"
                                      << pad << ", threads " << threads);
    taihu::arch::set_num_threads(threads);
    const auto x = ops_test::random_vector<float>(s.input_elements(), rng);
    const auto dy = ops_test::random_vector<float>(s.output_elements(), rng);
    std::vector<float> y(x.size(), 9.f), dx(x.size(), 7.f);
    y.resize(dy.size());
    taihu::dnn::pooling_forward<float>(s, x.data(), y.data(), nullptr);
    taihu::dnn::pooling_backward<float>(s, dy.data(), nullptr, dx.data());

    const index_t oh = s.out_h(), ow = s.out_w(), plane = h * w;
    std::vector<float> ref_dx(x.size(), 0.0f);
    for (index_t p = 0; p < n * c; ++p)
      for (index_t ph = 0; ph < oh; ++ph)
        for (index_t pw = 0; pw < ow; ++pw) {
          const index_t hs_raw = ph * stride - pad, ws_raw = pw * stride - pad;
          const index_t he_pad = std::min(hs_raw + k, h + pad), we_pad = std::min(ws_raw + k, w + pad);
          const float size = static_cast<float>(he_pad - hs_raw) * static_cast<float>(we_pad - ws_raw);
          const index_t hs = std::max<index_t>(hs_raw, 0), ws = std::max<index_t>(ws_raw, 0);
          const index_t he = std::min(he_pad, h), we = std::min(we_pad, w);
          float acc = 0.0f;
          for (index_t ih = hs; ih < he; ++ih)
            for (index_t iw = ws; iw < we; ++iw) acc += x[static_cast<std::size_t>(p * plane + ih * w + iw)];
          const auto o = static_cast<std::size_t>((p * oh + ph) * ow + pw);
          ASSERT_TRUE(same_bits(y[o], acc / size)) << "plane " << p << " (" << ph << ", " << pw << "): " << y[o]
                                                   << " vs " << acc / size;
          const float g = dy[o] / size;
          for (index_t ih = hs; ih < he; ++ih)
            for (index_t iw = ws; iw < we; ++iw) ref_dx[static_cast<std::size_t>(p * plane + ih * w + iw)] += g;
        }
    for (std::size_t i = 0; i < x.size(); ++i)
      ASSERT_TRUE(same_bits(dx[i], ref_dx[i])) << i << ": " << dx[i] << " vs " << ref_dx[i];
  }
};

TEST_F(PoolAveLanes, MatchesTheGenericOrderBitForBit) {
  for (const int threads : {1, 2})
    for (const auto& [h, w, k, stride, pad] :
         {std::tuple<index_t, index_t, index_t, index_t, index_t>{16, 16, 3, 2, 0},  // CIFAR-10 quick pool2
          {8, 8, 3, 2, 0},                                                             // pool3
          {7, 9, 3, 2, 1},
          {5, 5, 2, 1, 0},
          {11, 6, 3, 3, 2},
          {1, 3, 1, 1, 0}}) {
      check(3, 5, h, w, k, stride, pad, threads);
      check(1, 8, h, w, k, stride, pad, threads);
    }
}

}  // namespace
