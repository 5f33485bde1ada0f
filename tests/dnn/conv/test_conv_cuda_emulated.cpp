// The CUDA implicit-GEMM convolution kernel run on the host, so its index math (pixel
// decode, window gather, padding/stride/dilation, groups, edge tiles) is checked on
// every machine, GPU or not. dnn/cuda/src/conv/conv_implicit_gemm_kernel.cuh compiles
// as C++ against gemm's CUDA stand-ins (tests/gemm/cuda/emulation): a block is 256
// std::threads, __syncthreads a std::barrier, shared memory a global poisoned with NaN
// before every block (a read before the write reaches y). Compared with a naive
// double-precision convolution.
#include <gtest/gtest.h>

#include <barrier>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "conv/conv_implicit_gemm_kernel.cuh"
#include "conv_test_support.hpp"
#include "taihu/dnn/conv.hpp"

thread_local EmulatedIndex threadIdx, blockIdx;

namespace {

using taihu::dnn::ConvDesc;
using taihu::dnn::index_t;
namespace detail = taihu::dnn_cuda::detail;

std::barrier<>* g_block = nullptr;
detail::ConvSharedStorage g_shared;

}  // namespace

void __syncthreads() { g_block->arrive_and_wait(); }
void __syncwarp() {}

namespace {

std::vector<float> run_emulated(const ConvDesc& d, const std::vector<float>& x,
                                const std::vector<float>& w, const std::vector<float>& b) {
  detail::ConvParams p{};
  p.c = static_cast<int>(d.c), p.h = static_cast<int>(d.h), p.w = static_cast<int>(d.w);
  p.k = static_cast<int>(d.k), p.kh = static_cast<int>(d.kh), p.kw = static_cast<int>(d.kw);
  p.sh = static_cast<int>(d.stride_h), p.sw = static_cast<int>(d.stride_w);
  p.ph = static_cast<int>(d.pad_h), p.pw = static_cast<int>(d.pad_w);
  p.dh = static_cast<int>(d.dil_h), p.dw = static_cast<int>(d.dil_w);
  p.oh = static_cast<int>(d.out_h()), p.ow = static_cast<int>(d.out_w());
  p.cg = static_cast<int>(d.c / d.groups), p.kg = static_cast<int>(d.k / d.groups);
  p.crs = p.cg * p.kh * p.kw;
  p.pixels = d.n * d.out_h() * d.out_w();
  std::vector<float> y(static_cast<std::size_t>(d.n * d.k * d.out_h() * d.out_w()),
                       std::numeric_limits<float>::quiet_NaN());
  const unsigned gx = static_cast<unsigned>((p.pixels + detail::kConvBN - 1) / detail::kConvBN);
  const unsigned gy = static_cast<unsigned>((p.kg + detail::kConvBM - 1) / detail::kConvBM);
  for (unsigned bz = 0; bz < static_cast<unsigned>(d.groups); ++bz)
    for (unsigned by = 0; by < gy; ++by)
      for (unsigned bx = 0; bx < gx; ++bx) {
        for (auto& row : g_shared.a)
          for (float& v : row) v = std::numeric_limits<float>::quiet_NaN();
        for (auto& row : g_shared.b)
          for (float& v : row) v = std::numeric_limits<float>::quiet_NaN();
        std::barrier<> block(detail::kConvThreads);
        g_block = &block;
        std::vector<std::thread> threads;
        for (unsigned t = 0; t < static_cast<unsigned>(detail::kConvThreads); ++t)
          threads.emplace_back([&, t] {
            threadIdx = {t, 0, 0};
            blockIdx = {bx, by, bz};
            detail::conv_fwd_block(p, x.data(), w.data(), b.empty() ? nullptr : b.data(), y.data(), g_shared);
          });
        for (auto& th : threads) th.join();
      }
  return y;
}

class ConvCudaEmulated : public ::testing::TestWithParam<const char*> {};

TEST_P(ConvCudaEmulated, KernelMatchesReference) {
  const ConvDesc d = ConvDesc::parse(GetParam());
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  auto fill = [&](index_t n) {
    std::vector<float> v(static_cast<std::size_t>(n));
    for (auto& e : v) e = dist(rng);
    return v;
  };
  const auto x = fill(d.n * d.c * d.h * d.w), w = fill(d.k * (d.c / d.groups) * d.kh * d.kw), b = fill(d.k);
  const auto y = run_emulated(d, x, w, b);
  const auto ref = conv_test::conv_forward_double(d, conv_test::to_double(x), conv_test::to_double(w), conv_test::to_double(b));
  for (std::size_t i = 0; i < y.size(); ++i)
    ASSERT_FALSE(std::isnan(y[i])) << "output " << i << " not written (or read unwritten shared memory)";
  EXPECT_LE(conv_test::max_rel_error(y, ref), 1e-5) << d.str();
}

INSTANTIATE_TEST_SUITE_P(Shapes, ConvCudaEmulated,
                         ::testing::Values("mb2ic3ih9oc5kh3ph1",          // tiny, edge tiles
                                           "mb1ic8ih12oc70kh3sh2ph1",     // two channel tiles, stride
                                           "mb1ic4ih10oc6kh3ph2dh1",      // dilation
                                           "g2mb1ic6ih7oc4kh3ph1",        // groups
                                           "mb1ic5ih9iw11oc3kh3kw5ph1pw2"),  // rectangular
                         [](const auto& p) { return std::string(p.param); });

}  // namespace
