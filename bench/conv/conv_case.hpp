// Test data for the dnn convolution benchmarks: uniform [-1, 1) buffers, reproducible
// from a seed, and one problem's tensors (activations in a chosen layout) with a call of
// taihu's convolution on them.
#pragma once
#include <new>
#include <random>
#include <vector>

#include "taihu/dnn/conv.hpp"
#include "taihu/dnn/layout.hpp"

namespace taihu::bench {

// Cache-line aligned storage (as a framework's tensors and oneDNN's memory objects are;
// malloc gives large blocks 16-byte alignment, which splits every row's first line).
template <class T>
struct LineAligned {
  using value_type = T;
  LineAligned() = default;
  template <class U>
  LineAligned(const LineAligned<U>&) {}
  T* allocate(std::size_t n) { return static_cast<T*>(::operator new(n * sizeof(T), std::align_val_t{64})); }
  void deallocate(T* p, std::size_t) { ::operator delete(p, std::align_val_t{64}); }
  template <class U>
  bool operator==(const LineAligned<U>&) const { return true; }
};
using Buffer = std::vector<float, LineAligned<float>>;

inline Buffer random_data(taihu::dnn::index_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  Buffer v(static_cast<std::size_t>(n));
  for (auto& e : v) e = dist(rng);
  return v;
}

// Inputs (x, w, bias b, dy) random, outputs (y, dx, dw, db) zero, sized for `d`, the
// activations in `layout` (NCHW data reordered once, untimed, as oneDNN's anchor
// reorders its inputs into the layouts it picks).
struct ConvCase {
  Buffer x, w, b, dy, y, dx, dw, db;
  explicit ConvCase(const taihu::dnn::ConvDesc& d, taihu::dnn::ConvLayout layout = {})
      : x(in_layout(random_data(d.n * d.c * d.h * d.w, 1), d.n, d.c, d.h, d.w, layout.src)),
        w(random_data(d.k * (d.c / d.groups) * d.kh * d.kw, 2)),
        b(random_data(d.k, 3)),
        dy(in_layout(random_data(d.n * d.k * d.out_h() * d.out_w(), 4), d.n, d.k, d.out_h(), d.out_w(), layout.dst)),
        y(dy.size()), dx(x.size()), dw(w.size()), db(b.size()) {}

  static Buffer in_layout(Buffer v, taihu::dnn::index_t n, taihu::dnn::index_t c, taihu::dnn::index_t h,
                          taihu::dnn::index_t w, taihu::dnn::ActLayout layout) {
    if (layout == taihu::dnn::ActLayout::nchw) return v;
    const taihu::dnn::index_t elements = layout == taihu::dnn::ActLayout::nchw8c
                                             ? taihu::dnn::nchw8c_elements(n, c, h, w)
                                             : taihu::dnn::nchw16c_elements(n, c, h, w);
    Buffer out(static_cast<std::size_t>(elements));
    taihu::dnn::reorder_nchw_to_layout(v.data(), out.data(), layout, n, c, h, w);
    return out;
  }

  // One call in direction `dir`, weights unchanged since the last call (a training step
  // transforms or packs them once).
  void run(taihu::dnn::Convolution& conv, taihu::dnn::ConvDirection dir) {
    using taihu::dnn::ConvDirection;
    if (dir == ConvDirection::forward)
      conv.forward(x.data(), w.data(), b.data(), y.data(), taihu::dnn::WeightsHint::unchanged);
    else if (dir == ConvDirection::backward_data)
      conv.backward_data(dy.data(), w.data(), dx.data(), taihu::dnn::WeightsHint::unchanged);
    else
      conv.backward_weights(x.data(), dy.data(), dw.data(), db.data(), false);
  }
};

}  // namespace taihu::bench
