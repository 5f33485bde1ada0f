// Blob storage, reshaping, sharing and BlobProto conversion. See taihu/caffe/blob.hpp.
#include "taihu/caffe/blob.hpp"

#include <unistd.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <new>
#include <sstream>

#include "taihu/arch/error.hpp"
#include "taihu/caffe/caffe.pb.h"

namespace taihu::caffe {

namespace {

std::string join(const std::vector<int>& s) {
  std::string r;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (i) r += ' ';
    r += std::to_string(s[i]);
  }
  return r;
}

arch::AlignedBuffer<float> allocate(std::size_t n) {
  const std::size_t bytes = n * sizeof(float);
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  const double ram = pages > 0 && page > 0 ? static_cast<double>(pages) * static_cast<double>(page) : 0;
  // data and diff: two buffers of this size.
  if (ram > 0 && 2.0 * static_cast<double>(bytes) > ram) {
    throw Error("blob of " + std::to_string(n) + " values needs " + std::to_string(2 * bytes >> 20) +
                " MiB (data and diff), more than this machine's " + std::to_string(static_cast<long long>(ram) >> 20) + " MiB");
  }
  try {
    return arch::AlignedBuffer<float>(n == 0 ? 1 : n);
  } catch (const std::bad_alloc&) {
    throw Error("blob of " + std::to_string(n) + " values: cannot allocate " + std::to_string(bytes >> 20) + " MiB");
  }
}

}  // namespace

int blob_dim(std::int64_t d, const std::string& what) {
  if (d < 0 || d > std::numeric_limits<int>::max()) {
    throw Error(what + " = " + std::to_string(d) + " does not fit a blob dimension (0 to " +
                std::to_string(std::numeric_limits<int>::max()) + ")");
  }
  return static_cast<int>(d);
}

Blob::Storage::Storage(std::size_t n) : buf(allocate(n)) {
  std::memset(buf.data(), 0, buf.size() * sizeof(float));
}

void Blob::reshape(const std::vector<int>& shape) {
  if (shape.size() > 32) throw Error("blob: " + std::to_string(shape.size()) + " axes (max 32)");
  std::int64_t count = 1;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] < 0) throw Error("blob: dim " + std::to_string(i) + " is " + std::to_string(shape[i]));
    // Caffe's limit ("blob size exceeds INT_MAX"); it also keeps every count a layer
    // narrows to int exact.
    if (count != 0 && shape[i] > std::numeric_limits<int>::max() / count) {
      throw Error("blob: shape (" + join(shape) + ") has more than " + std::to_string(std::numeric_limits<int>::max()) +
                  " values");
    }
    count *= shape[i];
  }
  shape_ = shape;
  count_ = count;
  const auto need = static_cast<std::size_t>(count);
  if (!data_ || data_->capacity() < need) data_ = std::make_shared<Storage>(need);
  if (!diff_ || diff_->capacity() < need) diff_ = std::make_shared<Storage>(need);
}

std::int64_t Blob::count(int start, int end) const {
  std::int64_t c = 1;
  for (int i = start; i < end; ++i) c *= shape_[static_cast<std::size_t>(i)];
  return c;
}

int Blob::canonical_axis(int axis) const {
  const int n = num_axes();
  if (axis < -n || axis >= n) {
    throw Error("blob: axis " + std::to_string(axis) + " out of range for a blob of shape " +
                shape_string());
  }
  return axis < 0 ? axis + n : axis;
}

std::string Blob::shape_string() const {
  std::ostringstream s;
  for (int d : shape_) s << d << " ";
  s << "(" << count_ << ")";
  return s.str();
}

void Blob::share_data(const Blob& other) {
  if (other.count_ != count_) throw Error("blob: share_data between counts " + std::to_string(count_) + " and " + std::to_string(other.count_));
  data_ = other.data_;
}

void Blob::share_diff(const Blob& other) {
  if (other.count_ != count_) throw Error("blob: share_diff between counts " + std::to_string(count_) + " and " + std::to_string(other.count_));
  diff_ = other.diff_;
}

void Blob::set_data(float value) {
  float* d = mutable_data();
  for (std::int64_t i = 0; i < count_; ++i) d[i] = value;
}

void Blob::set_diff(float value) {
  float* d = mutable_diff();
  for (std::int64_t i = 0; i < count_; ++i) d[i] = value;
}

double Blob::sumsq_diff() const {
  double s = 0;
  const float* d = diff();
  for (std::int64_t i = 0; i < count_; ++i) s += static_cast<double>(d[i]) * d[i];
  return s;
}

double Blob::asum_data() const {
  double s = 0;
  const float* d = data();
  for (std::int64_t i = 0; i < count_; ++i) s += std::fabs(static_cast<double>(d[i]));
  return s;
}

void Blob::to_proto(proto::BlobProto* out, bool write_diff) const {
  out->Clear();
  for (int d : shape_) out->mutable_shape()->add_dim(d);
  out->mutable_data()->Resize(static_cast<int>(count_), 0.f);
  std::memcpy(out->mutable_data()->mutable_data(), data(), static_cast<std::size_t>(count_) * sizeof(float));
  if (write_diff) {
    out->mutable_diff()->Resize(static_cast<int>(count_), 0.f);
    std::memcpy(out->mutable_diff()->mutable_data(), diff(), static_cast<std::size_t>(count_) * sizeof(float));
  }
}

std::vector<int> shape_of(const proto::BlobProto& in) {
  std::vector<int> shape;
  if (in.has_shape()) {
    for (auto d : in.shape().dim()) shape.push_back(blob_dim(d, "BlobProto dim " + std::to_string(shape.size())));
  } else if (in.has_num() || in.has_channels() || in.has_height() || in.has_width()) {
    shape = {in.num(), in.channels(), in.height(), in.width()};
  }
  return shape;
}

void Blob::from_proto(const proto::BlobProto& in, bool reshape_to, const std::string& what) {
  const std::vector<int> shape = shape_of(in);
  if (reshape_to) {
    reshape(shape);
  } else if (shape != shape_) {
    // Legacy 4-D protos of lower-rank blobs: compare counts with leading 1s stripped.
    std::vector<int> a = shape, b = shape_;
    while (a.size() > b.size() && !a.empty() && a.front() == 1) a.erase(a.begin());
    while (b.size() > a.size() && !b.empty() && b.front() == 1) b.erase(b.begin());
    if (a != b) throw Error(what + ": shape (" + join(shape) + ") does not match (" + join(shape_) + ")");
  }
  const auto n = static_cast<std::size_t>(count_);
  float* d = mutable_data();
  if (in.double_data_size() > 0) {
    if (static_cast<std::size_t>(in.double_data_size()) != n) throw Error(what + ": " + std::to_string(in.double_data_size()) + " values for shape (" + join(shape_) + ") (corrupt or truncated)");
    for (std::size_t i = 0; i < n; ++i) d[i] = static_cast<float>(in.double_data(static_cast<int>(i)));
  } else {
    if (static_cast<std::size_t>(in.data_size()) != n) throw Error(what + ": " + std::to_string(in.data_size()) + " values for shape (" + join(shape_) + ") (corrupt or truncated)");
    std::memcpy(d, in.data().data(), n * sizeof(float));
  }
  if (static_cast<std::size_t>(in.diff_size()) == n && n > 0) {
    std::memcpy(mutable_diff(), in.diff().data(), n * sizeof(float));
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (!std::isfinite(d[i])) throw Error(what + ": value " + std::to_string(i) + " is not finite (corrupt file?)");
  }
}

}  // namespace taihu::caffe
