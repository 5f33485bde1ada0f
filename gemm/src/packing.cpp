// Packing loops. The no-transpose cases read columns contiguously; the transposed
// cases read rows, which the hardware prefetcher follows as several short streams.
#include "packing.hpp"

#include <emmintrin.h>  // SSE2: the x86-64 baseline, so no dispatch is needed here

namespace taihu::gemm {
namespace {

// `cols` source lines, line j contiguous in p (a no-transpose B panel's columns, or a
// transposed A panel's rows), into a panel of width nr (dst[p * nr + j]). Groups of 4 (float) or 2 (double) columns are transposed in
// registers, 4 or 2 k steps at a time, so most loads and stores are vectors instead
// of one strided scalar store per element.
void pack_lines(const float* src, index_t ld, index_t kc, int cols, int nr, float* dst) {
  int j = 0;
  for (; j + 4 <= cols; j += 4) {
    const float* s0 = src + j * ld;
    const float *s1 = s0 + ld, *s2 = s1 + ld, *s3 = s2 + ld;
    float* d = dst + j;
    index_t p = 0;
    for (; p + 4 <= kc; p += 4, d += 4 * nr) {
      __m128 r0 = _mm_loadu_ps(s0 + p), r1 = _mm_loadu_ps(s1 + p);
      __m128 r2 = _mm_loadu_ps(s2 + p), r3 = _mm_loadu_ps(s3 + p);
      _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
      _mm_storeu_ps(d, r0);
      _mm_storeu_ps(d + nr, r1);
      _mm_storeu_ps(d + 2 * nr, r2);
      _mm_storeu_ps(d + 3 * nr, r3);
    }
    for (; p < kc; ++p, d += nr) {
      d[0] = s0[p], d[1] = s1[p], d[2] = s2[p], d[3] = s3[p];
    }
  }
  for (; j < cols; ++j) {
    const float* sj = src + j * ld;
    for (index_t p = 0; p < kc; ++p) dst[p * nr + j] = sj[p];
  }
}

void pack_lines(const double* src, index_t ld, index_t kc, int cols, int nr, double* dst) {
  int j = 0;
  for (; j + 2 <= cols; j += 2) {
    const double* s0 = src + j * ld;
    const double* s1 = s0 + ld;
    double* d = dst + j;
    index_t p = 0;
    for (; p + 2 <= kc; p += 2, d += 2 * nr) {
      const __m128d r0 = _mm_loadu_pd(s0 + p), r1 = _mm_loadu_pd(s1 + p);
      _mm_storeu_pd(d, _mm_unpacklo_pd(r0, r1));
      _mm_storeu_pd(d + nr, _mm_unpackhi_pd(r0, r1));
    }
    for (; p < kc; ++p, d += nr) {
      d[0] = s0[p], d[1] = s1[p];
    }
  }
  for (; j < cols; ++j) {
    const double* sj = src + j * ld;
    for (index_t p = 0; p < kc; ++p) dst[p * nr + j] = sj[p];
  }
}

}  // namespace

template <class T>
void pack_a(const MatrixView<T>& a, index_t i0, index_t mc, index_t p0, index_t kc, int mr,
            T* packed, index_t panel_begin, index_t panel_end) {
  for (index_t panel = panel_begin; panel < panel_end; ++panel) {
    T* dst = packed + panel * mr * kc;
    const index_t row = i0 + panel * mr;
    const index_t rows = mc - panel * mr < mr ? mc - panel * mr : mr;
    if (!a.trans) {
      for (index_t p = 0; p < kc; ++p, dst += mr) {
        const T* src = a.data + row + (p0 + p) * a.ld;
        index_t i = 0;
        for (; i < rows; ++i) dst[i] = src[i];
        for (; i < mr; ++i) dst[i] = T(0);
      }
    } else {
      // op(A)(i, p) = a[p + i*ld]: each row is contiguous in p.
      pack_lines(a.data + p0 + row * a.ld, a.ld, kc, static_cast<int>(rows), mr, dst);
      for (index_t i = rows; i < mr; ++i)
        for (index_t p = 0; p < kc; ++p) dst[p * mr + i] = T(0);
    }
  }
}

template <class T>
void pack_b(const MatrixView<T>& b, index_t p0, index_t kc, index_t j0, index_t nc, int nr,
            T* packed, index_t panel_begin, index_t panel_end) {
  for (index_t panel = panel_begin; panel < panel_end; ++panel) {
    T* dst = packed + panel * nr * kc;
    const index_t col = j0 + panel * nr;
    const index_t cols = nc - panel * nr < nr ? nc - panel * nr : nr;
    if (!b.trans) {
      // op(B)(p, j) = b[p + j*ld]: each column is contiguous in p.
      pack_lines(b.data + p0 + col * b.ld, b.ld, kc, static_cast<int>(cols), nr, dst);
      for (index_t j = cols; j < nr; ++j)
        for (index_t p = 0; p < kc; ++p) dst[p * nr + j] = T(0);
    } else {
      // op(B)(p, j) = b[j + p*ld]: each k step is a contiguous row of nr values.
      for (index_t p = 0; p < kc; ++p, dst += nr) {
        const T* src = b.data + col + (p0 + p) * b.ld;
        index_t j = 0;
        for (; j < cols; ++j) dst[j] = src[j];
        for (; j < nr; ++j) dst[j] = T(0);
      }
    }
  }
}

template void pack_a<float>(const MatrixView<float>&, index_t, index_t, index_t, index_t, int,
                            float*, index_t, index_t);
template void pack_a<double>(const MatrixView<double>&, index_t, index_t, index_t, index_t, int,
                             double*, index_t, index_t);
template void pack_b<float>(const MatrixView<float>&, index_t, index_t, index_t, index_t, int,
                            float*, index_t, index_t);
template void pack_b<double>(const MatrixView<double>&, index_t, index_t, index_t, index_t, int,
                             double*, index_t, index_t);

}  // namespace taihu::gemm
