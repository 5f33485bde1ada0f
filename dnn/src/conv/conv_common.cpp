// Helpers shared by the convolution algorithms (see conv_algorithm.hpp).
#include <algorithm>
#include <cstring>
#include <vector>

#include "conv_algorithm.hpp"
#include "core/parallel.hpp"
#include "taihu/arch/error.hpp"
#include "taihu/arch/threads.hpp"

namespace taihu::dnn::conv {

void ConvAlgorithm::forward_fused(const float*, const float*, const float*, float*, WeightsHint, const ConvPostOps&) {
  throw Error("taihu: conv: internal error: forward_fused called on an entry that does not fuse post-ops");
}

void apply_post_ops(const ConvPostOps& post, const float* sum, float* y, index_t count) {
  if (!post.any()) return;
  const index_t blocks = (count + 4095) / 4096;
  ops::parallel_for_static(count > 65536 ? arch::threads_for_call() : 1, blocks, [&](index_t block) {
    const index_t b = block * 4096, e = std::min(count, b + 4096);
    for (index_t i = b; i < e; ++i) {
      float v = post.sum ? y[i] + sum[i] : y[i];
      // max(v, 0) the way the fused kernels compute it (a NaN passes through).
      if (post.relu) v = 0.0f > v ? 0.0f : v;
      y[i] = v;
    }
  });
}

void add_bias(const ConvDesc& d, const float* bias, float* y) {
  if (bias == nullptr) return;
  const index_t plane = d.out_h() * d.out_w(), nk = d.n * d.k;
  ops::parallel_for_static(nk * plane > 32768 ? arch::threads_for_call() : 1, nk, [&](index_t i) {
    const float b = bias[i % d.k];
    float* p = y + i * plane;
    for (index_t j = 0; j < plane; ++j) p[j] += b;
  });
}

namespace {
// The sum of one dy plane: 32 independent partial float sums (the loop vectorises and
// hides the add latency), then the tail, then the lanes in order. Every bias gradient
// goes through this, so each (image, channel) sum is the same bits whoever computes it.
float plane_sum(const float* p, index_t plane) {
  float lanes[32] = {};
  index_t j = 0;
  for (; j + 32 <= plane; j += 32)
    for (int l = 0; l < 32; ++l) lanes[l] += p[j + l];
  float part = 0;
  for (; j < plane; ++j) part += p[j];
  for (float v : lanes) part += v;
  return part;
}
}  // namespace

void bias_plane_sums(const ConvDesc& d, const float* dy, index_t n0, index_t n1, float* parts) {
  const index_t plane = d.out_h() * d.out_w();
  for (index_t n = n0; n < n1; ++n)
    for (index_t k = 0; k < d.k; ++k) parts[n * d.k + k] = plane_sum(dy + (n * d.k + k) * plane, plane);
}

void bias_gradient_from_sums(const ConvDesc& d, const float* parts, float* db, bool accumulate) {
  if (db == nullptr) return;
  for (index_t k = 0; k < d.k; ++k) {
    double s = 0.0;
    for (index_t n = 0; n < d.n; ++n) s += parts[n * d.k + k];
    db[k] = accumulate ? db[k] + static_cast<float>(s) : static_cast<float>(s);
  }
}

void bias_gradient(const ConvDesc& d, const float* dy, float* db, bool accumulate) {
  if (db == nullptr) return;
  const index_t plane = d.out_h() * d.out_w();
  const int nt = d.n * d.k * plane > 32768 ? static_cast<int>(std::min<index_t>(arch::threads_for_call(), d.k)) : 1;
  // Each thread a contiguous range of channels, images outer: dy is read in memory
  // order. (Channels outer read one plane per image, a new page each time; with the
  // caches cold that pass cost LeNet conv1 backward-weights at batch 64 a third of its
  // time on Zen 4.) Per channel: image by image into a double, each plane by
  // plane_sum (as bias_plane_sums + bias_gradient_from_sums).
  ops::parallel_for_static(nt, nt, [&](index_t t) {
    const index_t k0 = d.k * t / nt, k1 = d.k * (t + 1) / nt;
    double on_stack[64];  // (no allocation for the common channel counts)
    std::vector<double> on_heap;
    double* sums = on_stack;
    if (k1 - k0 > 64) {
      on_heap.resize(static_cast<std::size_t>(k1 - k0));
      sums = on_heap.data();
    }
    std::fill(sums, sums + (k1 - k0), 0.0);
    for (index_t n = 0; n < d.n; ++n)
      for (index_t k = k0; k < k1; ++k) sums[k - k0] += plane_sum(dy + (n * d.k + k) * plane, plane);
    for (index_t k = k0; k < k1; ++k) {
      const auto s = static_cast<float>(sums[k - k0]);
      db[k] = accumulate ? db[k] + s : s;
    }
  });
}

bool transposed_supported(const ConvDesc& d) {
  return d.stride_h == 1 && d.stride_w == 1 && d.pad_h <= d.dil_h * (d.kh - 1) &&
         d.pad_w <= d.dil_w * (d.kw - 1);
}

ConvDesc transposed_desc(const ConvDesc& d) {
  ConvDesc t = d;
  t.c = d.k;
  t.k = d.c;
  t.h = d.out_h();
  t.w = d.out_w();
  t.pad_h = d.dil_h * (d.kh - 1) - d.pad_h;
  t.pad_w = d.dil_w * (d.kw - 1) - d.pad_w;
  return t;
}

void rotate_weights(const ConvDesc& d, const float* w, float* w_rot) {
  const index_t kg = d.k / d.groups, cg = d.c / d.groups, rs = d.kh * d.kw;
  for (index_t g = 0; g < d.groups; ++g)
    for (index_t ko = 0; ko < kg; ++ko)
      for (index_t ci = 0; ci < cg; ++ci) {
        const float* src = w + ((g * kg + ko) * cg + ci) * rs;
        float* dst = w_rot + ((g * cg + ci) * kg + ko) * rs;
        for (index_t p = 0; p < rs; ++p) dst[rs - 1 - p] = src[p];
      }
}

}  // namespace taihu::dnn::conv

namespace taihu::dnn::conv {

TransposedBackwardData::TransposedBackwardData(const ConvDesc& d, MakeFn make)
    : d_(d), make_(make) {}

void TransposedBackwardData::run(const float* dy, const float* w, float* dx, WeightsHint hint) {
  if (!fwd_) fwd_ = make_(transposed_desc(d_));
  const bool reuse = hint == WeightsHint::unchanged && have_w_;
  if (!reuse) {
    w_rot_.resize(static_cast<std::size_t>(d_.k * (d_.c / d_.groups) * d_.kh * d_.kw));
    rotate_weights(d_, w, w_rot_.data());
    have_w_ = true;
  }
  fwd_->forward(dy, w_rot_.data(), nullptr, dx, reuse ? WeightsHint::unchanged : WeightsHint::changed);
}

}  // namespace taihu::dnn::conv
