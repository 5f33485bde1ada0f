// im2col / col2im for one image and one channel group (Caffe's layout):
// col[(ci * kh + r) * kw + s][oy * ow + ox] = x[ci][oy*sh - ph + r*dh][ox*sw - pw + s*dw]
// (zero outside the image). Rows [row_begin, row_end) of col only, so callers can split
// the work across threads. col2im adds col back into x (x must be zeroed first) for the
// channels [c_begin, c_end).
#pragma once
#include "taihu/dnn/conv.hpp"

namespace taihu::dnn::conv {

// a / b rounded towards minus infinity (b > 0): the window arithmetic of padded, strided
// layers, where a may be negative.
inline index_t floor_div(index_t a, index_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

void im2col(const ConvDesc& d, const float* x_group, float* col, index_t row_begin,
            index_t row_end);
void col2im(const ConvDesc& d, const float* col, float* x_group, index_t c_begin, index_t c_end);
// Strided col2im (stride_w > 1) of input rows [iy_begin, iy_end) only, from a ring of
// `ring` output rows: output row oy of col row `row` at col + row * ld + (oy % ring) * ow
// (the whole matrix: ld = oh * ow, ring = oh). Each input row is summed in the same
// order either way, so a ring gives bitwise the whole matrix's result.
void col2im_strided(const ConvDesc& d, const float* col, index_t ld, index_t ring, float* x_group,
                    index_t c_begin, index_t c_end, index_t iy_begin, index_t iy_end);

// True when col would equal x (1x1 kernel, stride 1, no padding): skip the copy.
inline bool im2col_is_identity(const ConvDesc& d) {
  return d.kh == 1 && d.kw == 1 && d.stride_h == 1 && d.stride_w == 1 && d.pad_h == 0 &&
         d.pad_w == 0;
}

}  // namespace taihu::dnn::conv

namespace taihu::dnn::conv {

// The column block for output pixels [p_begin, p_end) (p = oy * ow + ox) of one image
// and group: colblock[row][p - p_begin] for all Cg*kh*kw rows, leading dimension ld.
// This is how implicit GEMM packs its B operand straight from the input windows.
void im2col_pixels(const ConvDesc& d, const float* x_group, float* colblock, index_t ld,
                   index_t p_begin, index_t p_end);

}  // namespace taihu::dnn::conv
