// Device code of the implicit-GEMM convolution forward (conv_implicit_gemm.cu): one
// block's work, written against plain CUDA built-ins so that the emulated test
// (tests/dnn/conv/test_conv_cuda_emulated.cpp) can compile it as C++ and run a block
// as 256 std::threads. Per block: a 64 (output channels) x 64 (output pixels over
// n*oh*ow) tile of one group (blockIdx.z); each 8-deep slice of the reduction
// (c*kh*kw) loads a weight tile and gathers the input window tile straight from x
// into shared memory (zero outside the image); 4 x 4 outputs per thread.
#pragma once
#include <cuda_runtime.h>

namespace taihu::dnn_cuda::detail {

constexpr int kConvBM = 64, kConvBN = 64, kConvBK = 8, kConvThreads = 256;

struct ConvParams {
  int c, h, w, k, kh, kw, sh, sw, ph, pw, dh, dw;
  int oh, ow, cg, kg, crs;
  long long pixels;  // n * oh * ow
};

struct ConvSharedStorage {
  float a[kConvBK][kConvBM + 4];  // weights slice, [kk][m] (+4: fewer bank conflicts)
  float b[kConvBK][kConvBN];      // gathered input slice, [kk][pixel]
};

__device__ __forceinline__ void conv_fwd_block(const ConvParams& p, const float* __restrict__ x,
                                               const float* __restrict__ w,
                                               const float* __restrict__ bias,
                                               float* __restrict__ y, ConvSharedStorage& sm) {
  constexpr int kBM = kConvBM, kBN = kConvBN, kBK = kConvBK, kThreads = kConvThreads;
  const int tid = static_cast<int>(threadIdx.x);
  const int g = static_cast<int>(blockIdx.z);
  const int m0 = static_cast<int>(blockIdx.y) * kBM;
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
      sm.a[kk][m] = (gm < p.kg && gk < p.crs) ? wg[static_cast<long long>(gm) * p.crs + gk] : 0.0f;
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
      sm.b[kk][nb] = v;
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < kBK; ++kk) {
      float a[4], b[4];
#pragma unroll
      for (int i = 0; i < 4; ++i) a[i] = sm.a[kk][ty * 4 + i];
#pragma unroll
      for (int j = 0; j < 4; ++j) b[j] = sm.b[kk][tx * 4 + j];
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

}  // namespace taihu::dnn_cuda::detail
