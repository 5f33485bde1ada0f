// Implicit-GEMM convolution forward (conv.hpp). Per block: a 64 (output channels) x 64
// (output pixels over n*oh*ow) tile of one group; each 8-deep slice of the reduction
// (c*kh*kw) loads a weight tile and gathers the input window tile straight from x into
// shared memory (zero outside the image); 256 threads, 4 x 4 outputs each.
#include <cuda_runtime.h>

#include <string>

#include "taihu/arch/error.hpp"
#include "taihu/dnn_cuda/conv.hpp"

namespace taihu::dnn_cuda {
namespace {

constexpr int kBM = 64, kBN = 64, kBK = 8, kThreads = 256;

struct Params {
  int c, h, w, k, kh, kw, sh, sw, ph, pw, dh, dw;
  int oh, ow, cg, kg, crs;
  long long pixels;  // n * oh * ow
};

[[noreturn]] void fail(const std::string& msg) { throw Error("taihu::dnn_cuda::conv_forward: " + msg); }

__global__ void __launch_bounds__(kThreads)
conv_fwd_igemm(Params p, const float* __restrict__ x, const float* __restrict__ w,
               const float* __restrict__ bias, float* __restrict__ y) {
  __shared__ float As[kBK][kBM + 4];
  __shared__ float Bs[kBK][kBN];
  const int tid = threadIdx.x;
  const int g = blockIdx.z;
  const int m0 = blockIdx.y * kBM;
  const long long p0 = static_cast<long long>(blockIdx.x) * kBN;
  const int plane = p.oh * p.ow, rs = p.kh * p.kw;

  // This thread's gather column: one output pixel.
  const int nb = tid % kBN;
  const long long pix = p0 + nb;
  const bool pix_ok = pix < p.pixels;
  int img = 0, iy0 = 0, ix0 = 0;
  if (pix_ok) {
    img = static_cast<int>(pix / plane);
    const int rem = static_cast<int>(pix % plane);
    iy0 = (rem / p.ow) * p.sh - p.ph;
    ix0 = (rem % p.ow) * p.sw - p.pw;
  }
  const float* xg = x + (static_cast<long long>(img) * p.c + static_cast<long long>(g) * p.cg) * p.h * p.w;
  const float* wg = w + static_cast<long long>(g) * p.kg * p.crs;

  float acc[4][4] = {};
  const int tx = tid % 16, ty = tid / 16;
  for (int k0 = 0; k0 < p.crs; k0 += kBK) {
#pragma unroll
    for (int i = 0; i < (kBM * kBK) / kThreads; ++i) {
      const int idx = tid + i * kThreads, m = idx / kBK, kk = idx % kBK;
      const int gm = m0 + m, gk = k0 + kk;
      As[kk][m] = (gm < p.kg && gk < p.crs) ? wg[static_cast<long long>(gm) * p.crs + gk] : 0.0f;
    }
#pragma unroll
    for (int i = 0; i < (kBN * kBK) / kThreads; ++i) {
      const int kk = tid / kBN + i * (kThreads / kBN), gk = k0 + kk;
      float v = 0.0f;
      if (pix_ok && gk < p.crs) {
        const int ci = gk / rs, q = gk % rs, r = q / p.kw, s = q % p.kw;
        const int iy = iy0 + r * p.dh, ix = ix0 + s * p.dw;
        if (iy >= 0 && iy < p.h && ix >= 0 && ix < p.w) v = xg[(static_cast<long long>(ci) * p.h + iy) * p.w + ix];
      }
      Bs[kk][nb] = v;
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < kBK; ++kk) {
      float a[4], b[4];
#pragma unroll
      for (int i = 0; i < 4; ++i) a[i] = As[kk][ty * 4 + i];
#pragma unroll
      for (int j = 0; j < 4; ++j) b[j] = Bs[kk][tx * 4 + j];
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const int m = m0 + ty * 4 + i;
    if (m >= p.kg) continue;
    const int kout = g * p.kg + m;
    const float b = bias ? bias[kout] : 0.0f;
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const long long q = p0 + tx * 4 + j;
      if (q >= p.pixels) continue;
      const long long n = q / plane;
      const int rem = static_cast<int>(q % plane);
      y[(n * p.k + kout) * plane + rem] = acc[i][j] + b;
    }
  }
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
