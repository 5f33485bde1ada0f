// Reorders between NCHW/OIHW and the blocked nChw8c/OIhw8i8o layouts (layout.hpp).
#include "taihu/dnn/layout.hpp"

#include <string>

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
}  // namespace

index_t nchw8c_elements(index_t n, index_t c, index_t h, index_t w) {
  return n * channel_blocks(c) * kChannelBlock * h * w;
}

index_t oihw8i8o_elements(index_t k, index_t c, index_t kh, index_t kw) {
  return channel_blocks(k) * channel_blocks(c) * kh * kw * kChannelBlock * kChannelBlock;
}

void reorder_nchw_to_nchw8c(const float* src, float* dst, index_t n, index_t c, index_t h,
                            index_t w) {
  check("reorder_nchw_to_nchw8c", src, dst, {{"n", n}, {"c", c}, {"h", h}, {"w", w}});
  const index_t cb = channel_blocks(c), hw = h * w;
  for (index_t i = 0; i < n; ++i)
    for (index_t b = 0; b < cb; ++b) {
      float* out = dst + (i * cb + b) * hw * kChannelBlock;
      for (index_t l = 0; l < kChannelBlock; ++l) {
        const index_t ch = b * kChannelBlock + l;
        const float* in = src + (i * c + ch) * hw;
        for (index_t p = 0; p < hw; ++p) out[p * kChannelBlock + l] = ch < c ? in[p] : 0.0f;
      }
    }
}

void reorder_nchw8c_to_nchw(const float* src, float* dst, index_t n, index_t c, index_t h,
                            index_t w) {
  check("reorder_nchw8c_to_nchw", src, dst, {{"n", n}, {"c", c}, {"h", h}, {"w", w}});
  const index_t cb = channel_blocks(c), hw = h * w;
  for (index_t i = 0; i < n; ++i)
    for (index_t ch = 0; ch < c; ++ch) {
      const float* in = src + (i * cb + ch / kChannelBlock) * hw * kChannelBlock + ch % kChannelBlock;
      float* out = dst + (i * c + ch) * hw;
      for (index_t p = 0; p < hw; ++p) out[p] = in[p * kChannelBlock];
    }
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
