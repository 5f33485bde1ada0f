// Explicit GEMM convolution, the Caffe way: per image and group, im2col into a column
// buffer [Cg*kh*kw][oh*ow], then one taihu::gemm; backward-data is W^T * dy followed
// by col2im, backward-weights dy * col^T accumulated over images. 1x1/stride-1/no-pad
// problems use the input itself as the column matrix. Supports every problem.
// Threads: with at least as many images as threads, images run in parallel (gemm
// single-threaded inside); otherwise images run in turn and gemm uses the threads.
#include <algorithm>
#include <cstring>
#include <omp.h>

#include "conv_algorithm.hpp"
#include "core/parallel.hpp"
#include "im2col.hpp"
#include "taihu/arch/aligned_buffer.hpp"
#include "taihu/arch/threads.hpp"
#include "taihu/gemm/gemm.hpp"

namespace taihu::dnn::conv {

namespace {

using gemm::Layout;
using gemm::Trans;

class ExplicitGemm final : public ConvAlgorithm {
 public:
  explicit ExplicitGemm(const ConvDesc& d)
      : d_(d), kg_(d.k / d.groups), cg_(d.c / d.groups), rows_(cg_ * d.kh * d.kw),
        plane_(d.out_h() * d.out_w()) {}

  void forward(const float* x, const float* w, const float* bias, float* y, WeightsHint) override {
    const int nt = arch::threads_for_call();
    if (d_.n >= nt && nt > 1) {
      ensure_cols(nt);
#pragma omp parallel for num_threads(nt) schedule(static)
      for (index_t n = 0; n < d_.n; ++n) forward_image(x, w, y, n, col_for(omp_get_thread_num()), false);
    } else {
      ensure_cols(1);
      for (index_t n = 0; n < d_.n; ++n) forward_image(x, w, y, n, col_for(0), nt > 1);
    }
    add_bias(d_, bias, y);
  }

  void backward_data(const float* dy, const float* w, float* dx, WeightsHint) override {
    const int nt = arch::threads_for_call();
    if (d_.n >= nt && nt > 1) {
      ensure_cols(nt);
#pragma omp parallel for num_threads(nt) schedule(static)
      for (index_t n = 0; n < d_.n; ++n) backward_data_image(dy, w, dx, n, col_for(omp_get_thread_num()), false);
    } else {
      ensure_cols(1);
      for (index_t n = 0; n < d_.n; ++n) backward_data_image(dy, w, dx, n, col_for(0), nt > 1);
    }
  }

  void backward_weights(const float* x, const float* dy, float* dw, float* dbias,
                        bool accumulate) override {
    ensure_cols(1);
    const int nt = arch::threads_for_call();
    for (index_t n = 0; n < d_.n; ++n)
      for (index_t g = 0; g < d_.groups; ++g) {
        const float* xg = x + (n * d_.c + g * cg_) * d_.h * d_.w;
        const float* col = xg;
        if (!im2col_is_identity(d_)) {
          parallel_im2col(xg, col_for(0), nt);
          col = col_for(0);
        }
        const float beta = (n == 0 && !accumulate) ? 0.0f : 1.0f;
        gemm::sgemm(Layout::row_major, Trans::no, Trans::yes, kg_, rows_, plane_, 1.0f,
                    dy + (n * d_.k + g * kg_) * plane_, plane_, col, plane_, beta,
                    dw + g * kg_ * rows_, rows_);
      }
    bias_gradient(d_, dy, dbias, accumulate);
  }

 private:
  void ensure_cols(int count) {
    if (im2col_is_identity(d_)) return;
    const std::size_t per = static_cast<std::size_t>(rows_ * plane_ + 16) & ~std::size_t{15};
    if (cols_.size() < per * count) cols_ = arch::AlignedBuffer<float>(per * count);
    col_stride_ = per;
  }
  float* col_for(int t) { return cols_.data() + col_stride_ * t; }

  void parallel_im2col(const float* xg, float* col, int nt) {
    if (nt <= 1) {
      im2col(d_, xg, col, 0, rows_);
      return;
    }
#pragma omp parallel num_threads(nt)
    {
      index_t b, e;
      split_range(rows_, omp_get_thread_num(), omp_get_num_threads(), b, e);
      im2col(d_, xg, col, b, e);
    }
  }

  // use_threads: whether gemm/im2col may use threads (false inside the image loop).
  void forward_image(const float* x, const float* w, float* y, index_t n, float* colbuf,
                     bool use_threads) {
    for (index_t g = 0; g < d_.groups; ++g) {
      const float* xg = x + (n * d_.c + g * cg_) * d_.h * d_.w;
      const float* col = xg;
      if (!im2col_is_identity(d_)) {
        parallel_im2col(xg, colbuf, use_threads ? arch::threads_for_call() : 1);
        col = colbuf;
      }
      gemm::sgemm(Layout::row_major, Trans::no, Trans::no, kg_, plane_, rows_, 1.0f,
                  w + g * kg_ * rows_, rows_, col, plane_, 0.0f, y + (n * d_.k + g * kg_) * plane_,
                  plane_);
    }
  }

  void backward_data_image(const float* dy, const float* w, float* dx, index_t n, float* colbuf,
                           bool use_threads) {
    for (index_t g = 0; g < d_.groups; ++g) {
      float* dxg = dx + (n * d_.c + g * cg_) * d_.h * d_.w;
      const float* dyg = dy + (n * d_.k + g * kg_) * plane_;
      if (im2col_is_identity(d_)) {
        gemm::sgemm(Layout::row_major, Trans::yes, Trans::no, rows_, plane_, kg_, 1.0f,
                    w + g * kg_ * rows_, rows_, dyg, plane_, 0.0f, dxg, plane_);
        continue;
      }
      gemm::sgemm(Layout::row_major, Trans::yes, Trans::no, rows_, plane_, kg_, 1.0f,
                  w + g * kg_ * rows_, rows_, dyg, plane_, 0.0f, colbuf, plane_);
      // No more threads than channels to split: at one input channel (LeNet conv1,
      // batch 1) a second thread got no rows and cost only its fork.
      const int nt = use_threads ? static_cast<int>(std::min<index_t>(arch::threads_for_call(), cg_)) : 1;
      ops::run_team(nt, [&] {
        index_t b, e;
        split_range(cg_, omp_get_thread_num(), omp_get_num_threads(), b, e);
        std::memset(dxg + b * d_.h * d_.w, 0, sizeof(float) * (e - b) * d_.h * d_.w);
        col2im(d_, colbuf, dxg, b, e);
      });
    }
  }

  ConvDesc d_;
  index_t kg_, cg_, rows_, plane_;
  arch::AlignedBuffer<float> cols_;
  std::size_t col_stride_ = 0;
};

}  // namespace

bool explicit_gemm_supports(const ConvDesc&, ConvDirection) { return true; }
std::unique_ptr<ConvAlgorithm> make_explicit_gemm(const ConvDesc& d) {
  return std::make_unique<ExplicitGemm>(d);
}

}  // namespace taihu::dnn::conv
