// Implicit-GEMM convolution forward (conv.hpp): argument checks and the launch; the
// block's device code is in conv_implicit_gemm_kernel.cuh.
#include <cuda_runtime.h>

#include <string>

#include "taihu/arch/error.hpp"
#include "conv_implicit_gemm_kernel.cuh"
#include "taihu/dnn_cuda/conv.hpp"

namespace taihu::dnn_cuda {
namespace {

using Params = detail::ConvParams;
constexpr int kBM = detail::kConvBM, kBN = detail::kConvBN, kThreads = detail::kConvThreads;

[[noreturn]] void fail(const std::string& msg) { throw Error("taihu::dnn_cuda::conv_forward: " + msg); }

__global__ void __launch_bounds__(kThreads)
conv_fwd_igemm(Params p, const float* __restrict__ x, const float* __restrict__ w,
               const float* __restrict__ bias, float* __restrict__ y) {
  __shared__ detail::ConvSharedStorage sm;
  detail::conv_fwd_block(p, x, w, bias, y, sm);
}

}  // namespace

void validate(const ConvShape& s) {
  const std::pair<const char*, index_t> positive[] = {
      {"n", s.n}, {"c", s.c}, {"h", s.h}, {"w", s.w}, {"k", s.k}, {"kh", s.kh}, {"kw", s.kw},
      {"stride_h", s.stride_h}, {"stride_w", s.stride_w}, {"dil_h", s.dil_h}, {"dil_w", s.dil_w},
      {"groups", s.groups}};
  for (const auto& [name, v] : positive)
    if (v < 1) fail(std::string(name) + " = " + std::to_string(v) + " must be >= 1");
  if (s.pad_h < 0) fail("pad_h = " + std::to_string(s.pad_h) + " must be >= 0");
  if (s.pad_w < 0) fail("pad_w = " + std::to_string(s.pad_w) + " must be >= 0");
  if (s.c % s.groups) fail("groups = " + std::to_string(s.groups) + " does not divide c = " + std::to_string(s.c));
  if (s.k % s.groups) fail("groups = " + std::to_string(s.groups) + " does not divide k = " + std::to_string(s.k));
  if (s.out_h() < 1 || s.h + 2 * s.pad_h < s.dil_h * (s.kh - 1) + 1)
    fail("kh = " + std::to_string(s.kh) + " exceeds the padded input height");
  if (s.out_w() < 1 || s.w + 2 * s.pad_w < s.dil_w * (s.kw - 1) + 1)
    fail("kw = " + std::to_string(s.kw) + " exceeds the padded input width");
  const index_t limit = index_t{1} << 31;
  if (s.n * s.c * s.h * s.w >= limit || s.n * s.k * s.out_h() * s.out_w() >= limit ||
      s.k * (s.c / s.groups) * s.kh * s.kw >= limit)
    fail("tensors of 2^31 or more elements are not supported");
}

void conv_forward(const ConvShape& s, const float* x, const float* w, const float* bias, float* y,
                  Stream stream) {
  validate(s);
  if (x == nullptr) fail("x is null");
  if (w == nullptr) fail("w is null");
  if (y == nullptr) fail("y is null");
  Params p{};
  p.c = static_cast<int>(s.c), p.h = static_cast<int>(s.h), p.w = static_cast<int>(s.w);
  p.k = static_cast<int>(s.k), p.kh = static_cast<int>(s.kh), p.kw = static_cast<int>(s.kw);
  p.sh = static_cast<int>(s.stride_h), p.sw = static_cast<int>(s.stride_w);
  p.ph = static_cast<int>(s.pad_h), p.pw = static_cast<int>(s.pad_w);
  p.dh = static_cast<int>(s.dil_h), p.dw = static_cast<int>(s.dil_w);
  p.oh = static_cast<int>(s.out_h()), p.ow = static_cast<int>(s.out_w());
  p.cg = static_cast<int>(s.c / s.groups), p.kg = static_cast<int>(s.k / s.groups);
  p.crs = p.cg * p.kh * p.kw;
  p.pixels = static_cast<long long>(s.n) * p.oh * p.ow;
  const dim3 grid(static_cast<unsigned>((p.pixels + kBN - 1) / kBN), static_cast<unsigned>((p.kg + kBM - 1) / kBM),
                  static_cast<unsigned>(s.groups));
  if (grid.y > 65535 || grid.z > 65535) fail("too many output channels or groups for one launch");
  conv_fwd_igemm<<<grid, kThreads, 0, stream>>>(p, x, w, bias, y);
  const cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) fail(std::string("CUDA launch failed: ") + cudaGetErrorString(err));
}

}  // namespace taihu::dnn_cuda
