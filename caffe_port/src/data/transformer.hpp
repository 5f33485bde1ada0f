// Caffe's DataTransformer for uint8 or float records: crop (random in TRAIN, centred
// in TEST), mirror (random, TRAIN only), subtract mean_file or mean_value, multiply
// by scale; output CHW floats. Private to taihu::caffe.
#pragma once
#include <cstdint>
#include <vector>

#include "taihu/caffe/proto.hpp"
#include "taihu/caffe/rng.hpp"

namespace taihu::caffe {

struct Record {
  int channels = 0, height = 0, width = 0;
  std::vector<std::uint8_t> bytes;  // or
  std::vector<float> floats;        // when the Datum holds float_data
  int label = 0;
};

class Transformer {
 public:
  // Loads mean_file (a BlobProto .binaryproto) when given. Throws taihu::Error for
  // inconsistent settings (both mean_file and mean_value, ...).
  Transformer(const proto::TransformationParameter& param, proto::Phase phase);

  // The output shape [C][H'][W'] for records of channels x height x width.
  std::vector<int> output_shape(int channels, int height, int width) const;
  // Writes the transformed record to out (output_shape's size), drawing from rng.
  void apply(const Record& r, Rng& rng, float* out) const;

 private:
  proto::TransformationParameter param_;
  proto::Phase phase_;
  std::vector<float> mean_;  // mean_file values, [C][H][W]
  int mean_c_ = 0, mean_h_ = 0, mean_w_ = 0;
};

}  // namespace taihu::caffe
