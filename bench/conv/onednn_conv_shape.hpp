// The dims a oneDNN convolution descriptor needs for a taihu ConvDesc, shared by the
// oneDNN 2.x anchor (linked in) and the oneDNN 3.x server (its own binary): both
// versions spell dims as std::vector<int64_t> and use the same conventions (dilation
// counted from 0, right padding implied by the output size), so the arithmetic lives
// here once and each side builds its own version's descriptors from it.
#pragma once
#include <cstdint>
#include <vector>

#include "taihu/dnn/conv.hpp"

namespace taihu::bench {

struct OnednnConvShape {
  using dims = std::vector<std::int64_t>;
  dims src, dst, bias, wei, strides, dilation, pad_l, pad_r;
  bool grouped = false;  // weights are goihw instead of oihw
};

inline OnednnConvShape onednn_conv_shape(const dnn::ConvDesc& d) {
  OnednnConvShape s;
  s.src = {d.n, d.c, d.h, d.w};
  s.dst = {d.n, d.k, d.out_h(), d.out_w()};
  s.bias = {d.k};
  s.grouped = d.groups > 1;
  s.wei = s.grouped ? OnednnConvShape::dims{d.groups, d.k / d.groups, d.c / d.groups, d.kh, d.kw}
                    : OnednnConvShape::dims{d.k, d.c, d.kh, d.kw};
  s.strides = {d.stride_h, d.stride_w};
  s.dilation = {d.dil_h - 1, d.dil_w - 1};
  s.pad_l = {d.pad_h, d.pad_w};
  s.pad_r = {(d.out_h() - 1) * d.stride_h + (d.kh - 1) * d.dil_h + 1 - d.h - d.pad_h,
             (d.out_w() - 1) * d.stride_w + (d.kw - 1) * d.dil_w + 1 - d.w - d.pad_w};
  return s;
}

}  // namespace taihu::bench
