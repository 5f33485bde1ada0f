// Reference convolution: naive loops straight from the definition in conv.hpp,
// accumulating in double. Slow and obviously right: the last entry of the ordered
// list and the yardstick every test compares the fast algorithms against.
#include <vector>

#include "conv_algorithm.hpp"
#include "taihu/arch/threads.hpp"

namespace taihu::dnn::conv {

namespace {

class Reference final : public ConvAlgorithm {
 public:
  explicit Reference(const ConvDesc& d) : d_(d) {}

  void forward(const float* x, const float* w, const float* bias, float* y, WeightsHint) override {
    const ConvDesc& d = d_;
    const index_t oh = d.out_h(), ow = d.out_w(), kg = d.k / d.groups, cg = d.c / d.groups;
#pragma omp parallel for collapse(2) num_threads(arch::threads_for_call())
    for (index_t n = 0; n < d.n; ++n)
      for (index_t k = 0; k < d.k; ++k) {
        const index_t g = k / kg;
        for (index_t oy = 0; oy < oh; ++oy)
          for (index_t ox = 0; ox < ow; ++ox) {
            double acc = bias ? bias[k] : 0.0;
            for (index_t ci = 0; ci < cg; ++ci)
              for (index_t r = 0; r < d.kh; ++r) {
                const index_t iy = oy * d.stride_h - d.pad_h + r * d.dil_h;
                if (iy < 0 || iy >= d.h) continue;
                for (index_t s = 0; s < d.kw; ++s) {
                  const index_t ix = ox * d.stride_w - d.pad_w + s * d.dil_w;
                  if (ix < 0 || ix >= d.w) continue;
                  acc += static_cast<double>(w[((k * cg + ci) * d.kh + r) * d.kw + s]) *
                         x[((n * d.c + g * cg + ci) * d.h + iy) * d.w + ix];
                }
              }
            y[((n * d.k + k) * oh + oy) * ow + ox] = static_cast<float>(acc);
          }
      }
  }

  void backward_data(const float* dy, const float* w, float* dx, WeightsHint) override {
    const ConvDesc& d = d_;
    const index_t oh = d.out_h(), ow = d.out_w(), kg = d.k / d.groups, cg = d.c / d.groups;
#pragma omp parallel for collapse(2) num_threads(arch::threads_for_call())
    for (index_t n = 0; n < d.n; ++n)
      for (index_t c = 0; c < d.c; ++c) {
        const index_t g = c / cg, ci = c % cg;
        for (index_t iy = 0; iy < d.h; ++iy)
          for (index_t ix = 0; ix < d.w; ++ix) {
            double acc = 0.0;
            for (index_t r = 0; r < d.kh; ++r) {
              const index_t ty = iy + d.pad_h - r * d.dil_h;
              if (ty < 0 || ty % d.stride_h != 0 || ty / d.stride_h >= oh) continue;
              for (index_t s = 0; s < d.kw; ++s) {
                const index_t tx = ix + d.pad_w - s * d.dil_w;
                if (tx < 0 || tx % d.stride_w != 0 || tx / d.stride_w >= ow) continue;
                for (index_t ko = 0; ko < kg; ++ko) {
                  const index_t k = g * kg + ko;
                  acc += static_cast<double>(w[((k * cg + ci) * d.kh + r) * d.kw + s]) *
                         dy[((n * d.k + k) * oh + ty / d.stride_h) * ow + tx / d.stride_w];
                }
              }
            }
            dx[((n * d.c + c) * d.h + iy) * d.w + ix] = static_cast<float>(acc);
          }
      }
  }

  void backward_weights(const float* x, const float* dy, float* dw, float* dbias,
                        bool accumulate) override {
    const ConvDesc& d = d_;
    const index_t oh = d.out_h(), ow = d.out_w(), kg = d.k / d.groups, cg = d.c / d.groups;
#pragma omp parallel for collapse(2) num_threads(arch::threads_for_call())
    for (index_t k = 0; k < d.k; ++k)
      for (index_t ci = 0; ci < cg; ++ci) {
        const index_t g = k / kg;
        for (index_t r = 0; r < d.kh; ++r)
          for (index_t s = 0; s < d.kw; ++s) {
            double acc = 0.0;
            for (index_t n = 0; n < d.n; ++n)
              for (index_t oy = 0; oy < oh; ++oy) {
                const index_t iy = oy * d.stride_h - d.pad_h + r * d.dil_h;
                if (iy < 0 || iy >= d.h) continue;
                for (index_t ox = 0; ox < ow; ++ox) {
                  const index_t ix = ox * d.stride_w - d.pad_w + s * d.dil_w;
                  if (ix < 0 || ix >= d.w) continue;
                  acc += static_cast<double>(dy[((n * d.k + k) * oh + oy) * ow + ox]) *
                         x[((n * d.c + g * cg + ci) * d.h + iy) * d.w + ix];
                }
              }
            float& out = dw[((k * cg + ci) * d.kh + r) * d.kw + s];
            out = accumulate ? out + static_cast<float>(acc) : static_cast<float>(acc);
          }
      }
    if (dbias == nullptr) return;
    for (index_t k = 0; k < d.k; ++k) {
      double acc = 0.0;
      for (index_t n = 0; n < d.n; ++n)
        for (index_t p = 0; p < oh * ow; ++p) acc += dy[(n * d.k + k) * oh * ow + p];
      dbias[k] = accumulate ? dbias[k] + static_cast<float>(acc) : static_cast<float>(acc);
    }
  }

 private:
  ConvDesc d_;
};

}  // namespace

bool reference_supports(const ConvDesc&, ConvDirection) { return true; }
std::unique_ptr<ConvAlgorithm> make_reference(const ConvDesc& d) {
  return std::make_unique<Reference>(d);
}

}  // namespace taihu::dnn::conv
