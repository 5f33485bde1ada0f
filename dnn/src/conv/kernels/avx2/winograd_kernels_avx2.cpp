// AVX2 instantiation of the Winograd tile transforms (winograd_kernels.hpp): V is one
// __m256, a block of 8 channels; channel GEMM tiles of 6 tiles x 16 channels (12 of the
// 16 ymm registers accumulate), backward-weights' tiles of 4 input x 24 output channels
// (12 accumulators); the row scatter/gather by 8x8 register transposes.
#include <immintrin.h>

#include "conv/kernels/winograd_rows_x86.hpp"
#include "conv/winograd_kernels.hpp"

namespace taihu::dnn::conv {

namespace {
struct V8 {
  static constexpr int lanes = 8;
  __m256 v;
  static V8 load(const float* p) { return {_mm256_loadu_ps(p)}; }
  void store(float* p) const { _mm256_storeu_ps(p, v); }
  friend V8 operator+(V8 a, V8 b) { return {_mm256_add_ps(a.v, b.v)}; }
  friend V8 operator-(V8 a, V8 b) { return {_mm256_sub_ps(a.v, b.v)}; }
  friend V8 operator*(V8 a, float s) { return {_mm256_mul_ps(a.v, _mm256_set1_ps(s))}; }
  static V8 zero() { return {_mm256_setzero_ps()}; }
  static V8 bcast(float s) { return {_mm256_set1_ps(s)}; }
  friend V8 fma(V8 a, V8 b, V8 c) { return {_mm256_fmadd_ps(a.v, b.v, c.v)}; }
};
}  // namespace

const WinogradKernelSet winograd_kernels_avx2 =
    make_winograd_kernel_set<V8, 6, 4, 3>(&kernels::wino_scatter_row_x86<8>, &kernels::wino_gather_row_x86<8>);

}  // namespace taihu::dnn::conv
