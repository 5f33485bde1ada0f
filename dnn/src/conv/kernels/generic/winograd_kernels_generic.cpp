// Portable instantiation of the Winograd tile transforms: V is 8 plain floats (the
// compiler vectorises the lane loops for the baseline ISA).
#include "conv/winograd_kernels.hpp"

namespace taihu::dnn::conv {

namespace {
struct V8 {
  static constexpr int lanes = 8;
  float v[8];
  static V8 load(const float* p) {
    V8 r;
    for (int l = 0; l < 8; ++l) r.v[l] = p[l];
    return r;
  }
  void store(float* p) const {
    for (int l = 0; l < 8; ++l) p[l] = v[l];
  }
  friend V8 operator+(const V8& a, const V8& b) {
    V8 r;
    for (int l = 0; l < 8; ++l) r.v[l] = a.v[l] + b.v[l];
    return r;
  }
  friend V8 operator-(const V8& a, const V8& b) {
    V8 r;
    for (int l = 0; l < 8; ++l) r.v[l] = a.v[l] - b.v[l];
    return r;
  }
  friend V8 operator*(const V8& a, float s) {
    V8 r;
    for (int l = 0; l < 8; ++l) r.v[l] = a.v[l] * s;
    return r;
  }
  static V8 zero() { return bcast(0.0f); }
  static V8 bcast(float s) {
    V8 r;
    for (int l = 0; l < 8; ++l) r.v[l] = s;
    return r;
  }
  friend V8 fma(const V8& a, const V8& b, const V8& c) {
    V8 r;
    for (int l = 0; l < 8; ++l) r.v[l] = a.v[l] * b.v[l] + c.v[l];
    return r;
  }
};
}  // namespace

const WinogradKernelSet winograd_kernels_generic = make_winograd_kernel_set<V8, 4, 4, 2>(&wino_scatter_row_scalar<8>,
                                                                                     &wino_gather_row_scalar<8>);

}  // namespace taihu::dnn::conv
