// Concat / Slice / Split (concat.hpp): block copies per (outer, input), in parallel.
#include "taihu/dnn/concat.hpp"

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "ops/check.hpp"
#include "ops/kernels.hpp"
#include "core/parallel.hpp"

namespace taihu::dnn {
namespace {

constexpr index_t kGrain = 16384;

// Offsets of each input's channels inside the concatenated axis; checks the lists.
std::vector<index_t> channel_offsets(const char* what, index_t outer, index_t inner,
                                     std::span<const index_t> channels, std::size_t pointers) {
  ops::check_non_negative(what, "outer", outer);
  ops::check_non_negative(what, "inner", inner);
  if (channels.empty()) ops::fail(what, "channels is empty, expected one entry per input");
  if (channels.size() != pointers)
    ops::fail(what, "channels has " + std::to_string(channels.size()) + " entries but there are " +
                        std::to_string(pointers) + " inputs");
  std::vector<index_t> offsets(channels.size() + 1, 0);
  for (std::size_t i = 0; i < channels.size(); ++i) {
    if (channels[i] < 0)
      ops::fail(what, "channels[" + std::to_string(i) + "] is " + std::to_string(channels[i]) +
                          ", expected >= 0");
    offsets[i + 1] = offsets[i] + channels[i];
  }
  return offsets;
}

// Calls copy(o, i, len, at) for every (outer index o, input i) block, in parallel:
// input i's block of row o holds len elements and sits at element `at` of the
// concatenated tensor. Forward copies into the concatenation, backward out of it.
template <class Copy>
void for_each_block(index_t outer, index_t inner, std::span<const index_t> channels,
                    const std::vector<index_t>& off, Copy&& copy) {
  const auto n_in = static_cast<index_t>(channels.size());
  const index_t total = off.back();
  ops::parallel_tasks(outer * n_in, std::max<index_t>(1, kGrain / std::max<index_t>(1, total * inner / n_in)),
                      [&](index_t task) {
                        const index_t o = task / n_in;
                        const auto i = static_cast<std::size_t>(task % n_in);
                        const index_t len = channels[i] * inner;
                        if (len > 0) copy(o, i, len, (o * total + off[i]) * inner);
                      });
}

}  // namespace

template <class T>
void concat_forward(index_t outer, index_t inner, std::span<const index_t> channels,
                    std::span<const Scalar<T>* const> inputs, T* y) {
  constexpr const char* what = "concat_forward";
  const auto off = channel_offsets(what, outer, inner, channels, inputs.size());
  const index_t total = off.back();
  if (outer * total * inner == 0) return;
  ops::check_pointer(what, "y", y);
  for (std::size_t i = 0; i < inputs.size(); ++i)
    if (channels[i] > 0 && inputs[i] == nullptr)
      ops::fail(what, "inputs[" + std::to_string(i) + "] is null");
  for_each_block(outer, inner, channels, off, [&](index_t o, std::size_t i, index_t len, index_t at) {
    std::memcpy(y + at, inputs[i] + o * len, static_cast<std::size_t>(len) * sizeof(T));
  });
}

template <class T>
void concat_backward(index_t outer, index_t inner, std::span<const index_t> channels, const T* dy,
                     std::span<Scalar<T>* const> dx) {
  constexpr const char* what = "concat_backward";
  const auto off = channel_offsets(what, outer, inner, channels, dx.size());
  const index_t total = off.back();
  if (outer * total * inner == 0) return;
  ops::check_pointer(what, "dy", dy);
  for_each_block(outer, inner, channels, off, [&](index_t o, std::size_t i, index_t len, index_t at) {
    if (dx[i] != nullptr) std::memcpy(dx[i] + o * len, dy + at, static_cast<std::size_t>(len) * sizeof(T));
  });
}

template <class T>
void split_backward(index_t count, std::span<const Scalar<T>* const> dys, T* dx) {
  constexpr const char* what = "split_backward";
  ops::check_non_negative(what, "count", count);
  if (dys.empty()) ops::fail(what, "dys is empty, expected >= 1 top diff");
  if (count == 0) return;
  ops::check_pointer(what, "dx", dx);
  for (std::size_t i = 0; i < dys.size(); ++i)
    if (dys[i] == nullptr) ops::fail(what, "dys[" + std::to_string(i) + "] is null");
  ops::parallel_for(count, kGrain, [&](index_t b, index_t e) {
    ops::k_axpby<T>(e - b, T(1), dys[0] + b, T(0), dx + b);
    for (std::size_t i = 1; i < dys.size(); ++i)
      ops::k_axpby<T>(e - b, T(1), dys[i] + b, T(1), dx + b);
  });
}

template void concat_forward<float>(index_t, index_t, std::span<const index_t>,
                                    std::span<const float* const>, float*);
template void concat_forward<double>(index_t, index_t, std::span<const index_t>,
                                     std::span<const double* const>, double*);
template void concat_backward<float>(index_t, index_t, std::span<const index_t>, const float*,
                                     std::span<float* const>);
template void concat_backward<double>(index_t, index_t, std::span<const index_t>, const double*,
                                      std::span<double* const>);
template void split_backward<float>(index_t, std::span<const float* const>, float*);
template void split_backward<double>(index_t, std::span<const double* const>, double*);

}  // namespace taihu::dnn
