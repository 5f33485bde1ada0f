// Explicit GEMM convolution, the Caffe way: per image and group, im2col into a column
// buffer [Cg*kh*kw][oh*ow], then one taihu::gemm; backward-data is W^T * dy followed
// by col2im, backward-weights dy * col^T accumulated over images. 1x1/stride-1/no-pad
// problems use the input itself as the column matrix. Supports every problem.
// Threads: with at least as many images as threads, images run in parallel (gemm
// single-threaded inside); otherwise images run in turn and gemm uses the threads.
// Strided first layers' backward-data at AVX2 runs in output-row bands instead
// (backward_data_banded).
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <omp.h>
#include <vector>

#include "conv_algorithm.hpp"
#include "core/parallel.hpp"
#include "im2col.hpp"
#include "taihu/arch/aligned_buffer.hpp"
#include "taihu/arch/isa.hpp"
#include "taihu/arch/threads.hpp"
#include "taihu/gemm/gemm.hpp"
#include "taihu/gemm/packed.hpp"

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
    if (banded_backward_data()) return backward_data_banded(dy, w, dx, nt);
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

  // Strided backward-data in bands of output rows (AVX2, stride_w > 1): each band's
  // column matrix goes into a ring of output rows that stays in L2, and the input rows
  // whose windows the ring then holds whole are added up at once, instead of writing the
  // whole column matrix (AlexNet conv1: 4.4 MB) to L3 and reading it back. Each thread
  // owns a range of input rows (or whole images when there are enough) and computes the
  // output rows they read, the few shared at a boundary twice. Bitwise as the
  // whole-matrix path: each column element is the same dot product (W^T packed once),
  // and col2im_strided sums each input row in the same order.
  // Taken where measured: AVX2, input channels <= 4 (AlexNet / ResNet-50 conv1).
  // TAIHU_BWDD_BANDS=0 / 1 forces it off / on for any strided problem (comparisons, tests).
  bool banded_backward_data() const {
    static const char* env = std::getenv("TAIHU_BWDD_BANDS");
    if (im2col_is_identity(d_) || d_.stride_w == 1) return false;
    if (env != nullptr && *env != '\0') return *env != '0';
    return arch::active_isa() == arch::Isa::avx2 && cg_ <= 4;
  }

  // Output rows in a band, and how many rows before it an input row may still read
  // ((kh - 1) * dil_h / stride_h): the ring holds both. TAIHU_BWDD_BAND_ROWS=n forces
  // the band (tests: n = 1 wraps the ring every band).
  index_t band_rows() const {
    static const char* env = std::getenv("TAIHU_BWDD_BAND_ROWS");
    if (env != nullptr && *env != '\0') return std::max(1, std::atoi(env));
    constexpr index_t kRingBytes = 320 * 1024;  // of Zen 3's 512 KiB L2
    const index_t row_bytes = rows_ * d_.out_w() * static_cast<index_t>(sizeof(float));
    return std::max<index_t>(1, kRingBytes / row_bytes - kept_rows());
  }
  index_t kept_rows() const { return (d_.kh - 1) * d_.dil_h / d_.stride_h; }

  void backward_data_banded(const float* dy, const float* w, float* dx, int nt) {
    if (packed_w_.size() != static_cast<std::size_t>(d_.groups)) {
      packed_w_.clear();
      for (index_t g = 0; g < d_.groups; ++g)
        packed_w_.emplace_back(Layout::row_major, Trans::yes, rows_, kg_, w + g * kg_ * rows_, rows_);
    } else {
      for (index_t g = 0; g < d_.groups; ++g)
        packed_w_[static_cast<std::size_t>(g)].repack(w + g * kg_ * rows_);
    }
    const index_t band = band_rows(), ring = band + kept_rows();
    const std::size_t per = static_cast<std::size_t>(rows_ * ring * d_.out_w() + 16) & ~std::size_t{15};
    if (rings_.size() < per * static_cast<std::size_t>(nt)) rings_ = arch::AlignedBuffer<float>(per * nt);
    const index_t items = d_.n * d_.groups;
    const bool by_items = items >= nt;
    ops::run_team(nt, [&] {
      const int t = omp_get_thread_num(), team = omp_get_num_threads();
      float* buf = rings_.data() + per * static_cast<std::size_t>(t);
      index_t b, e;
      split_range(by_items ? items : d_.h, t, team, b, e);
      for (index_t i = by_items ? b : 0; i < (by_items ? e : items); ++i) {
        const index_t n = i / d_.groups, g = i % d_.groups;
        backward_data_rows(dy + (n * d_.k + g * kg_) * plane_, packed_w_[static_cast<std::size_t>(g)],
                           dx + (n * d_.c + g * cg_) * d_.h * d_.w, buf, band, ring,
                           by_items ? 0 : b, by_items ? d_.h : e);
      }
    });
  }

  // Input rows [iy_begin, iy_end) of one image and group: zeroed, then filled band by band.
  void backward_data_rows(const float* dyg, const gemm::PackedA<float>& wt, float* dxg, float* buf,
                          index_t band, index_t ring, index_t iy_begin, index_t iy_end) {
    const index_t oh = d_.out_h(), ow = d_.out_w(), sh = d_.stride_h, ld = ring * ow;
    for (index_t ci = 0; ci < cg_; ++ci)
      std::memset(dxg + (ci * d_.h + iy_begin) * d_.w, 0, sizeof(float) * (iy_end - iy_begin) * d_.w);
    // Output rows that input rows [a, b) read: t = iy + pad - r * dil in [0, oh * sh).
    const index_t first =
        std::max<index_t>(0, -floor_div(-(iy_begin + d_.pad_h - (d_.kh - 1) * d_.dil_h), sh));
    const index_t last = std::min<index_t>(oh, floor_div(iy_end - 1 + d_.pad_h, sh) + 1);
    index_t done = iy_begin;
    for (index_t o0 = first; o0 < last;) {
      const index_t o1 = std::min(last, o0 + band);
      for (index_t o = o0; o < o1;) {  // the band's rows in the ring, split where it wraps
        const index_t slot = o % ring, count = std::min(o1 - o, ring - slot);
        gemm::gemm_packed(Layout::row_major, wt, Trans::no, count * ow, 1.0f, dyg + o * ow, plane_, 0.0f,
                          buf + slot * ow, ld);
        o += count;
      }
      o0 = o1;
      // Input rows whose last output row (r = 0) is now in the ring.
      const index_t upto = o1 == last ? iy_end : std::clamp<index_t>(o1 * sh - d_.pad_h, done, iy_end);
      col2im_strided(d_, buf, ld, ring, dxg, 0, cg_, done, upto);
      done = upto;
    }
  }

  ConvDesc d_;
  index_t kg_, cg_, rows_, plane_;
  std::vector<gemm::PackedA<float>> packed_w_;
  arch::AlignedBuffer<float> rings_;
  arch::AlignedBuffer<float> cols_;
  std::size_t col_stride_ = 0;
};

}  // namespace

bool explicit_gemm_supports(const ConvDesc&, ConvDirection) { return true; }
std::unique_ptr<ConvAlgorithm> make_explicit_gemm(const ConvDesc& d) {
  return std::make_unique<ExplicitGemm>(d);
}

}  // namespace taihu::dnn::conv
