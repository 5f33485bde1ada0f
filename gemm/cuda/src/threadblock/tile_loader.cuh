// TileLoader: moves one operand's block tile from global to shared memory for the
// double-buffered main loops: load() fetches tile k0 into registers (so the fetch
// overlaps the math on the other shared buffer), store() writes the registers into a
// shared buffer laid out k-major, smem[p][r] (p: 0..kTileK-1, r: 0..kTileMN-1, row
// pitch kPitch), i.e. "op(A) column-major" / "op(B) row-major", which is what both the
// thread-level outer products and the wmma fragments read.
//
// The operand is op(X) seen as kTileMN rows (of M for A, of N for B) by K columns:
//   k_contiguous == false: element (r, p) at x[r + p * ld]   (A as is, B transposed)
//   k_contiguous == true : element (r, p) at x[p + r * ld]   (A transposed, B as is)
// Each thread moves kVectors groups of 4 consecutive elements along the contiguous
// direction, so a warp reads whole 32-byte sectors. A group is read as one float4 when
// the operand allows it (vector_ok: 16-byte aligned base, ld % 4 == 0) and the group
// lies inside the matrix; otherwise element by element with bounds checks. Elements
// outside the matrix (edge tiles, k tail) are stored as 0 so they add nothing.
#pragma once
#include <cuda_runtime.h>

namespace taihu::gemm_cuda::detail {

template <int kTileMN, int kTileK, int kThreads>
struct TileLoader {
  static constexpr int kPitch = kTileMN + 4;  // padding: spreads transposed stores over banks
  static constexpr int kVectors = kTileMN * kTileK / (4 * kThreads);
  static_assert(kVectors * 4 * kThreads == kTileMN * kTileK, "tile must split into float4s");
  static_assert(kTileMN % 4 == 0 && kTileK % 4 == 0, "tile sides must be multiples of 4");

  const float* x;
  long long ld;
  long long rows;  // extent of the M (or N) side of op(X)
  long long cols;  // extent of K
  long long r0;    // first row of this block's tile
  bool k_contiguous;
  bool vector_ok;
  float4 regs[kVectors];

  // Tile coordinates (r, p) of the first element of this thread's group v.
  __device__ __forceinline__ void coords(int v, int& r, int& p) const {
    const int idx = static_cast<int>(threadIdx.x) + v * kThreads;
    if (k_contiguous) {
      r = idx / (kTileK / 4);
      p = (idx % (kTileK / 4)) * 4;
    } else {
      p = idx / (kTileMN / 4);
      r = (idx % (kTileMN / 4)) * 4;
    }
  }

  __device__ __forceinline__ void load(long long k0) {
#pragma unroll
    for (int v = 0; v < kVectors; ++v) {
      int r = 0, p = 0;
      coords(v, r, p);
      const long long gr = r0 + r;
      const long long gp = k0 + p;
      float e[4] = {0.0f, 0.0f, 0.0f, 0.0f};
      if (k_contiguous) {  // 4 consecutive k of row gr
        if (gr < rows) {
          const float* src = x + gr * ld + gp;
          if (vector_ok && gp + 3 < cols) {
            regs[v] = __ldg(reinterpret_cast<const float4*>(src));
            continue;
          }
#pragma unroll
          for (int q = 0; q < 4; ++q)
            if (gp + q < cols) e[q] = __ldg(src + q);
        }
      } else {  // 4 consecutive rows of column gp
        if (gp < cols) {
          const float* src = x + gp * ld + gr;
          if (vector_ok && gr + 3 < rows) {
            regs[v] = __ldg(reinterpret_cast<const float4*>(src));
            continue;
          }
#pragma unroll
          for (int q = 0; q < 4; ++q)
            if (gr + q < rows) e[q] = __ldg(src + q);
        }
      }
      regs[v] = make_float4(e[0], e[1], e[2], e[3]);
    }
  }

  // smem points at one buffer: kTileK rows of kPitch floats, 16-byte aligned.
  __device__ __forceinline__ void store(float (*smem)[kPitch]) const {
#pragma unroll
    for (int v = 0; v < kVectors; ++v) {
      int r = 0, p = 0;
      coords(v, r, p);
      if (k_contiguous) {  // transpose on the way in
        smem[p + 0][r] = regs[v].x;
        smem[p + 1][r] = regs[v].y;
        smem[p + 2][r] = regs[v].z;
        smem[p + 3][r] = regs[v].w;
      } else {
        *reinterpret_cast<float4*>(&smem[p][r]) = regs[v];
      }
    }
  }
};

}  // namespace taihu::gemm_cuda::detail
