// CUDA time step (see cuda_step.hpp and kernel_api.hpp for the contract).
//  - acoustic 3D: each thread block owns a 32 (z) x 8 (x) tile and a chunk of y; each
//    thread keeps the 2H+1 values of its column along y in registers (the sliding
//    window along the slow axis) and reads its z/x neighbours through the L1 cache.
//    Every u value is read from DRAM about once per step.
//  - every other case (2D, density, vti): one thread per point, neighbours through
//    the read-only cache.
#include <cuda_runtime.h>

#include <algorithm>
#include <string>
#include <vector>

#include "kernels/cuda/cuda_step.hpp"
#include "taihu/arch/error.hpp"
#include "taihu/stencil/cuda.hpp"

namespace taihu::stencil {
namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw Error(std::string("taihu: CUDA ") + what + ": " + cudaGetErrorString(e));
}

struct DevWeights {
  float d2[3][kernels::kMaxHalf + 1];
  float d1[3][kernels::kMaxHalf + 1];
  float centre, centre_h;
  int half;
};

struct Params {
  const float* u;
  float* up;
  const float* q;
  float* qp;
  const float* A;
  const float* B;
  const float* C;
  long n0, n1, n2, s1, s2, pad0, pad1, pad2;
  int dim, physics;  // physics: 0 acoustic, 1 density, 2 vti
  DevWeights w;
};

__device__ __forceinline__ long idx(const Params& p, long i0, long i1, long i2) {
  return (i2 + p.pad2) * p.s2 + (i1 + p.pad1) * p.s1 + (i0 + p.pad0);
}

// One thread per point; j is the slow-axis index.
__global__ void step_point(Params p, long j0, long j1) {
  const long i0 = blockIdx.x * (long)blockDim.x + threadIdx.x;
  long i1, i2;
  if (p.dim == 3) {
    i1 = blockIdx.y * (long)blockDim.y + threadIdx.y;
    i2 = j0 + blockIdx.z;
    if (i1 >= p.n1) return;
  } else {
    i1 = j0 + blockIdx.z;
    i2 = 0;
    if (threadIdx.y != 0 || blockIdx.y != 0) return;
  }
  if (i0 >= p.n0 || (p.dim == 3 ? i2 : i1) >= j1) return;
  const long i = idx(p, i0, i1, i2);
  const long st[3] = {1, p.s1, p.s2};
  const int H = p.w.half;
  if (p.physics == 2) {
    float h2 = p.w.centre_h * p.u[i], vz = p.w.d2[0][0] * p.q[i];
    for (int k = 1; k <= H; ++k) {
      vz += p.w.d2[0][k] * (p.q[i + k] + p.q[i - k]);
      for (int a = 1; a < p.dim; ++a) h2 += p.w.d2[a][k] * (p.u[i + k * st[a]] + p.u[i - k * st[a]]);
    }
    const float cz = p.C[i] * vz;
    p.up[i] = 2.f * p.u[i] - p.up[i] + p.A[i] * h2 + cz;
    p.qp[i] = 2.f * p.q[i] - p.qp[i] + p.B[i] * h2 + cz;
    return;
  }
  float lap = p.w.centre * p.u[i];
  for (int k = 1; k <= H; ++k)
    for (int a = 0; a < p.dim; ++a) lap += p.w.d2[a][k] * (p.u[i + k * st[a]] + p.u[i - k * st[a]]);
  if (p.physics == 1)
    for (int a = 0; a < p.dim; ++a) {
      float gu = 0.f, gb = 0.f;
      for (int k = 1; k <= H; ++k) {
        gu += p.w.d1[a][k] * (p.u[i + k * st[a]] - p.u[i - k * st[a]]);
        gb += p.w.d1[a][k] * (p.B[i + k * st[a]] - p.B[i - k * st[a]]);
      }
      lap -= gb * gu;
    }
  p.up[i] = 2.f * p.u[i] - p.up[i] + p.A[i] * lap;
}

constexpr int kTileZ = 32, kTileX = 8, kChunkY = 64;

