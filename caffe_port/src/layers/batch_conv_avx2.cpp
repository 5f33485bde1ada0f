// BatchConv's backward-weights kernel for layers with few weight columns (first
// layers: LeNet's conv1 has 25, CIFAR-10 quick's 75), compiled for AVX2+FMA:
//   dw[k][row] += sum_p dy[k][p] * col[row][p],  p < depth,
// on dy and col blocks laid out with leading dimension ld (see batch_conv.hpp). There a
// GEMM would pack both operands for a 20 x 25 product; here tiles of 4 output
// channels x 3 columns keep 12 eight-lane accumulators in registers over blocks of
// pixels, reading both operands in place.
#include <immintrin.h>

#include "layers/batch_conv_kernels.hpp"

namespace taihu::caffe::kernels {
namespace {

float hsum(__m256 v) {
  alignas(32) float t[8];
  _mm256_store_ps(t, v);
  return ((t[0] + t[1]) + (t[2] + t[3])) + ((t[4] + t[5]) + (t[6] + t[7]));
}

// One KI x RJ tile over pixels [p0, p1) (p1 - p0 a multiple of 8).
template <int KI, int RJ>
void tile(const float* dy, const float* col, std::int64_t ld, std::int64_t rows, std::int64_t p0, std::int64_t p1,
          float* dw) {
  __m256 acc[KI][RJ];
  for (int i = 0; i < KI; ++i)
    for (int j = 0; j < RJ; ++j) acc[i][j] = _mm256_setzero_ps();
  for (std::int64_t p = p0; p < p1; p += 8) {
    __m256 c[RJ];
    for (int j = 0; j < RJ; ++j) c[j] = _mm256_loadu_ps(col + j * ld + p);
    for (int i = 0; i < KI; ++i) {
      const __m256 d = _mm256_loadu_ps(dy + i * ld + p);
      for (int j = 0; j < RJ; ++j) acc[i][j] = _mm256_fmadd_ps(d, c[j], acc[i][j]);
    }
  }
  for (int i = 0; i < KI; ++i)
    for (int j = 0; j < RJ; ++j) dw[i * rows + j] += hsum(acc[i][j]);
}

}  // namespace

void backward_weights_small_avx2(const float* dy, const float* col, std::int64_t kg, std::int64_t rows,
                                 std::int64_t depth, std::int64_t ld, float* dw) {
  constexpr std::int64_t kBlock = 512;  // pixels per pass: dy and col rows stay in L1/L2
  const std::int64_t vec_end = depth - depth % 8;
  for (std::int64_t p0 = 0; p0 < vec_end; p0 += kBlock) {
    const std::int64_t p1 = p0 + kBlock < vec_end ? p0 + kBlock : vec_end;
    std::int64_t k = 0;
    for (; k + 4 <= kg; k += 4) {
      std::int64_t r = 0;
      for (; r + 3 <= rows; r += 3) tile<4, 3>(dy + k * ld, col + r * ld, ld, rows, p0, p1, dw + k * rows + r);
      for (; r < rows; ++r) tile<4, 1>(dy + k * ld, col + r * ld, ld, rows, p0, p1, dw + k * rows + r);
    }
    for (; k < kg; ++k) {
      std::int64_t r = 0;
      for (; r + 3 <= rows; r += 3) tile<1, 3>(dy + k * ld, col + r * ld, ld, rows, p0, p1, dw + k * rows + r);
      for (; r < rows; ++r) tile<1, 1>(dy + k * ld, col + r * ld, ld, rows, p0, p1, dw + k * rows + r);
    }
  }
  if (vec_end == depth) return;
  for (std::int64_t k = 0; k < kg; ++k)
    for (std::int64_t r = 0; r < rows; ++r) {
      float s = 0.0f;
      for (std::int64_t p = vec_end; p < depth; ++p) s += dy[k * ld + p] * col[r * ld + p];
      dw[k * rows + r] += s;
    }
}

}  // namespace taihu::caffe::kernels
