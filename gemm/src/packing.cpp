// Packing loops. The no-transpose cases read columns contiguously; the transposed
// cases read rows, which the hardware prefetcher follows as several short streams.
#include "packing.hpp"

namespace taihu::gemm {

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
      for (index_t i = 0; i < rows; ++i) {
        const T* src = a.data + p0 + (row + i) * a.ld;
        for (index_t p = 0; p < kc; ++p) dst[p * mr + i] = src[p];
      }
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
      for (index_t j = 0; j < cols; ++j) {
        const T* src = b.data + p0 + (col + j) * b.ld;
        for (index_t p = 0; p < kc; ++p) dst[p * nr + j] = src[p];
      }
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
