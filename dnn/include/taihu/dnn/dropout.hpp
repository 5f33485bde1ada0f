// Dropout with Caffe's semantics and a seeded, counter-based random stream: element i
// is kept when hash(seed, stream, i) >= ratio * 2^32, so the same (seed, stream) gives
// the same mask on any thread count or ISA. Use a new `stream` per call (e.g. the
// iteration number) to get a fresh mask.
//   training, scale_train = true (default): y = x * mask / (1 - ratio)
//   training, scale_train = false:          y = x * mask
//   inference: y = x (scale_train) or y = x * (1 - ratio)
// ratio must lie in [0, 1). x == y and dy == dx are allowed.
#pragma once
#include <cstdint>

#include "taihu/dnn/ops_common.hpp"

namespace taihu::dnn {

struct DropoutParams {
  double ratio = 0.5;
  bool scale_train = true;
  std::uint64_t seed = 0;
  std::uint64_t stream = 0;
  void validate(const char* what) const;  // throws taihu::Error naming `ratio`
};

// mask [count]: 1 kept, 0 dropped (may be null when no backward follows).
template <class T>
void dropout_forward_training(const DropoutParams& p, index_t count, const T* x, T* y,
                              std::uint8_t* mask);

// dx = dy * mask (* 1 / (1 - ratio) when scale_train).
template <class T>
void dropout_backward(const DropoutParams& p, index_t count, const std::uint8_t* mask, const T* dy,
                      T* dx);

template <class T>
void dropout_forward_inference(const DropoutParams& p, index_t count, const T* x, T* y);

// The mask alone (what training forward records), for tests and GPU twins.
void dropout_mask(const DropoutParams& p, index_t count, std::uint8_t* mask);

}  // namespace taihu::dnn
