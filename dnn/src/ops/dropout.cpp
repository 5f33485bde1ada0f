// Dropout (dropout.hpp) on a counter-based hash: the mask bit of element i depends only
// on (seed, stream, i), so the result is the same whatever the thread split or ISA.
#include "taihu/dnn/dropout.hpp"

#include <cmath>
#include <string>
#include <type_traits>

#include "ops/check.hpp"
#include "ops/float_kernels.hpp"
#include "ops/kernels.hpp"
#include "core/parallel.hpp"

namespace taihu::dnn {
namespace {

constexpr index_t kGrain = 16384;

std::uint64_t splitmix64(std::uint64_t z) {
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

struct StreamKey {
  std::uint32_t k0, k1, threshold;
};

StreamKey key_of(const DropoutParams& p) {
  const std::uint64_t key = splitmix64(p.seed ^ splitmix64(p.stream));
  const double t = std::ldexp(p.ratio, 32);
  const std::uint32_t threshold =
      t >= 4294967295.0 ? 0xffffffffU : static_cast<std::uint32_t>(std::llround(t));
  return {static_cast<std::uint32_t>(key), static_cast<std::uint32_t>(key >> 32), threshold};
}

}  // namespace

void DropoutParams::validate(const char* what) const {
  if (!(ratio >= 0.0 && ratio < 1.0))
    ops::fail(what, "ratio is " + std::to_string(ratio) + ", expected 0 <= ratio < 1");
}

template <class T>
void dropout_forward_training(const DropoutParams& p, index_t count, const T* x, T* y,
                              std::uint8_t* mask) {
  constexpr const char* what = "dropout_forward_training";
  p.validate(what);
  ops::check_pointers(what, count, {{"x", x}, {"y", y}});
  const StreamKey k = key_of(p);
  const T scale = p.scale_train ? static_cast<T>(1.0 / (1.0 - p.ratio)) : T(1);
  const auto kernel = ops::kernel_for<T>(&ops::FloatKernels::dropout, &ops::k_dropout<double>);
  ops::parallel_for(count, kGrain, [&](index_t b, index_t e) {
    kernel(e - b, static_cast<std::uint64_t>(b), k.k0, k.k1, k.threshold, scale, x + b, y + b,
           mask ? mask + b : nullptr);
  });
}

template <class T>
void dropout_backward(const DropoutParams& p, index_t count, const std::uint8_t* mask, const T* dy,
                      T* dx) {
  constexpr const char* what = "dropout_backward";
  p.validate(what);
  ops::check_pointers(what, count, {{"mask", mask}, {"dy", dy}, {"dx", dx}});
  const T scale = p.scale_train ? static_cast<T>(1.0 / (1.0 - p.ratio)) : T(1);
  const auto kernel =
      ops::kernel_for<T>(&ops::FloatKernels::masked_scale, &ops::k_masked_scale<double>);
  ops::parallel_for(count, kGrain,
                    [&](index_t b, index_t e) { kernel(e - b, mask + b, scale, dy + b, dx + b); });
}

template <class T>
void dropout_forward_inference(const DropoutParams& p, index_t count, const T* x, T* y) {
  constexpr const char* what = "dropout_forward_inference";
  p.validate(what);
  ops::check_pointers(what, count, {{"x", x}, {"y", y}});
  const T scale = p.scale_train ? T(1) : static_cast<T>(1.0 - p.ratio);
  if (scale == T(1) && x == y) return;
  const auto kernel = ops::kernel_for<T>(&ops::FloatKernels::affine, &ops::k_affine<double>);
  ops::parallel_for(count, kGrain,
                    [&](index_t b, index_t e) { kernel(e - b, x + b, scale, T(0), y + b); });
}

void dropout_mask(const DropoutParams& p, index_t count, std::uint8_t* mask) {
  constexpr const char* what = "dropout_mask";
  p.validate(what);
  ops::check_pointers(what, count, {{"mask", mask}});
  const StreamKey k = key_of(p);
  ops::parallel_for(count, kGrain, [&](index_t b, index_t e) {
    for (index_t i = b; i < e; ++i)
      mask[i] = ops::dropout_bits(k.k0, k.k1, static_cast<std::uint64_t>(i)) >= k.threshold ? 1 : 0;
  });
}

template void dropout_forward_training<float>(const DropoutParams&, index_t, const float*, float*,
                                              std::uint8_t*);
template void dropout_forward_training<double>(const DropoutParams&, index_t, const double*,
                                               double*, std::uint8_t*);
template void dropout_backward<float>(const DropoutParams&, index_t, const std::uint8_t*,
                                      const float*, float*);
template void dropout_backward<double>(const DropoutParams&, index_t, const std::uint8_t*,
                                       const double*, double*);
template void dropout_forward_inference<float>(const DropoutParams&, index_t, const float*, float*);
template void dropout_forward_inference<double>(const DropoutParams&, index_t, const double*,
                                                double*);

}  // namespace taihu::dnn
