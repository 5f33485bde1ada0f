// Caffe's data transformation. See data/transformer.hpp.
#include "data/transformer.hpp"

#include "taihu/arch/error.hpp"
#include "taihu/caffe/blob.hpp"

namespace taihu::caffe {

Transformer::Transformer(const proto::TransformationParameter& param, proto::Phase phase)
    : param_(param), phase_(phase) {
  if (param.has_mean_file() && param.mean_value_size() > 0) {
    throw Error("transform_param: give mean_file or mean_value, not both");
  }
  if (param.has_mean_file()) {
    proto::BlobProto bp;
    read_binary(param.mean_file(), "mean BlobProto (.binaryproto)", &bp);
    Blob mean;
    mean.from_proto(bp, true, param.mean_file());
    const auto& s = mean.shape();
    if (s.size() < 3) throw Error(param.mean_file() + ": mean blob has shape " + mean.shape_string() + ", expected [1] C H W");
    mean_c_ = s[s.size() - 3];
    mean_h_ = s[s.size() - 2];
    mean_w_ = s[s.size() - 1];
    mean_.assign(mean.data(), mean.data() + mean.count());
  }
}

std::vector<int> Transformer::output_shape(int channels, int height, int width) const {
  const int crop = static_cast<int>(param_.crop_size());
  if (crop > 0 && (crop > height || crop > width)) {
    throw Error("transform_param: crop_size " + std::to_string(crop) + " exceeds the image " +
                std::to_string(height) + "x" + std::to_string(width));
  }
  if (!mean_.empty() && (mean_c_ != channels || mean_h_ != height || mean_w_ != width)) {
    throw Error(param_.mean_file() + ": mean is " + std::to_string(mean_c_) + "x" + std::to_string(mean_h_) + "x" +
                std::to_string(mean_w_) + ", the data " + std::to_string(channels) + "x" + std::to_string(height) +
                "x" + std::to_string(width));
  }
  const int mv = param_.mean_value_size();
  if (mv > 1 && mv != channels) {
    throw Error("transform_param: " + std::to_string(mv) + " mean_values for " + std::to_string(channels) + " channels");
  }
  return {channels, crop > 0 ? crop : height, crop > 0 ? crop : width};
}

void Transformer::apply(const Record& r, Rng& rng, float* out) const {
  const int crop = static_cast<int>(param_.crop_size());
  const int oh = crop > 0 ? crop : r.height, ow = crop > 0 ? crop : r.width;
  int h_off = 0, w_off = 0;
  if (crop > 0) {
    if (phase_ == proto::TRAIN) {
      h_off = static_cast<int>(rng() % static_cast<std::uint64_t>(r.height - crop + 1));
      w_off = static_cast<int>(rng() % static_cast<std::uint64_t>(r.width - crop + 1));
    } else {
      h_off = (r.height - crop) / 2;
      w_off = (r.width - crop) / 2;
    }
  }
  const bool mirror = param_.mirror() && phase_ == proto::TRAIN && (rng() & 1) != 0;
  const float scale = param_.scale();
  const bool bytes = !r.bytes.empty();
  for (int c = 0; c < r.channels; ++c) {
    const float mv = param_.mean_value_size() == 0 ? 0.f : param_.mean_value(param_.mean_value_size() == 1 ? 0 : c);
    for (int h = 0; h < oh; ++h) {
      for (int w = 0; w < ow; ++w) {
        const std::size_t src = (static_cast<std::size_t>(c) * static_cast<std::size_t>(r.height) + static_cast<std::size_t>(h + h_off)) *
                                    static_cast<std::size_t>(r.width) + static_cast<std::size_t>(w + w_off);
        float v = bytes ? static_cast<float>(r.bytes[src]) : r.floats[src];
        v -= mean_.empty() ? mv : mean_[src];
        const int ow_idx = mirror ? ow - 1 - w : w;
        out[(static_cast<std::size_t>(c) * static_cast<std::size_t>(oh) + static_cast<std::size_t>(h)) * static_cast<std::size_t>(ow) +
            static_cast<std::size_t>(ow_idx)] = v * scale;
      }
    }
  }
}

}  // namespace taihu::caffe