// Acoustic 3D: each thread owns one (z, x) column of a 32 x 8 tile and marches along y
// (the slow axis) over a chunk of kChunkY planes, keeping the 2H+1 values of its column
// in registers. The z and x neighbours come straight from the L1/read-only cache: the
// block's own rows bring them in, and there is no shared-memory tile and no barrier.
// The next plane's centre value is loaded one iteration ahead, so its DRAM latency
// overlaps the current plane's arithmetic. Measured on an H200 against the shared-tile
// window this replaced (two barriers per plane): 1.6x at 256^3, 1.3x at 512^3
// (bench/results/2026-11-28-h200-cuda-stencil.md).
template <int H>
__global__ void __launch_bounds__(kTileZ* kTileX, 4) step_acoustic3d_window(Params p, long j0, long j1) {
  const int tz = threadIdx.x, tx = threadIdx.y;
  const long z = blockIdx.x * (long)kTileZ + tz, x = blockIdx.y * (long)kTileX + tx;
  const long ya = j0 + blockIdx.z * (long)kChunkY, yb = min(j1, ya + kChunkY);
  if (!(z < p.n0 && x < p.n1)) return;
  const long s1 = p.s1, s2 = p.s2, base = idx(p, z, x, ya);
  const float* __restrict__ u = p.u + base;
  const float* __restrict__ A = p.A + base;
  float* __restrict__ up = p.up + base;
  float win[2 * H + 1];
#pragma unroll
  for (int k = 0; k < 2 * H; ++k) win[k + 1] = __ldg(u + (k - H) * s2);
  float next_c = __ldg(u + H * s2);
  for (long y = ya; y < yb; ++y) {
    const long off = (y - ya) * s2;
#pragma unroll
    for (int k = 0; k < 2 * H; ++k) win[k] = win[k + 1];
    win[2 * H] = next_c;
    if (y + 1 < yb) next_c = __ldg(u + off + (H + 1) * s2);
    const float* c = u + off;
    float lap = p.w.centre * win[H];
#pragma unroll
    for (int k = 1; k <= H; ++k) {
      lap += p.w.d2[0][k] * (__ldg(c + k) + __ldg(c - k));
      lap += p.w.d2[1][k] * (__ldg(c + k * s1) + __ldg(c - k * s1));
      lap += p.w.d2[2][k] * (win[H + k] + win[H - k]);
    }
    up[off] = 2.f * win[H] - up[off] + __ldg(A + off) * lap;
  }
}

template <int H>
void launch_window(const Params& p, long j0, long j1) {
  dim3 block(kTileZ, kTileX);
  dim3 grid(static_cast<unsigned>((p.n0 + kTileZ - 1) / kTileZ), static_cast<unsigned>((p.n1 + kTileX - 1) / kTileX),
            static_cast<unsigned>((j1 - j0 + kChunkY - 1) / kChunkY));
  step_acoustic3d_window<H><<<grid, block>>>(p, j0, j1);
}

void launch(const Params& p, long j0, long j1) {
  if (j1 <= j0) return;
  if (p.dim == 3 && p.physics == 0) {
    switch (p.w.half) {
      case 1: launch_window<1>(p, j0, j1); break;
      case 2: launch_window<2>(p, j0, j1); break;
      case 3: launch_window<3>(p, j0, j1); break;
      case 4: launch_window<4>(p, j0, j1); break;
      case 5: launch_window<5>(p, j0, j1); break;
      case 6: launch_window<6>(p, j0, j1); break;
      case 7: launch_window<7>(p, j0, j1); break;
      default: launch_window<8>(p, j0, j1); break;
    }
  } else {
    dim3 block(64, p.dim == 3 ? 4 : 1);
    dim3 grid(static_cast<unsigned>((p.n0 + 63) / 64), p.dim == 3 ? static_cast<unsigned>((p.n1 + 3) / 4) : 1u,
              static_cast<unsigned>(j1 - j0));
    step_point<<<grid, block>>>(p, j0, j1);
  }
  check(cudaGetLastError(), "kernel launch");
}

DevWeights dev_weights(const kernels::FdWeights& fd) {
  DevWeights w{};
  for (int a = 0; a < 3; ++a)
    for (int k = 0; k <= kernels::kMaxHalf; ++k) {
      w.d2[a][k] = fd.d2[a][k];
      w.d1[a][k] = fd.d1[a][k];
    }
  w.centre = fd.centre;
  w.centre_h = fd.centre - fd.d2[0][0];
  w.half = fd.half;
  return w;
}

class DeviceBuffer {
 public:
  explicit DeviceBuffer(std::size_t floats = 0) {
    if (floats) check(cudaMalloc(&p_, floats * sizeof(float)), "cudaMalloc");
    n_ = floats;
  }
  ~DeviceBuffer() {
    if (p_) cudaFree(p_);
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  float* get() const { return p_; }
  void upload(const float* h) { check(cudaMemcpy(p_, h, n_ * sizeof(float), cudaMemcpyHostToDevice), "upload"); }
  void download(float* h) const { check(cudaMemcpy(h, p_, n_ * sizeof(float), cudaMemcpyDeviceToHost), "download"); }

 private:
  float* p_ = nullptr;
  std::size_t n_ = 0;
};

class CudaStepperImpl final : public CudaStepper {
 public:
  CudaStepperImpl(const Layout& L, Physics physics, int dim, const kernels::FdWeights& fd)
      : n_(static_cast<std::size_t>(L.total)), u_(n_), up_(n_), A_(n_),
        B_(physics != Physics::acoustic ? n_ : 0), C_(physics == Physics::vti ? n_ : 0),
        q_(physics == Physics::vti ? n_ : 0), qp_(physics == Physics::vti ? n_ : 0) {
    p_.n0 = L.n[0];
    p_.n1 = L.n[1];
    p_.n2 = L.n[2];
    p_.s1 = L.s1;
    p_.s2 = L.s2;
    p_.pad0 = L.pad[0];
    p_.pad1 = L.pad[1];
    p_.pad2 = L.pad[2];
    p_.dim = dim;
    p_.physics = physics == Physics::acoustic ? 0 : physics == Physics::acoustic_density ? 1 : 2;
    p_.w = dev_weights(fd);
    p_.u = u_.get();
    p_.up = up_.get();
    p_.A = A_.get();
    p_.B = B_.get();
    p_.C = C_.get();
    p_.q = q_.get();
    p_.qp = qp_.get();
  }
  void step(const kernels::StepArgs& a, long j0, long j1) override {
    if (!coefficients_) {
      A_.upload(a.A);
      if (a.B) B_.upload(a.B);
      if (a.C) C_.upload(a.C);
      coefficients_ = true;
    }
    u_.upload(a.u);  // every call: a halo exchange may have refreshed it in between
    if (a.q) q_.upload(a.q);
    if (!in_step_) {  // the previous level only once per time step
      up_.upload(a.u_prev);
      if (a.q_prev) qp_.upload(a.q_prev);
      in_step_ = true;
    }
    launch(p_, j0, j1);
  }
  void sync(const kernels::StepArgs& a) override {
    check(cudaDeviceSynchronize(), "kernel");
    up_.download(a.u_prev);
    if (a.q_prev) qp_.download(a.q_prev);
    in_step_ = false;
  }

