// Implicit GEMM convolution: y_g[Kg][P] = W_g[Kg][Cg*kh*kw] * X^_g[Cg*kh*kw][P] without
// materialising X^ (the im2col matrix). The weights are packed once into taihu::gemm's
// panel format (gemm::PackedA, cached under WeightsHint::unchanged); X^ is produced
// block by block of output pixels, straight from the input windows, into a per-thread
// buffer sized for L2, and multiplied at once. Work items (image, group, pixel block)
// run in parallel, gemm single-threaded inside.
// backward-weights: dW_g += dY_block * X^_block^T per block, per-thread partial sums.
// backward-data (stride 1): the forward pass of the transposed problem.
#include <algorithm>
#include <cstring>
#include <omp.h>
#include <vector>

#include "conv_algorithm.hpp"
#include "core/parallel.hpp"
#include "im2col.hpp"
#include "taihu/arch/aligned_buffer.hpp"
#include "taihu/arch/threads.hpp"
#include "taihu/gemm/gemm.hpp"
#include "taihu/gemm/packed.hpp"

namespace taihu::dnn::conv {

namespace {

using gemm::Layout;
using gemm::Trans;

class ImplicitGemm final : public ConvAlgorithm {
 public:
  explicit ImplicitGemm(const ConvDesc& d)
      : d_(d), kg_(d.k / d.groups), cg_(d.c / d.groups), rows_(cg_ * d.kh * d.kw),
        plane_(d.out_h() * d.out_w()), bwd_data_(d, make_implicit_gemm) {
    // Pixel block: the packed X^ block (rows x pb floats) stays within ~192 KiB.
    index_t pb = (192 * 1024 / 4) / std::max<index_t>(rows_, 1);
    pb = std::max<index_t>(16, pb / 16 * 16);
    pblock_ = std::min(pb, plane_);
    blocks_ = (plane_ + pblock_ - 1) / pblock_;
  }

  void forward(const float* x, const float* w, const float* bias, float* y, WeightsHint hint) override {
    if (packed_.empty()) {
      for (index_t g = 0; g < d_.groups; ++g)
        packed_.emplace_back(Layout::row_major, Trans::no, kg_, rows_, w + g * kg_ * rows_, rows_);
    } else if (hint == WeightsHint::changed) {  // in place: no allocation per call
      for (index_t g = 0; g < d_.groups; ++g) packed_[static_cast<std::size_t>(g)].repack(w + g * kg_ * rows_);
    }
    const int nt = arch::threads_for_call();
    ensure_buffers(nt);
    const index_t items = d_.n * d_.groups * blocks_;
    ops::parallel_for_dynamic(nt, items, [&](index_t it) {
      const index_t b = it % blocks_, g = (it / blocks_) % d_.groups, n = it / (blocks_ * d_.groups);
      const index_t p0 = b * pblock_, p1 = std::min(plane_, p0 + pblock_);
      float* buf = buf_for(omp_get_thread_num());
      im2col_pixels(d_, x + (n * d_.c + g * cg_) * d_.h * d_.w, buf, p1 - p0, p0, p1);
      gemm::gemm_packed(Layout::row_major, packed_[g], Trans::no, p1 - p0, 1.0f, buf, p1 - p0, 0.0f,
                        y + (n * d_.k + g * kg_) * plane_ + p0, plane_);
    });
    add_bias(d_, bias, y);
  }

  void backward_data(const float* dy, const float* w, float* dx, WeightsHint hint) override {
    bwd_data_.run(dy, w, dx, hint);
  }

  void backward_weights(const float* x, const float* dy, float* dw, float* dbias,
                        bool accumulate) override {
    const int nt = arch::threads_for_call();
    ensure_buffers(nt);
    const index_t wsize = d_.k * rows_;
    partial_.assign(static_cast<std::size_t>(wsize) * nt, 0.0f);
    const index_t items = d_.n * d_.groups * blocks_;
    ops::run_team(nt, [&] {
      const int t = omp_get_thread_num();
      float* mine = partial_.data() + static_cast<std::size_t>(wsize) * t;
      float* buf = buf_for(t);
      ops::for_dynamic(items, [&](index_t it) {
        const index_t b = it % blocks_, g = (it / blocks_) % d_.groups, n = it / (blocks_ * d_.groups);
        const index_t p0 = b * pblock_, p1 = std::min(plane_, p0 + pblock_);
        im2col_pixels(d_, x + (n * d_.c + g * cg_) * d_.h * d_.w, buf, p1 - p0, p0, p1);
        gemm::sgemm(Layout::row_major, Trans::no, Trans::yes, kg_, rows_, p1 - p0, 1.0f,
                    dy + (n * d_.k + g * kg_) * plane_ + p0, plane_, buf, p1 - p0, 1.0f,
                    mine + g * kg_ * rows_, rows_);
      });
#pragma omp for schedule(static)
      for (index_t i = 0; i < wsize; ++i) {
        float s = accumulate ? dw[i] : 0.0f;
        for (int u = 0; u < nt; ++u) s += partial_[static_cast<std::size_t>(wsize) * u + i];
        dw[i] = s;
      }
    });
    bias_gradient(d_, dy, dbias, accumulate);
  }

 private:
  void ensure_buffers(int nt) {
    const std::size_t per = (static_cast<std::size_t>(rows_ * pblock_) + 15) & ~std::size_t{15};
    if (bufs_.size() < per * nt) bufs_ = arch::AlignedBuffer<float>(per * nt);
    buf_stride_ = per;
  }
  float* buf_for(int t) { return bufs_.data() + buf_stride_ * t; }

  ConvDesc d_;
  index_t kg_, cg_, rows_, plane_, pblock_ = 1, blocks_ = 1;
  std::vector<gemm::PackedA<float>> packed_;
  arch::AlignedBuffer<float> bufs_;
  std::size_t buf_stride_ = 0;
  std::vector<float> partial_;
  TransposedBackwardData bwd_data_;
};

}  // namespace

bool implicit_gemm_supports(const ConvDesc& d, ConvDirection dir) {
  if (dir == ConvDirection::backward_data) return transposed_supported(d);
  return true;
}
std::unique_ptr<ConvAlgorithm> make_implicit_gemm(const ConvDesc& d) {
  return std::make_unique<ImplicitGemm>(d);
}

}  // namespace taihu::dnn::conv
