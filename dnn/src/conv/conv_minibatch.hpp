// The minibatch algorithm (list entry "minibatch"; formerly caffe_port's BatchConv): a
// whole minibatch per call (forward, backward-data, backward-weights), built for the
// small images of Caffe's classic nets (LeNet, CIFAR-10 quick), where per-image GEMMs
// are small:
//   - the weights are packed once per call (taihu::gemm::PackedA, W for forward and
//     W^T for backward-data; WeightsHint::unchanged skips it) into storage the object
//     keeps, and reused by every image's GEMM;
//   - images run in parallel, one per thread at a time (each GEMM single-threaded),
//     instead of threading each small GEMM; forward and backward-data hand images
//     out dynamically (a thread that loses its core does not hold the other up);
//   - backward-weights gathers several images' im2col columns and output gradients
//     side by side so one GEMM has a deep reduction (>= 256), each thread into its own
//     partial gradient, summed in thread order (deterministic for a thread count);
//     backward-data multiplies the same chunks of dy at once, then col2im per image;
//   - the bias is added to each image's output while it is in cache; its gradient is
//     dnn's bias_gradient (conv_algorithm.hpp), the same sums as every other entry, so
//     the result does not depend on which algorithm won (the implicit backward-weights
//     sums each image's planes just before its kernel reads them, by the same
//     bias_plane_sums);
//   - with few weight columns (C*kh*kw <= 128, first layers) backward-weights runs a
//     register-tiled AVX2 kernel (minibatch_kernels.hpp) instead of the GEMM;
//   - for stride 1, no padding or dilation, one group and an output width that is a
//     multiple of 8 (LeNet's convolutions), forward (4 channels x 3 pixel vectors in
//     registers over all taps) and backward-weights read the input in place
//     (no im2col) in an AVX2 kernel with the reduction over a block of images in
//     registers (with 8-pixel output rows: blocks of 12 images packed so each tap reads
//     one evenly strided stream), each thread its own images and partial gradient,
//     added in thread order; with 8-pixel output rows backward-data's col2im sums each input row in
//     registers (kernels::col2im_w8_avx2) instead of adding every tap into memory;
//   - with TAIHU_ISA at avx512 (the CPU's level by default) the small and implicit
//     backward-weights run their AVX-512 forms (16 lanes = two 8-pixel segments); the
//     forward and packed backward-weights forms exist but measured slower than AVX2, so
//     they run only with TAIHU_MINIBATCH_AVX512_ALL=1; col2im_w8 is AVX2 only.
// Layouts and semantics are ConvAlgorithm's (NCHW, OIHW, groups, stride, pad,
// dilation). Not safe to call one object from several threads at once.
#pragma once
#include <cstdint>
#include <vector>

#include "taihu/arch/aligned_buffer.hpp"
#include "taihu/gemm/packed.hpp"
#include "conv_algorithm.hpp"

namespace taihu::dnn::conv {

class MinibatchConv final : public ConvAlgorithm {
 public:
  explicit MinibatchConv(const ConvDesc& d);

  // y = conv(x, w) + bias (bias may be null); y is overwritten.
  void forward(const float* x, const float* w, const float* bias, float* y, WeightsHint hint) override;
  // dx = conv^T(dy, w); dx is overwritten.
  void backward_data(const float* dy, const float* w, float* dx, WeightsHint hint) override;
  // dw (+)= dL/dw, dbias (+)= bias_gradient (dbias may be null).
  void backward_weights(const float* x, const float* dy, float* dw, float* dbias, bool accumulate) override;

 private:
  // Columns of image `x_group` (one group) into col[row * ld + p], p < plane_.
  void im2col(const float* x_group, float* col, index_t ld) const;
  // Adds col[row * ld + p] back into the image gradient dx_group (pre-zeroed).
  void col2im(const float* col, index_t ld, float* dx_group) const;
  template <int OW>
  void im2col_rows(const float* x_group, float* col, index_t ld) const;
  template <int OW>
  void col2im_rows(const float* col, index_t ld, float* dx_group) const;
  bool identity_columns() const;
  void backward_weights_implicit(const float* x, const float* dy, float* dw, float* dbias, bool accumulate);  // 1x1, stride 1, no pad: the input is its own col
  // Backward-data of fewer images than threads (LeNet conv2 at batch 1 on 2 threads)
  // with col2im_w8: the input channels are split among the threads, each multiplying
  // the rows of W_g^T that belong to its channels (packed on their own) and folding
  // its columns back into its channels of dx; no barrier, no shared output.
  void backward_data_channel_split(const float* dy, const float* w, float* dx, WeightsHint hint, int threads);
  // Per-thread scratch for `threads` threads (thread t at + t * scratch_stride_).
  float* scratch(int threads, std::size_t per_thread);

  ConvDesc d_;
  index_t kg_, cg_, rows_, plane_;
  static constexpr index_t kSmallRows = 128;
  int chunk_;  // images per backward GEMM
  bool small_kernel_ = false;  // rows_ <= kSmallRows on AVX2: minibatch_kernels_avx2.cpp
  bool avx512_ = false;  // AVX-512 small and implicit backward-weights (minibatch_kernels_avx512.cpp)
  bool implicit_avx512_ = false;  // the AVX-512 implicit backward-weights (not on AMD unless avx512_all_)
  bool avx512_all_ = false;  // also its forward and packed backward-weights (TAIHU_MINIBATCH_AVX512_ALL=1)
  bool implicit_weights_ = false;  // backward_weights_implicit (AVX2, see above)
  bool col2im_w8_ = false;  // backward-data's col2im by kernels::col2im_w8_avx2
  std::vector<std::int64_t> tap_offset_;  // per weight column: its input offset
  bool packed_weights_ = false;  // implicit backward-weights on packed image blocks
  arch::AlignedBuffer<float> implicit_partials_;  // per thread: a K * rows_ partial of dw, [tap][k]
  std::vector<float> bias_parts_;                 // the implicit path's dy plane sums, [n][k]
  // W_g (forward) / W_g^T (backward-data) per group, packed on the first call and
  // repacked in place after (PackedA::repack: no allocation per call).
  std::vector<gemm::PackedA<float>> packed_w_, packed_wt_;
  std::vector<gemm::PackedA<float>> packed_wt_split_;  // [g * split threads + t]: W_g^T's rows of t's channels
  int split_threads_ = 0;                              // the thread count packed_wt_split_ was made for
  const std::vector<gemm::PackedA<float>>& packed_weights(bool transposed, const float* w, WeightsHint hint);
  arch::AlignedBuffer<float> scratch_;
  std::size_t scratch_stride_ = 0;
  std::vector<float> partial_;  // per-thread dw/dbias partials beyond thread 0
};

}  // namespace taihu::dnn::conv
