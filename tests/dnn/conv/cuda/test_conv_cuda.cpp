// taihu::dnn_cuda::conv_forward against taihu::dnn's reference convolution (double
// accumulation on the host) on shapes with stride, padding, dilation, groups and edge
// tiles, and against cuDNN's implicit-GEMM forward when cuDNN is linked. GPU tests skip
// per test without a device; the argument checks run everywhere (nothing is launched).
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#ifdef TAIHU_HAVE_CUDNN
#include <cudnn.h>
#endif

#include "conv_test_support.hpp"
#include "taihu/arch/error.hpp"
#include "taihu/dnn/conv.hpp"
#include "taihu/dnn_cuda/conv.hpp"

namespace {

using taihu::dnn::ConvDesc;
namespace gpu = taihu::dnn_cuda;

bool have_gpu() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

gpu::ConvShape shape_of(const ConvDesc& d) {
  return {d.n, d.c, d.h, d.w, d.k, d.kh, d.kw, d.stride_h, d.stride_w, d.pad_h, d.pad_w,
          d.dil_h, d.dil_w, d.groups};
}

std::vector<float> random_vector(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  std::vector<float> v(n);
  for (auto& e : v) e = dist(rng);
  return v;
}

class DeviceBuffer {
 public:
  explicit DeviceBuffer(const std::vector<float>& host) : n_(host.size()) {
    if (cudaMalloc(reinterpret_cast<void**>(&p_), std::max<std::size_t>(n_, 1) * sizeof(float)) != cudaSuccess)
      throw std::runtime_error("cudaMalloc failed");
    cudaMemcpy(p_, host.data(), n_ * sizeof(float), cudaMemcpyHostToDevice);
  }
  ~DeviceBuffer() { cudaFree(p_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  float* get() const { return p_; }
  std::vector<float> host() const {
    std::vector<float> h(n_);
    cudaMemcpy(h.data(), p_, n_ * sizeof(float), cudaMemcpyDeviceToHost);
    return h;
  }

 private:
  std::size_t n_;
  float* p_ = nullptr;
};

class ConvCuda : public ::testing::TestWithParam<const char*> {};

TEST_P(ConvCuda, ForwardMatchesHostReference) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device";
  const ConvDesc d = ConvDesc::parse(GetParam());
  const auto x = random_vector(d.n * d.c * d.h * d.w, 1), w = random_vector(d.k * (d.c / d.groups) * d.kh * d.kw, 2),
             b = random_vector(d.k, 3);
  std::vector<float> ref(d.n * d.k * d.out_h() * d.out_w());
  taihu::dnn::Convolution(d, taihu::dnn::ConvAlgo::reference).forward(x.data(), w.data(), b.data(), ref.data());
  DeviceBuffer dx(x), dw(w), db(b), dy{std::vector<float>(ref.size(), 9.0f)};
  gpu::conv_forward(shape_of(d), dx.get(), dw.get(), db.get(), dy.get());
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_LE(conv_test::max_rel_error(dy.host(), ref), 1e-5) << d.str();
}

#ifdef TAIHU_HAVE_CUDNN
TEST_P(ConvCuda, ForwardMatchesCudnn) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device";
  const ConvDesc d = ConvDesc::parse(GetParam());
  const auto x = random_vector(d.n * d.c * d.h * d.w, 4), w = random_vector(d.k * (d.c / d.groups) * d.kh * d.kw, 5);
  const std::size_t ys = d.n * d.k * d.out_h() * d.out_w();
  DeviceBuffer dx(x), dw(w), ours{std::vector<float>(ys)}, theirs{std::vector<float>(ys)};
  gpu::conv_forward(shape_of(d), dx.get(), dw.get(), nullptr, ours.get());
  cudnnHandle_t h;
  ASSERT_EQ(cudnnCreate(&h), CUDNN_STATUS_SUCCESS);
  cudnnTensorDescriptor_t xd, yd;
  cudnnFilterDescriptor_t wd;
  cudnnConvolutionDescriptor_t cd;
  cudnnCreateTensorDescriptor(&xd);
  cudnnCreateTensorDescriptor(&yd);
  cudnnCreateFilterDescriptor(&wd);
  cudnnCreateConvolutionDescriptor(&cd);
  const auto i = [](taihu::dnn::index_t v) { return static_cast<int>(v); };
  cudnnSetTensor4dDescriptor(xd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, i(d.n), i(d.c), i(d.h), i(d.w));
  cudnnSetTensor4dDescriptor(yd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, i(d.n), i(d.k), i(d.out_h()), i(d.out_w()));
  cudnnSetFilter4dDescriptor(wd, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, i(d.k), i(d.c / d.groups), i(d.kh), i(d.kw));
  cudnnSetConvolution2dDescriptor(cd, i(d.pad_h), i(d.pad_w), i(d.stride_h), i(d.stride_w), i(d.dil_h), i(d.dil_w),
                                  CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT);
  cudnnSetConvolutionGroupCount(cd, i(d.groups));
  cudnnSetConvolutionMathType(cd, CUDNN_FMA_MATH);  // no TF32: compare like with like
  const float one = 1.f, zero = 0.f;
  EXPECT_EQ(cudnnConvolutionForward(h, &one, xd, dx.get(), wd, dw.get(), cd,
                                    CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, nullptr, 0, &zero, yd,
                                    theirs.get()),
            CUDNN_STATUS_SUCCESS);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_LE(conv_test::max_rel_error(ours.host(), theirs.host()), 1e-5) << d.str();
  cudnnDestroyConvolutionDescriptor(cd);
  cudnnDestroyFilterDescriptor(wd);
  cudnnDestroyTensorDescriptor(yd);
  cudnnDestroyTensorDescriptor(xd);
  cudnnDestroy(h);
}
#endif

INSTANTIATE_TEST_SUITE_P(Shapes, ConvCuda,
                         ::testing::Values("mb2ic3ih13oc5oh13kh3ph1", "mb1ic64ih28oc96oh28kh3ph1",
                                           "mb3ic16ih15oc70kh3sh2ph1", "mb1ic8ih14oc8kh3ph2dh1",
                                           "g2mb2ic16ih9oc8kh3ph1", "mb2ic24ih7oc130kh1",
                                           "mb1ic3ih64oc64kh7sh2ph3", "mb1ic4ih9iw11oc6kh3kw5ph1pw2"),
                         [](const auto& p) { return std::string(p.param); });

TEST(ConvCudaArgs, BadShapesAndPointersAreRejectedBeforeAnyLaunch) {
  gpu::ConvShape s{1, 8, 8, 8, 8, 3, 3};
  s.groups = 3;
  try {
    gpu::conv_forward(s, nullptr, nullptr, nullptr, nullptr);
    FAIL();
  } catch (const taihu::Error& e) {
    EXPECT_NE(std::string(e.what()).find("groups = 3 does not divide c = 8"), std::string::npos) << e.what();
  }
  s.groups = 1;
  s.kh = 11;
  EXPECT_THROW(gpu::conv_forward(s, nullptr, nullptr, nullptr, nullptr), taihu::Error);
  s.kh = 3;
  try {
    gpu::conv_forward(s, nullptr, nullptr, nullptr, nullptr);
    FAIL();
  } catch (const taihu::Error& e) {
    EXPECT_NE(std::string(e.what()).find("x is null"), std::string::npos) << e.what();
  }
}

}  // namespace
