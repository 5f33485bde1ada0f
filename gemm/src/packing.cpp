// Packing loops. One routine packs both operands: A's rows and B's columns are the
// "lines" of a panel, stored either across the panel at each k step (copied as short
// contiguous runs) or each along k (transposed in registers).
#include "packing.hpp"

#include <emmintrin.h>  // SSE2: the x86-64 baseline, so no dispatch is needed here

#include <algorithm>
#include <cstring>

namespace taihu::gemm {
namespace {

// `cols` source lines, line j contiguous in p (a no-transpose B panel's columns, or a
// transposed A panel's rows), into a panel of width nr (dst[p * nr + j]). Groups of 4 (float) or 2 (double) columns are transposed in
// registers, 4 or 2 k steps at a time, so most loads and stores are vectors instead
// of one strided scalar store per element.
void pack_lines(const float* src, index_t ld, index_t kc, int cols, int nr, float* dst) {
  int j = 0;
  for (; j + 4 <= cols || (j < cols && cols >= 4); j += 4) {
    // A ragged last group (nr = 6: columns 4, 5) is transposed as the group ending at
    // the last column; the columns it shares with the previous group get the same values.
    if (j + 4 > cols) j = cols - 4;
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
  for (; j + 2 <= cols || (j < cols && cols >= 2); j += 2) {
    if (j + 2 > cols) j = cols - 2;  // ragged last column: overlap the previous pair
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

// Lines across k (element (x, p) at data[x + p*ld]): walk k outermost and copy every
// panel's run of one source row, so the source is read as long contiguous rows. Panel
// by panel it would be one short run per row at a stride of ld, a new page each step
// for large ld, which defeats the hardware prefetcher (this cost 13% of a 1024^3
// sgemm). W > 0 is the panel width as a constant (full runs become a few vector
// moves); W == 0 takes it from `width`.
template <int W, class T>
void pack_rows(const T* data, index_t ld, index_t x0, index_t extent, index_t p0, index_t kc, T* packed,
               index_t panel_begin, index_t panel_end, int width = W) {
  const index_t w = W > 0 ? W : width;
  // Panels whose lines all exist; the last one may be ragged.
  const index_t full_end = std::min(panel_end, extent / w);
  for (index_t p = 0; p < kc; ++p) {
    const T* src = data + x0 + (p0 + p) * ld;
    index_t panel = panel_begin;
    for (; panel < full_end; ++panel) {
      // With W > 0 the length is a constant: the copy becomes a few vector moves.
      std::memcpy(packed + (panel * kc + p) * w, src + panel * w, static_cast<std::size_t>(w) * sizeof(T));
    }
    for (; panel < panel_end; ++panel) {
      T* dst = packed + (panel * kc + p) * w;
      const index_t x = panel * w;
      const index_t lines = std::max<index_t>(0, std::min(w, extent - x));
      index_t l = 0;
      for (; l < lines; ++l) dst[l] = src[x + l];
      for (; l < w; ++l) dst[l] = T(0);
    }
  }
}

// Panels [panel_begin, panel_end) of `width` lines each (rows of op(A), columns of
// op(B)), lines [x0, x0+extent) x depth [p0, p0+kc), element (x, p) at
// data[x + p*ld] (a panel's values contiguous at each k step) or, when lines_along_k,
// at data[p + x*ld] (each line contiguous in k; full panels then go through
// lines_packer where the ISA has one). Lines past `extent` are zero.
template <class T>
void pack_panels(const T* data, index_t ld, bool lines_along_k, index_t x0, index_t extent,
                 index_t p0, index_t kc, int width, T* packed, index_t panel_begin,
                 index_t panel_end, kernels::PackLinesFn<T> lines_packer) {
  if (lines_along_k) {
    for (index_t panel = panel_begin; panel < panel_end; ++panel) {
      T* dst = packed + panel * width * kc;
      const index_t x = x0 + panel * width;
      const index_t lines = extent - panel * width < width ? extent - panel * width : width;
      if (lines == width && lines_packer != nullptr) {
        lines_packer(data + p0 + x * ld, ld, kc, dst);
        continue;
      }
      pack_lines(data + p0 + x * ld, ld, kc, static_cast<int>(lines), width, dst);
      for (index_t l = lines; l < width; ++l)
        for (index_t p = 0; p < kc; ++p) dst[p * width + l] = T(0);
    }
    return;
  }
  switch (width) {  // the registered tile widths get copies of a constant length
    case 4: return pack_rows<4>(data, ld, x0, extent, p0, kc, packed, panel_begin, panel_end);
    case 6: return pack_rows<6>(data, ld, x0, extent, p0, kc, packed, panel_begin, panel_end);
    case 8: return pack_rows<8>(data, ld, x0, extent, p0, kc, packed, panel_begin, panel_end);
    case 12: return pack_rows<12>(data, ld, x0, extent, p0, kc, packed, panel_begin, panel_end);
    case 14: return pack_rows<14>(data, ld, x0, extent, p0, kc, packed, panel_begin, panel_end);  // AVX-512 DGEMM 16x14
    case 16: return pack_rows<16>(data, ld, x0, extent, p0, kc, packed, panel_begin, panel_end);
    case 24: return pack_rows<24>(data, ld, x0, extent, p0, kc, packed, panel_begin, panel_end);  // DGEMM 24x8
    case 32: return pack_rows<32>(data, ld, x0, extent, p0, kc, packed, panel_begin, panel_end);
    default: return pack_rows<0>(data, ld, x0, extent, p0, kc, packed, panel_begin, panel_end, width);
  }
}

}  // namespace

// op(A)(i, p) = a[i + p*ld], or a[p + i*ld] when transposed.
template <class T>
void pack_a(const MatrixView<T>& a, index_t i0, index_t mc, index_t p0, index_t kc, int mr,
            T* packed, index_t panel_begin, index_t panel_end, kernels::PackLinesFn<T> lines_packer) {
  pack_panels(a.data, a.ld, a.trans, i0, mc, p0, kc, mr, packed, panel_begin, panel_end, lines_packer);
}

// op(B)(p, j) = b[p + j*ld], or b[j + p*ld] when transposed: the no-transpose case is
// the one whose lines (columns) run along k.
template <class T>
void pack_b(const MatrixView<T>& b, index_t p0, index_t kc, index_t j0, index_t nc, int nr,
            T* packed, index_t panel_begin, index_t panel_end, kernels::PackLinesFn<T> lines_packer) {
  pack_panels(b.data, b.ld, !b.trans, j0, nc, p0, kc, nr, packed, panel_begin, panel_end, lines_packer);
}

template void pack_a<float>(const MatrixView<float>&, index_t, index_t, index_t, index_t, int, float*, index_t,
                            index_t, kernels::PackLinesFn<float>);
template void pack_a<double>(const MatrixView<double>&, index_t, index_t, index_t, index_t, int, double*, index_t,
                            index_t, kernels::PackLinesFn<double>);
template void pack_b<float>(const MatrixView<float>&, index_t, index_t, index_t, index_t, int, float*, index_t,
                            index_t, kernels::PackLinesFn<float>);
template void pack_b<double>(const MatrixView<double>&, index_t, index_t, index_t, index_t, int, double*, index_t,
                            index_t, kernels::PackLinesFn<double>);

}  // namespace taihu::gemm
