// Weight fillers with Caffe's definitions. See taihu/caffe/filler.hpp.
#include "taihu/caffe/filler.hpp"

#include <cmath>

#include "taihu/arch/error.hpp"
#include "taihu/caffe/rng.hpp"

namespace taihu::caffe {
namespace {

float fan(const proto::FillerParameter& f, const Blob& b) {
  const double count = static_cast<double>(b.count());
  const double fan_in = b.num_axes() > 0 && b.shape(0) > 0 ? count / b.shape(0) : count;
  const double fan_out = b.num_axes() > 1 && b.shape(1) > 0 ? count / b.shape(1) : count;
  switch (f.variance_norm()) {
    case proto::FillerParameter::FAN_OUT: return static_cast<float>(fan_out);
    case proto::FillerParameter::AVERAGE: return static_cast<float>((fan_in + fan_out) / 2);
    default: return static_cast<float>(fan_in);
  }
}

}  // namespace

void fill(const proto::FillerParameter& f, Blob* blob) {
  float* d = blob->mutable_data();
  const std::int64_t n = blob->count();
  Rng& rng = process_rng();
  const std::string& type = f.type();
  if (type == "constant") {
    for (std::int64_t i = 0; i < n; ++i) d[i] = f.value();
  } else if (type == "uniform" || type == "xavier") {
    float lo = f.min(), hi = f.max();
    if (type == "xavier") {
      const float scale = std::sqrt(3.f / fan(f, *blob));
      lo = -scale;
      hi = scale;
    }
    if (!(hi >= lo)) throw Error("filler uniform: max " + std::to_string(hi) + " < min " + std::to_string(lo));
    std::uniform_real_distribution<float> u(lo, hi);
    for (std::int64_t i = 0; i < n; ++i) d[i] = u(rng);
  } else if (type == "gaussian" || type == "msra") {
    if (type == "gaussian" && f.sparse() >= 0) throw Error("filler gaussian: sparse is not supported");
    const float mean = type == "msra" ? 0.f : f.mean();
    const float std = type == "msra" ? std::sqrt(2.f / fan(f, *blob)) : f.std();
    if (!(std >= 0)) throw Error("filler " + type + ": std " + std::to_string(std) + " < 0");
    std::normal_distribution<float> g(mean, std);
    for (std::int64_t i = 0; i < n; ++i) d[i] = std > 0 ? g(rng) : mean;
  } else {
    throw Error("filler: unknown type \"" + type + "\" (known: constant, uniform, gaussian, xavier, msra)");
  }
}

}  // namespace taihu::caffe
