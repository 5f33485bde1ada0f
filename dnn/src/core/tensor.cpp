// TensorDesc checks and the owning Tensor (see taihu/dnn/tensor.hpp).
#include "taihu/dnn/tensor.hpp"

#include <cstring>
#include <string>

#include "taihu/arch/error.hpp"

namespace taihu::dnn {

namespace {
std::vector<index_t> dense_strides(const std::vector<index_t>& dims) {
  std::vector<index_t> s(dims.size(), 1);
  for (int i = static_cast<int>(dims.size()) - 2; i >= 0; --i) s[i] = s[i + 1] * dims[i + 1];
  return s;
}
std::string list(const std::vector<index_t>& v) {
  std::string s = "[";
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(v[i]);
  }
  return s + "]";
}
}  // namespace

TensorDesc::TensorDesc(std::vector<index_t> dims) : dims_(std::move(dims)) {
  for (std::size_t i = 0; i < dims_.size(); ++i)
    if (dims_[i] < 0)
      throw Error("taihu: TensorDesc: dim " + std::to_string(i) + " is " + std::to_string(dims_[i]) +
                  ", must be >= 0");
  strides_ = dense_strides(dims_);
}

TensorDesc::TensorDesc(std::vector<index_t> dims, std::vector<index_t> strides)
    : TensorDesc(std::move(dims)) {
  if (strides.size() != dims_.size())
    throw Error("taihu: TensorDesc: " + std::to_string(strides.size()) + " strides for rank " +
                std::to_string(dims_.size()));
  for (std::size_t i = 0; i < strides.size(); ++i)
    if (strides[i] < 0)
      throw Error("taihu: TensorDesc: stride " + std::to_string(i) + " is " +
                  std::to_string(strides[i]) + ", must be >= 0");
  strides_ = std::move(strides);
}

index_t TensorDesc::dim(int i) const {
  if (i < 0 || i >= rank())
    throw Error("taihu: TensorDesc::dim(" + std::to_string(i) + ") out of range for rank " +
                std::to_string(rank()));
  return dims_[i];
}

index_t TensorDesc::stride(int i) const {
  if (i < 0 || i >= rank())
    throw Error("taihu: TensorDesc::stride(" + std::to_string(i) + ") out of range for rank " +
                std::to_string(rank()));
  return strides_[i];
}

index_t TensorDesc::elements() const {
  index_t e = 1;
  for (index_t d : dims_) e *= d;
  return e;
}

index_t TensorDesc::span() const {
  if (elements() == 0) return 0;
  index_t last = 0;
  for (std::size_t i = 0; i < dims_.size(); ++i) last += (dims_[i] - 1) * strides_[i];
  return last + 1;
}

bool TensorDesc::is_dense() const { return strides_ == dense_strides(dims_); }

index_t TensorDesc::offset(std::initializer_list<index_t> index) const {
  index_t off = 0;
  std::size_t i = 0;
  for (index_t v : index) off += v * strides_[i++];
  return off;
}

std::string TensorDesc::str() const {
  return is_dense() ? list(dims_) : list(dims_) + " strides " + list(strides_);
}

void TensorDesc::expect_dims(const std::string& what, const std::string& tensor,
                             const std::vector<index_t>& expected,
                             const std::string& axis_names) const {
  if (dims_.size() != expected.size())
    throw Error("taihu: " + what + ": " + tensor + " has rank " + std::to_string(dims_.size()) +
                " " + list(dims_) + ", expected rank " + std::to_string(expected.size()) + " " +
                list(expected));
  for (std::size_t i = 0; i < dims_.size(); ++i) {
    if (dims_[i] == expected[i]) continue;
    std::string axis = std::to_string(i);
    if (axis_names.size() == dims_.size()) axis += std::string(" (") + axis_names[i] + ")";
    throw Error("taihu: " + what + ": " + tensor + " dim " + axis + " is " +
                std::to_string(dims_[i]) + ", expected " + std::to_string(expected[i]));
  }
}

Tensor::Tensor(TensorDesc desc)
    : desc_(std::move(desc)), buf_(static_cast<std::size_t>(desc_.elements())) {
  if (desc_.elements() > 0) std::memset(buf_.data(), 0, sizeof(float) * desc_.elements());
}

}  // namespace taihu::dnn
