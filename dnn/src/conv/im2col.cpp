// im2col / col2im (see im2col.hpp), with a contiguous-copy fast path for stride 1 and
// per-phase row sums for strided col2im.
#include "im2col.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

namespace taihu::dnn::conv {

void im2col(const ConvDesc& d, const float* x_group, float* col, index_t row_begin,
            index_t row_end) {
  const index_t oh = d.out_h(), ow = d.out_w(), rs = d.kh * d.kw;
  for (index_t row = row_begin; row < row_end; ++row) {
    const index_t ci = row / rs, r = (row % rs) / d.kw, s = row % d.kw;
    const float* xc = x_group + ci * d.h * d.w;
    float* out = col + row * oh * ow;
    // ox range whose input column lies inside the image.
    const index_t off_x = s * d.dil_w - d.pad_w;
    index_t ox_lo = 0, ox_hi = ow;
    while (ox_lo < ow && ox_lo * d.stride_w + off_x < 0) ++ox_lo;
    while (ox_hi > ox_lo && (ox_hi - 1) * d.stride_w + off_x >= d.w) --ox_hi;
    for (index_t oy = 0; oy < oh; ++oy) {
      float* o = out + oy * ow;
      const index_t iy = oy * d.stride_h - d.pad_h + r * d.dil_h;
      if (iy < 0 || iy >= d.h) {
        std::memset(o, 0, sizeof(float) * ow);
        continue;
      }
      const float* xr = xc + iy * d.w + off_x;
      for (index_t ox = 0; ox < ox_lo; ++ox) o[ox] = 0.0f;
      if (d.stride_w == 1) {
        if (ox_hi > ox_lo) std::memcpy(o + ox_lo, xr + ox_lo, sizeof(float) * (ox_hi - ox_lo));
      } else {
        for (index_t ox = ox_lo; ox < ox_hi; ++ox) o[ox] = xr[ox * d.stride_w];
      }
      for (index_t ox = ox_hi; ox < ow; ++ox) o[ox] = 0.0f;
    }
  }
}

namespace {

// Stride 1: each col row added to its input rows as it is (contiguous, vectorized).
void col2im_rows(const ConvDesc& d, const float* col, float* x_group, index_t c_begin, index_t c_end) {
  const index_t oh = d.out_h(), ow = d.out_w();
  for (index_t ci = c_begin; ci < c_end; ++ci) {
    float* xc = x_group + ci * d.h * d.w;
    for (index_t r = 0; r < d.kh; ++r)
      for (index_t s = 0; s < d.kw; ++s) {
        const float* in = col + ((ci * d.kh + r) * d.kw + s) * oh * ow;
        const index_t off_x = s * d.dil_w - d.pad_w;
        index_t ox_lo = 0, ox_hi = ow;
        while (ox_lo < ow && ox_lo * d.stride_w + off_x < 0) ++ox_lo;
        while (ox_hi > ox_lo && (ox_hi - 1) * d.stride_w + off_x >= d.w) --ox_hi;
        for (index_t oy = 0; oy < oh; ++oy) {
          const index_t iy = oy * d.stride_h - d.pad_h + r * d.dil_h;
          if (iy < 0 || iy >= d.h) continue;
          float* xr = xc + iy * d.w + off_x;
          const float* c = in + oy * ow;
          for (index_t ox = ox_lo; ox < ox_hi; ++ox) xr[ox] += c[ox];
        }
      }
  }
}

}  // namespace

// Strided: per input row, the contributions of every (kernel row, kernel column) that
// lands on it are summed first, contiguously, into one buffer per column phase (input
// column ix = j * stride + phase), then added to the row once. Each col row is still
// read once, but the strided read-modify-writes drop from kh * kw per output pixel to
// one per input pixel (ResNet conv1: 1.84 M -> 0.15 M) and the kw-fold sums vectorize
// (ResNet conv1 / AlexNet conv1 backward-data +25% median in the A/B; stride 1 measured
// no gain, so it keeps the row loop above).
void col2im(const ConvDesc& d, const float* col, float* x_group, index_t c_begin, index_t c_end) {
  if (d.stride_w == 1) return col2im_rows(d, col, x_group, c_begin, c_end);
  col2im_strided(d, col, d.out_h() * d.out_w(), d.out_h(), x_group, c_begin, c_end, 0, d.h);
}

void col2im_strided(const ConvDesc& d, const float* col, index_t ld, index_t ring, float* x_group,
                    index_t c_begin, index_t c_end, index_t iy_begin, index_t iy_end) {
  const index_t oh = d.out_h(), ow = d.out_w(), sw = d.stride_w;
  // Column offsets s * dil - pad = (base + jmin) * stride + phase.
  const index_t jmin = floor_div(-d.pad_w, sw), jmax = floor_div((d.kw - 1) * d.dil_w - d.pad_w, sw);
  const index_t len = ow + jmax - jmin;
  std::vector<index_t> base(static_cast<std::size_t>(d.kw)), phase(static_cast<std::size_t>(d.kw));
  for (index_t s = 0; s < d.kw; ++s) {
    const index_t off = s * d.dil_w - d.pad_w, q = floor_div(off, sw);
    base[static_cast<std::size_t>(s)] = q - jmin;
    phase[static_cast<std::size_t>(s)] = off - q * sw;
  }
  std::vector<float> sums(static_cast<std::size_t>(sw * len));
  for (index_t ci = c_begin; ci < c_end; ++ci) {
    float* xc = x_group + ci * d.h * d.w;
    for (index_t iy = iy_begin; iy < iy_end; ++iy) {
      bool any = false;
      for (index_t r = 0; r < d.kh; ++r) {
        const index_t t = iy + d.pad_h - r * d.dil_h;
        if (t < 0 || t % d.stride_h != 0 || t / d.stride_h >= oh) continue;
        if (!any) std::fill(sums.begin(), sums.end(), 0.0f);
        any = true;
        const float* crow = col + (ci * d.kh + r) * d.kw * ld + (t / d.stride_h) % ring * ow;
        for (index_t s = 0; s < d.kw; ++s) {
          const float* c = crow + s * ld;
          float* p = sums.data() + phase[static_cast<std::size_t>(s)] * len + base[static_cast<std::size_t>(s)];
          for (index_t ox = 0; ox < ow; ++ox) p[ox] += c[ox];
        }
      }
      if (!any) continue;
      float* xr = xc + iy * d.w;
      for (index_t ph = 0; ph < sw; ++ph) {
        // ix = (j + jmin) * sw + ph inside [0, w); the rest fell on padding.
        const index_t j_lo = std::max<index_t>(0, -jmin);
        const index_t j_hi = ph < d.w ? std::min(len, floor_div(d.w - 1 - ph, sw) - jmin + 1) : 0;
        const float* p = sums.data() + ph * len;
        if (sw == 1)
          for (index_t j = j_lo; j < j_hi; ++j) xr[j + jmin] += p[j];
        else
          for (index_t j = j_lo; j < j_hi; ++j) xr[(j + jmin) * sw + ph] += p[j];
      }
    }
  }
}

}  // namespace taihu::dnn::conv