 private:
  std::size_t n_;
  DeviceBuffer u_, up_, A_, B_, C_, q_, qp_;
  Params p_{};
  bool coefficients_ = false, in_step_ = false;
};

}  // namespace

bool cuda_available() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

bool cuda_device_available() { return cuda_available(); }

std::unique_ptr<CudaStepper> make_cuda_stepper(const Layout& layout, Physics physics, int dim,
                                               const kernels::FdWeights& fd) {
  if (physics == Physics::tti) throw Error("taihu: kernel = cuda does not implement tti yet (use optimized)");
  if (!cuda_available()) throw Error("taihu: kernel = cuda, but no CUDA device is available");
  return std::make_unique<CudaStepperImpl>(layout, physics, dim, fd);
}

double cuda_time_acoustic3d(long n0, long n1, long n2, int space_order, int steps) {
  if (!cuda_available()) throw Error("taihu: cuda_time_acoustic3d: no CUDA device is available");
  Grid g;
  g.dim = 3;
  g.n = {n0, n1, n2};
  g.h = {10, 10, 10};
  const Layout L = Layout::for_grid(3, g.n);
  const auto fd = kernels::make_weights(g, space_order);
  const std::size_t n = static_cast<std::size_t>(L.total);
  DeviceBuffer u(n), up(n), A(n);
  check(cudaMemset(u.get(), 0, n * 4), "memset");
  check(cudaMemset(up.get(), 0, n * 4), "memset");
  check(cudaMemset(A.get(), 0, n * 4), "memset");
  Params p{};
  p.n0 = n0;
  p.n1 = n1;
  p.n2 = n2;
  p.s1 = L.s1;
  p.s2 = L.s2;
  p.pad0 = L.pad[0];
  p.pad1 = L.pad[1];
  p.pad2 = L.pad[2];
  p.dim = 3;
  p.physics = 0;
  p.w = dev_weights(fd);
  p.A = A.get();
  float* cur = u.get();
  float* nxt = up.get();
  cudaEvent_t a, b;
  check(cudaEventCreate(&a), "event");
  check(cudaEventCreate(&b), "event");
  std::vector<float> times;
  for (int s = 0; s < steps + 1; ++s) {
    p.u = cur;
    p.up = nxt;
    check(cudaEventRecord(a), "event");
    launch(p, 0, n2);
    check(cudaEventRecord(b), "event");
    check(cudaEventSynchronize(b), "event");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, a, b), "event");
    if (s > 0) times.push_back(ms);  // first step: warm-up
    std::swap(cur, nxt);
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  std::sort(times.begin(), times.end());
  return times[times.size() / 2] * 1e-3;
}

double cuda_copy_gbps() {
  if (!cuda_available()) throw Error("taihu: cuda_copy_gbps: no CUDA device is available");
  const std::size_t n = std::size_t(1) << 28;  // floats: 1 GiB
  DeviceBuffer a(n), b(n);
  check(cudaMemset(a.get(), 0, n * 4), "memset");
  cudaEvent_t e0, e1;
  check(cudaEventCreate(&e0), "event");
  check(cudaEventCreate(&e1), "event");
  float best = 1e30f;
  for (int r = 0; r < 6; ++r) {
    check(cudaEventRecord(e0), "event");
    check(cudaMemcpy(b.get(), a.get(), n * 4, cudaMemcpyDeviceToDevice), "copy");
    check(cudaEventRecord(e1), "event");
    check(cudaEventSynchronize(e1), "event");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, e0, e1), "event");
    if (r > 0) best = std::min(best, ms);
  }
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  return 2.0 * double(n) * 4.0 / (double(best) * 1e-3) / 1e9;
}

}  // namespace taihu::stencil
