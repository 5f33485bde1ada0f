// Host stand-in for <mma.h> (test_sgemm_cuda_emulated only): wmma m16n16k8 TF32 with
// the documented semantics and none of the hardware's element-to-lane mapping. Every
// lane holds the whole fragment (logical layout); loads run on every lane (so bad
// addresses are caught wherever they are), mma_sync computes and store_matrix_sync
// writes on lane 0 only (the others' copies are never stored). Pointer alignment and
// ldm are checked as wmma requires (32 bytes, multiple of 4 floats).
#pragma once
#include <cstdlib>
#include <cstring>

#include "cuda_runtime.h"

namespace nvcuda::wmma {

struct matrix_a {};
struct matrix_b {};
struct accumulator {};
struct row_major {};
struct col_major {};
namespace precision {
struct tf32 {};
}  // namespace precision
enum layout_t { mem_row_major, mem_col_major };

template <class Use, int M, int N, int K, class T, class Layout = void>
struct fragment;
template <>
struct fragment<matrix_a, 16, 16, 8, precision::tf32, col_major> {
  static constexpr int num_elements = 16 * 8;
  float x[num_elements];  // x[i * 8 + k] = A(i, k)
};
template <>
struct fragment<matrix_b, 16, 16, 8, precision::tf32, row_major> {
  static constexpr int num_elements = 8 * 16;
  float x[num_elements];  // x[k * 16 + j] = B(k, j)
};
template <>
struct fragment<accumulator, 16, 16, 8, float, void> {
  static constexpr int num_elements = 16 * 16;
  float x[num_elements];  // x[i * 16 + j] = C(i, j)
};
using FragA = fragment<matrix_a, 16, 16, 8, precision::tf32, col_major>;
using FragB = fragment<matrix_b, 16, 16, 8, precision::tf32, row_major>;
using FragC = fragment<accumulator, 16, 16, 8, float, void>;

inline void check_operand(const void* p, unsigned ldm) {
  if (reinterpret_cast<std::uintptr_t>(p) % 32 != 0 || ldm % 4 != 0) std::abort();
}
inline bool lane0() { return threadIdx.x % 32 == 0; }

inline void load_matrix_sync(FragA& f, const float* p, unsigned ldm) {
  check_operand(p, ldm);
  for (unsigned i = 0; i < 16; ++i)
    for (unsigned k = 0; k < 8; ++k) f.x[i * 8 + k] = p[i + k * ldm];
}
inline void load_matrix_sync(FragB& f, const float* p, unsigned ldm) {
  check_operand(p, ldm);
  for (unsigned k = 0; k < 8; ++k)
    for (unsigned j = 0; j < 16; ++j) f.x[k * 16 + j] = p[k * ldm + j];
}
inline void fill_fragment(FragC& f, float v) {
  for (float& e : f.x) e = v;
}
inline void mma_sync(FragC& d, const FragA& a, const FragB& b, const FragC& c) {
  if (!lane0()) return;
  for (int i = 0; i < 16; ++i)
    for (int j = 0; j < 16; ++j) {
      float s = c.x[i * 16 + j];
      for (int k = 0; k < 8; ++k) s = fmaf(a.x[i * 8 + k], b.x[k * 16 + j], s);
      d.x[i * 16 + j] = s;
    }
}
inline void store_matrix_sync(float* p, const FragC& f, unsigned ldm, layout_t layout) {
  check_operand(p, ldm);
  if (layout != mem_col_major) std::abort();  // the only layout taihu uses
  if (!lane0()) return;
  for (unsigned i = 0; i < 16; ++i)
    for (unsigned j = 0; j < 16; ++j) p[i + j * ldm] = f.x[i * 16 + j];
}
// Round to nearest even on 10 mantissa bits.
inline float __float_to_tf32(float v) {
  std::uint32_t u = 0;
  std::memcpy(&u, &v, sizeof u);
  u = (u + 0xFFFu + ((u >> 13) & 1u)) & ~0x1FFFu;
  std::memcpy(&v, &u, sizeof v);
  return v;
}

}  // namespace nvcuda::wmma