namespace taihu::dnn::conv {

void im2col_pixels(const ConvDesc& d, const float* x_group, float* colblock, index_t ld,
                   index_t p_begin, index_t p_end) {
  const index_t ow = d.out_w(), rows = (d.c / d.groups) * d.kh * d.kw, rs = d.kh * d.kw;
  for (index_t row = 0; row < rows; ++row) {
    const index_t ci = row / rs, r = (row % rs) / d.kw, s = row % d.kw;
    const float* xc = x_group + ci * d.h * d.w;
    float* out = colblock + row * ld - p_begin;
    // ox range whose input column lies inside the image.
    const index_t off_x = s * d.dil_w - d.pad_w;
    index_t ox_lo = 0, ox_hi = ow;
    while (ox_lo < ow && ox_lo * d.stride_w + off_x < 0) ++ox_lo;
    while (ox_hi > ox_lo && (ox_hi - 1) * d.stride_w + off_x >= d.w) --ox_hi;
    for (index_t p = p_begin; p < p_end;) {
      const index_t oy = p / ow, x0 = p % ow;
      const index_t x1 = std::min(ow, x0 + (p_end - p));
      const index_t iy = oy * d.stride_h - d.pad_h + r * d.dil_h;
      float* o = out + oy * ow;
      if (iy < 0 || iy >= d.h) {
        for (index_t ox = x0; ox < x1; ++ox) o[ox] = 0.0f;
      } else {
        const float* xr = xc + iy * d.w + off_x;
        const index_t lo = std::clamp(ox_lo, x0, x1), hi = std::clamp(ox_hi, lo, x1);
        for (index_t ox = x0; ox < lo; ++ox) o[ox] = 0.0f;
        if (d.stride_w == 1) {
          if (hi > lo) std::memcpy(o + lo, xr + lo, sizeof(float) * (hi - lo));
        } else {
          for (index_t ox = lo; ox < hi; ++ox) o[ox] = xr[ox * d.stride_w];
        }
        for (index_t ox = hi; ox < x1; ++ox) o[ox] = 0.0f;
      }
      p += x1 - x0;
    }
  }
}

}  // namespace taihu::dnn::conv
