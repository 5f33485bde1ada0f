// Reorders between NCHW/OIHW and the blocked nChw8c/nChw16c/OIhw8i8o layouts
// (layout.hpp); the activation reorders run per channel block through layout_kernels.hpp
// (AVX2: 8x8 register transposes, 3-5x the scalar loops on ResNet conv1's 64 x 112 x 112).
#include "taihu/dnn/layout.hpp"

#include <algorithm>
#include <string>

#include "core/layout_kernels.hpp"
#include "taihu/arch/dispatch.hpp"
#include "taihu/arch/error.hpp"

namespace taihu::dnn {

namespace {
void check(const char* routine, const float* src, const float* dst,
           std::initializer_list<std::pair<const char*, index_t>> sizes) {
  bool empty = false;
  for (const auto& [name, v] : sizes) {
    if (v < 0)
      throw Error(std::string("taihu: ") + routine + ": " + name + " = " + std::to_string(v) +
                  " must be >= 0");
    if (v == 0) empty = true;
  }
  if (!empty && (src == nullptr || dst == nullptr))
    throw Error(std::string("taihu: ") + routine + ": " + (src ? "dst" : "src") + " is null");
}

struct ReorderKernels {
  layout_kernels::UnblockKernel unblock;
  layout_kernels::BlockKernel block;
};

const ReorderKernels& reorder_kernels() {
  static const arch::ImplementationList<ReorderKernels> list(
      "nChw8c/nChw16c reorders",
      {{"avx2_8x8", arch::Isa::avx2, {&layout_kernels::unblock_avx2, &layout_kernels::block_avx2}},
       {"generic", arch::Isa::generic, {&layout_kernels::unblock_generic, &layout_kernels::block_generic}}});
  return list.chosen().impl;
}
}  // namespace

index_t nchw8c_elements(index_t n, index_t c, index_t h, index_t w) {
  return n * channel_blocks(c) * kChannelBlock * h * w;
}

index_t oihw8i8o_elements(index_t k, index_t c, index_t kh, index_t kw) {
  return channel_blocks(k) * channel_blocks(c) * kh * kw * kChannelBlock * kChannelBlock;
}

namespace {
// NCHW -> blocks of B channels ([n][ceil(c/B)][h][w][B], the lanes past c zero).
void block_nchw(const char* routine, const float* src, float* dst, index_t n, index_t c, index_t h, index_t w,
                int B) {
  check(routine, src, dst, {{"n", n}, {"c", c}, {"h", h}, {"w", w}});
  const index_t cb = (c + B - 1) / B, hw = h * w;
  const layout_kernels::BlockKernel kernel = reorder_kernels().block;
  for (index_t i = 0; i < n; ++i)
    for (index_t b = 0; b < cb; ++b)
      kernel(src + (i * c + b * B) * hw, dst + (i * cb + b) * hw * B, std::min<index_t>(B, c - b * B), hw, B);
}

void unblock_nchw(const char* routine, const float* src, float* dst, index_t n, index_t c, index_t h, index_t w,
                  int B) {
  check(routine, src, dst, {{"n", n}, {"c", c}, {"h", h}, {"w", w}});
  const index_t cb = (c + B - 1) / B, hw = h * w;
  const layout_kernels::UnblockKernel kernel = reorder_kernels().unblock;
  for (index_t i = 0; i < n; ++i)
    for (index_t b = 0; b < cb; ++b)
      kernel(src + (i * cb + b) * hw * B, dst + (i * c + b * B) * hw, std::min<index_t>(B, c - b * B), hw, B);
}
}  // namespace

void reorder_nchw_to_nchw8c(const float* src, float* dst, index_t n, index_t c, index_t h, index_t w) {
  block_nchw("reorder_nchw_to_nchw8c", src, dst, n, c, h, w, 8);
}

void reorder_nchw8c_to_nchw(const float* src, float* dst, index_t n, index_t c, index_t h, index_t w) {
  unblock_nchw("reorder_nchw8c_to_nchw", src, dst, n, c, h, w, 8);
}

index_t nchw16c_elements(index_t n, index_t c, index_t h, index_t w) { return n * ((c + 15) / 16) * 16 * h * w; }

void reorder_nchw_to_nchw16c(const float* src, float* dst, index_t n, index_t c, index_t h, index_t w) {
  block_nchw("reorder_nchw_to_nchw16c", src, dst, n, c, h, w, 16);
}

void reorder_nchw16c_to_nchw(const float* src, float* dst, index_t n, index_t c, index_t h, index_t w) {
  unblock_nchw("reorder_nchw16c_to_nchw", src, dst, n, c, h, w, 16);
}

void reorder_oihw_to_oihw8i8o(const float* src, float* dst, index_t k, index_t c, index_t kh,
                              index_t kw) {
  check("reorder_oihw_to_oihw8i8o", src, dst, {{"k", k}, {"c", c}, {"kh", kh}, {"kw", kw}});
  const index_t kb = channel_blocks(k), cb = channel_blocks(c), rs = kh * kw;
  constexpr index_t B = kChannelBlock;
  for (index_t ob = 0; ob < kb; ++ob)
    for (index_t ib = 0; ib < cb; ++ib)
      for (index_t p = 0; p < rs; ++p)
        for (index_t i = 0; i < B; ++i)
          for (index_t o = 0; o < B; ++o) {
            const index_t oc = ob * B + o, ic = ib * B + i;
            dst[(((ob * cb + ib) * rs + p) * B + i) * B + o] =
                (oc < k && ic < c) ? src[(oc * c + ic) * rs + p] : 0.0f;
          }
}

void reorder_oihw8i8o_to_oihw(const float* src, float* dst, index_t k, index_t c, index_t kh,
                              index_t kw) {
  check("reorder_oihw8i8o_to_oihw", src, dst, {{"k", k}, {"c", c}, {"kh", kh}, {"kw", kw}});
  const index_t cb = channel_blocks(c), rs = kh * kw;
  constexpr index_t B = kChannelBlock;
  for (index_t oc = 0; oc < k; ++oc)
    for (index_t ic = 0; ic < c; ++ic)
      for (index_t p = 0; p < rs; ++p)
        dst[(oc * c + ic) * rs + p] =
            src[((((oc / B) * cb + ic / B) * rs + p) * B + ic % B) * B + oc % B];
}

}  // namespace taihu::dnn
