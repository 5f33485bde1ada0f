// taihu::dnn tensors: a shape + stride descriptor (TensorDesc) with the checks every
// operator runs on its arguments, and an owning, 64-byte aligned float Tensor.
// Contract: dims and strides are in elements, row-major dense by default (NCHW for
// 4-D); every check throws taihu::Error naming the tensor, the dimension and both
// values, e.g. "conv forward: x dim 1 (C) is 3, expected 64".
#pragma once
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "taihu/arch/aligned_buffer.hpp"

namespace taihu::dnn {

using index_t = std::int64_t;

class TensorDesc {
 public:
  TensorDesc() = default;
  // Dense row-major strides. Throws taihu::Error for a negative dimension.
  TensorDesc(std::vector<index_t> dims);  // NOLINT(google-explicit-constructor)
  TensorDesc(std::initializer_list<index_t> dims) : TensorDesc(std::vector<index_t>(dims)) {}
  // Explicit strides (same rank as dims, each >= 0). Throws taihu::Error otherwise.
  TensorDesc(std::vector<index_t> dims, std::vector<index_t> strides);

  int rank() const { return static_cast<int>(dims_.size()); }
  index_t dim(int i) const;     // throws for i out of range
  index_t stride(int i) const;  // throws for i out of range
  const std::vector<index_t>& dims() const { return dims_; }
  const std::vector<index_t>& strides() const { return strides_; }
  index_t elements() const;     // product of dims
  index_t span() const;         // 1 + largest offset reached (0 when empty)
  bool is_dense() const;        // strides equal the row-major dense strides
  index_t offset(std::initializer_list<index_t> index) const;  // no bounds check

  // "[1, 64, 56, 56]" (strides appended when not dense).
  std::string str() const;

  // Throws taihu::Error "<what>: <tensor> has rank R, expected E" or
  // "<what>: <tensor> dim i (<axis name>) is a, expected b" on the first mismatch.
  // axis_names may be empty or give one name per dim, e.g. "NCHW".
  void expect_dims(const std::string& what, const std::string& tensor,
                   const std::vector<index_t>& expected, const std::string& axis_names = "") const;

 private:
  std::vector<index_t> dims_;
  std::vector<index_t> strides_;
};

// Owning float tensor (dense, 64-byte aligned, zero-initialised).
class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(TensorDesc desc);
  const TensorDesc& desc() const { return desc_; }
  index_t elements() const { return desc_.elements(); }
  float* data() { return buf_.data(); }
  const float* data() const { return buf_.data(); }

 private:
  TensorDesc desc_;
  arch::AlignedBuffer<float> buf_;
};

}  // namespace taihu::dnn
