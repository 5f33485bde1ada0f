// Portable instantiation of the Winograd tile transforms: V is 8 plain floats (the
// compiler vectorises the lane loops for the baseline ISA).
#include "winograd_kernels.hpp"

namespace taihu::dnn::conv {

namespace {
struct V8 {
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
};
}  // namespace

const WinogradKernelSet winograd_kernels_generic = make_winograd_kernel_set<V8>(&wino_scatter_row_scalar, &wino_gather_row_scalar);

}  // namespace taihu::dnn::conv
