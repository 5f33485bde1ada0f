// taihu::gemm_cuda::sgemm, the device-level entry point (host code): checks the
// arguments, applies the BLAS special cases, picks the kernel and launches it.
//   m or n == 0            -> nothing
//   k == 0 or alpha == 0   -> scale_c (C = beta * C; nothing at all when beta == 1)
//   CudaMath::tf32, sm_80+ -> sgemm_tf32_wmma_128x128x16 (tensor cores)
//   otherwise              -> sgemm_simt_128x128x8 (CUDA cores)
// gridDim.y is limited to 65535, so n is processed in slices of 65535 * 128 columns
// (B and C offset per slice). TAIHU_VERBOSE=1 logs the choice.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <climits>
#include <cstdint>
#include <string>

#include "common/arguments.hpp"
#include "common/cuda_check.hpp"
#include "kernel/params.hpp"
#include "taihu/arch/error.hpp"
#include "taihu/arch/log.hpp"
#include "taihu/gemm_cuda/sgemm_cuda.hpp"

namespace taihu::gemm_cuda {
namespace {

constexpr const char* kRoutine = "taihu::gemm_cuda::sgemm";

bool aligned16(const void* ptr) { return reinterpret_cast<std::uintptr_t>(ptr) % 16 == 0; }

// Whether the current device runs the TF32 kernel (compute capability >= 8.0 and an
// image built for it), asked once per device and remembered.
bool tf32_available(int& major) {
  int device = 0;
  detail::check_cuda(cudaGetDevice(&device), kRoutine, "cudaGetDevice");
  detail::check_cuda(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device),
                     kRoutine, "cudaDeviceGetAttribute(compute capability)");
  static std::array<std::atomic<int>, 64> known{};  // 0 unknown, 1 yes, 2 no
  if (device >= 0 && device < static_cast<int>(known.size())) {
    std::atomic<int>& slot = known[static_cast<std::size_t>(device)];
    if (slot.load() == 0)
      slot.store(major >= 8 && detail::sgemm_tf32_wmma_runs_on_current_device() ? 1 : 2);
    return slot.load() == 1;
  }
  return major >= 8 && detail::sgemm_tf32_wmma_runs_on_current_device();
}

const char* trans_name(Trans t) { return t == Trans::no ? "N" : "T"; }

}  // namespace

bool device_available() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    (void)cudaGetLastError();  // clear the error so later calls start clean
    return false;
  }
  return count > 0;
}

void sgemm(Trans ta, Trans tb, index_t m, index_t n, index_t k, float alpha, const float* dA,
           index_t lda, const float* dB, index_t ldb, float beta, float* dC, index_t ldc,
           Stream stream, CudaMath math) {
  detail::check_arguments(kRoutine, ta, tb, m, n, k, lda, ldb, ldc);
  if (math != CudaMath::fp32 && math != CudaMath::tf32)
    throw taihu::Error(std::string(kRoutine) +
                       ": math = " + std::to_string(static_cast<int>(math)) +
                       " is not CudaMath::fp32 or CudaMath::tf32");
  detail::check_pointers(kRoutine, m, n, k, alpha, dA, dB, dC);
  if (m == 0 || n == 0) return;

  if (k == 0 || alpha == 0.0f) {
    if (beta == 1.0f) return;
    arch::log_verbose("gemm_cuda: sgemm m=%lld n=%lld k=%lld alpha=%g beta=%g -> scale_c\n",
                      static_cast<long long>(m), static_cast<long long>(n),
                      static_cast<long long>(k), static_cast<double>(alpha),
                      static_cast<double>(beta));
    detail::launch_scale_c(m, n, beta, dC, ldc, stream);
    return;
  }

  if ((m + detail::kTileM - 1) / detail::kTileM > INT_MAX)
    throw taihu::Error(std::string(kRoutine) + ": m = " + std::to_string(m) +
                       " needs more than 2^31 - 1 thread blocks");

  bool tensor_cores = false;
  if (math == CudaMath::tf32) {
    int major = 0;
    tensor_cores = tf32_available(major);
    if (!tensor_cores)
      arch::log_verbose(
          "gemm_cuda: TF32 needs compute capability >= 8.0 and taihu built for "
          "it (device %d.x); using fp32\n",
          major);
  }

  detail::GemmParams p;
  p.k = k;
  p.alpha = alpha;
  p.beta = beta;
  p.a = dA;
  p.lda = lda;
  p.ldb = ldb;
  p.ldc = ldc;
  p.trans_a = ta == Trans::yes;
  p.trans_b = tb == Trans::yes;
  p.m = m;
  p.vec_a = aligned16(dA) && lda % 4 == 0;
  arch::log_verbose(
      "gemm_cuda: sgemm %s%s m=%lld n=%lld k=%lld lda=%lld ldb=%lld ldc=%lld -> %s, "
      "float4 loads A=%s B=%s C=%s\n",
      trans_name(ta), trans_name(tb), static_cast<long long>(m), static_cast<long long>(n),
      static_cast<long long>(k), static_cast<long long>(lda), static_cast<long long>(ldb),
      static_cast<long long>(ldc),
      tensor_cores ? "sgemm_tf32_wmma_128x128x16" : "sgemm_simt_128x128x8", p.vec_a ? "yes" : "no",
      aligned16(dB) && ldb % 4 == 0 ? "yes" : "no", aligned16(dC) && ldc % 4 == 0 ? "yes" : "no");

  const long long slice = detail::kMaxGridY * detail::kTileN;  // columns per launch
  for (long long j0 = 0; j0 < n; j0 += slice) {
    p.n = std::min<long long>(slice, n - j0);
    p.b = p.trans_b ? dB + j0 : dB + j0 * ldb;  // column j0 of op(B)
    p.c = dC + j0 * ldc;
    p.vec_b = aligned16(p.b) && ldb % 4 == 0;
    p.vec_c = aligned16(p.c) && ldc % 4 == 0;
    if (tensor_cores)
      detail::launch_sgemm_tf32_wmma_128x128x16(p, stream);
    else
      detail::launch_sgemm_simt_128x128x8(p, stream);
  }
}

}  // namespace taihu::gemm_cuda
