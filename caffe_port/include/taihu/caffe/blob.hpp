// taihu::caffe::Blob: Caffe's N-D array of float values (data) and their gradients
// (diff), row-major with the last axis fastest (NCHW for 4-D).
// Contract: storage is 64-byte aligned and zero-initialised when it grows; reshape
// keeps the storage while the new count fits; share_data/share_diff make two blobs
// use the same storage (parameter sharing, in-place views) until one grows.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "taihu/arch/aligned_buffer.hpp"

namespace taihu::caffe {

namespace proto {
class BlobProto;
}

class Blob {
 public:
  Blob() = default;
  explicit Blob(const std::vector<int>& shape) { reshape(shape); }

  // Throws taihu::Error for a negative dimension, more than 32 axes, more than INT_MAX
  // values (Caffe's limit), or storage that cannot be allocated (naming its size).
  void reshape(const std::vector<int>& shape);
  void reshape_like(const Blob& other) { reshape(other.shape()); }

  const std::vector<int>& shape() const { return shape_; }
  int shape(int axis) const { return shape_[static_cast<std::size_t>(canonical_axis(axis))]; }
  int num_axes() const { return static_cast<int>(shape_.size()); }
  std::int64_t count() const { return count_; }
  // Product of dims in [start, end).
  std::int64_t count(int start, int end) const;
  std::int64_t count(int start) const { return count(start, num_axes()); }
  // Maps a negative axis (-1 = last) to its index; throws taihu::Error when out of range.
  int canonical_axis(int axis) const;
  std::string shape_string() const;  // "64 1 28 28 (50176)", as Caffe logs it

  const float* data() const { return data_ ? data_->data() : nullptr; }
  const float* diff() const { return diff_ ? diff_->data() : nullptr; }
  float* mutable_data() { return data_ ? data_->data() : nullptr; }
  float* mutable_diff() { return diff_ ? diff_->data() : nullptr; }

  void share_data(const Blob& other);
  void share_diff(const Blob& other);
  bool shares_data_with(const Blob& other) const { return data_ == other.data_; }

  void set_data(float value);
  void set_diff(float value);
  double sumsq_diff() const;
  double asum_data() const;

  // Caffe's BlobProto: shape + data (+ diff when write_diff).
  void to_proto(proto::BlobProto* out, bool write_diff = false) const;
  // Reads data (and diff when present). With reshape=false the proto's shape must
  // equal this blob's (legacy 4-D num/channels/height/width accepted); throws
  // taihu::Error "<what>: shape ... does not match ..." otherwise, or when the
  // number of values does not match the shape (a truncated or corrupt file).
  void from_proto(const proto::BlobProto& in, bool reshape, const std::string& what = "blob");

 private:
  struct Storage {
    explicit Storage(std::size_t n);
    float* data() { return buf.data(); }
    std::size_t capacity() const { return buf.size(); }
    arch::AlignedBuffer<float> buf;
  };
  std::vector<int> shape_;
  std::int64_t count_ = 0;
  std::shared_ptr<Storage> data_, diff_;
};

// A dimension from a proto (int64/uint32 fields) as a blob's int; throws taihu::Error
// "<what> = D does not fit a blob dimension" when negative or above INT_MAX.
int blob_dim(std::int64_t d, const std::string& what);

// Shape of a BlobProto (its `shape` field, or the legacy 4-D fields).
std::vector<int> shape_of(const proto::BlobProto& proto);

}  // namespace taihu::caffe
