// taihu::gemm_cuda::sgemm against independent references:
//   - a host loop in double (odd shapes 1..300, all transposes, alpha/beta in
//     {0, 1, -1, 0.5}, NaN in C when beta == 0, tight / padded / misaligned operands);
//   - the device reference kernel (double accumulation) and cuBLAS (cublasSgemm, and
//     cublasGemmEx with TF32 compute for the TF32 path) on 1024^3 and 777x1234x513;
//   - BLAS special cases (m, n, k == 0, alpha == 0 with NaN in A and B), streams, n
//     wider than one grid, and that CudaMath::tf32 really rounds to TF32.
// Every bound is per element: tol * (|alpha| sum_p |a_ip b_pj| + |beta c_ij|), with
// tol = 2 (k + 4) 2^-24 for fp32 and 2^-9 + 2 (k + 4) 2^-24 for TF32 (inputs rounded to
// a 10-bit mantissa), twice that against cuBLAS (both sides err).
// Tests that need a GPU skip when there is none; argument checks run everywhere.
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "taihu/arch/error.hpp"
#include "taihu/arch/gpu.hpp"
#include "taihu/gemm_cuda/sgemm_cuda.hpp"
#include "taihu/gemm_cuda/sgemm_reference.hpp"

namespace {

using taihu::gemm_cuda::CudaMath;
using taihu::gemm_cuda::index_t;
using taihu::gemm_cuda::Trans;

constexpr double kUnit = 5.9604644775390625e-08;  // 2^-24, fp32 unit roundoff

double tolerance(CudaMath math, index_t k) {
  const double fp32 = 2.0 * static_cast<double>(k + 4) * kUnit;
  return math == CudaMath::tf32 ? 0x1p-9 + fp32 : fp32;
}

const char* name(Trans t) { return t == Trans::no ? "N" : "T"; }
const char* name(CudaMath m) { return m == CudaMath::fp32 ? "fp32" : "tf32"; }

void cuda_ok(cudaError_t err, const char* what) {
  if (err != cudaSuccess)
    throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(err));
}

// Device memory holding `n` floats, `offset` floats past a 256-byte aligned allocation
// (offset 1 makes the pointer misaligned for float4).
class DeviceBuffer {
 public:
  explicit DeviceBuffer(std::size_t n, std::size_t offset = 0) : n_(n) {
    cuda_ok(cudaMalloc(reinterpret_cast<void**>(&base_), (n + offset + 1) * sizeof(float)),
            "cudaMalloc");
    ptr_ = base_ + offset;
  }
  ~DeviceBuffer() { cudaFree(base_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  float* get() const { return ptr_; }
  void upload(const std::vector<float>& h) {
    cuda_ok(
        cudaMemcpy(ptr_, h.data(), std::min(h.size(), n_) * sizeof(float), cudaMemcpyHostToDevice),
        "upload");
  }
  std::vector<float> download() const {
    std::vector<float> h(n_);
    cuda_ok(cudaDeviceSynchronize(), "kernel");
    cuda_ok(cudaMemcpy(h.data(), ptr_, n_ * sizeof(float), cudaMemcpyDeviceToHost), "download");
    return h;
  }

 private:
  float* base_ = nullptr;
  float* ptr_ = nullptr;
  std::size_t n_;
};

// One column-major problem; "stored" sizes are those of A and B as they lie in memory.
struct Problem {
  Trans ta = Trans::no, tb = Trans::no;
  index_t m = 0, n = 0, k = 0, lda = 1, ldb = 1, ldc = 1;
  std::size_t offset = 0;  // floats each operand pointer is shifted by

  index_t a_rows() const { return ta == Trans::no ? m : k; }
  index_t a_cols() const { return ta == Trans::no ? k : m; }
  index_t b_rows() const { return tb == Trans::no ? k : n; }
  index_t b_cols() const { return tb == Trans::no ? n : k; }
  std::size_t a_size() const { return static_cast<std::size_t>(lda * a_cols()); }
  std::size_t b_size() const { return static_cast<std::size_t>(ldb * b_cols()); }
  std::size_t c_size() const { return static_cast<std::size_t>(ldc * n); }
  float a(const std::vector<float>& A, index_t i, index_t p) const {
    return ta == Trans::no ? A[i + p * lda] : A[p + i * lda];
  }
  float b(const std::vector<float>& B, index_t p, index_t j) const {
    return tb == Trans::no ? B[p + j * ldb] : B[j + p * ldb];
  }
  std::string str() const {
    std::ostringstream s;
    s << name(ta) << name(tb) << " m" << m << "n" << n << "k" << k << " lda" << lda << " ldb" << ldb
      << " ldc" << ldc << (offset ? " misaligned" : "");
    return s.str();
  }
};

// Leading dimensions: 0 tight (odd sizes stay odd), 1 padded to a multiple of 4 (the
// float4 paths), 2 tight + 3 with every pointer one float off 16-byte alignment.
Problem make_problem(Trans ta, Trans tb, index_t m, index_t n, index_t k, int variant) {
  Problem p;
  p.ta = ta;
  p.tb = tb;
  p.m = m;
  p.n = n;
  p.k = k;
  auto ld = [variant](index_t rows) {
    if (variant == 1) return (rows + 3) / 4 * 4 + 4;
    if (variant == 2) return rows + 3;
    return std::max<index_t>(rows, 1);
  };
  p.lda = ld(p.a_rows());
  p.ldb = ld(p.b_rows());
  p.ldc = ld(m);
  p.offset = variant == 2 ? 1 : 0;
  return p;
}

std::vector<float> random_vector(std::size_t n, std::mt19937_64& rng) {
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

// prod = op(A) op(B) and absprod = |op(A)| |op(B)| in double, m x n with ld m.
void host_product(const Problem& p, const std::vector<float>& A, const std::vector<float>& B,
                  std::vector<double>& prod, std::vector<double>& absprod) {
  prod.assign(static_cast<std::size_t>(p.m * p.n), 0.0);
  absprod.assign(prod.size(), 0.0);
  for (index_t j = 0; j < p.n; ++j)
    for (index_t i = 0; i < p.m; ++i) {
      double s = 0, sa = 0;
      for (index_t l = 0; l < p.k; ++l) {
        const double t = static_cast<double>(p.a(A, i, l)) * static_cast<double>(p.b(B, l, j));
        s += t;
        sa += std::fabs(t);
      }
      prod[i + j * p.m] = s;
      absprod[i + j * p.m] = sa;
    }
}

// Empty when every element of C is within tol * bound of want; else a failure text.
// Elements of C outside the m x n matrix (ldc padding) must be left untouched.
std::string compare(const Problem& p, const std::vector<float>& got,
                    const std::vector<float>& before, const std::function<double(index_t)>& want,
                    const std::function<double(index_t)>& bound, double tol) {
  std::ostringstream out;
  int bad = 0;
  for (index_t j = 0; j < p.n; ++j)
    for (index_t i = 0; i < p.ldc; ++i) {
      const index_t idx = i + j * p.ldc;
      const float g = got[static_cast<std::size_t>(idx)];
      bool ok = true;
      double w = 0, b = 0;
      if (i < p.m) {
        w = want(i + j * p.m);
        b = tol * bound(i + j * p.m) + 1e-30;
        ok = std::fabs(static_cast<double>(g) - w) <= b;  // false for NaN
      } else {
        const float o = before[static_cast<std::size_t>(idx)];
        ok = (std::isnan(o) && std::isnan(g)) || o == g;
        w = static_cast<double>(o);
      }
      if (!ok && bad++ < 5)
        out << "  C(" << i << ", " << j << ") = " << g << ", want " << w << " +- " << b
            << (i >= p.m ? " (padding must stay untouched)" : "") << "\n";
    }
  if (bad == 0) return {};
  return std::to_string(bad) + " wrong elements:\n" + out.str();
}

class SgemmCudaGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!taihu::gemm_cuda::device_available())
      GTEST_SKIP() << "GPU test skipped: " << taihu::arch::query_gpus().status;
  }
};

// The operands of one problem on the device, with their host copies.
struct Operands {
  Operands(const Problem& p, std::mt19937_64& rng)
      : a(random_vector(p.a_size(), rng)),
        b(random_vector(p.b_size(), rng)),
        c0(random_vector(p.c_size(), rng)),
        da(p.a_size(), p.offset),
        db(p.b_size(), p.offset),
        dc(p.c_size(), p.offset) {
    da.upload(a);
    db.upload(b);
  }
  std::vector<float> a, b, c0;
  DeviceBuffer da, db, dc;
};

// C = alpha op(A) op(B) + beta C0 (C0 replaced by NaN when beta == 0) on the device,
// against prod/absprod computed on the host.
void check_against_host(const Problem& p, Operands& op, const std::vector<double>& prod,
                        const std::vector<double>& absprod, float alpha, float beta,
                        CudaMath math) {
  std::vector<float> c_in = op.c0;
  if (beta == 0.0f) std::fill(c_in.begin(), c_in.end(), std::numeric_limits<float>::quiet_NaN());
  op.dc.upload(c_in);
  taihu::gemm_cuda::sgemm(p.ta, p.tb, p.m, p.n, p.k, alpha, op.da.get(), p.lda, op.db.get(), p.ldb,
                          beta, op.dc.get(), p.ldc, nullptr, math);
  const std::vector<float> got = op.dc.download();
  const double da = alpha, db = beta;
  auto c0 = [&](index_t e) {  // C0(i, j) for e = i + j * m
    return static_cast<double>(op.c0[static_cast<std::size_t>(e % p.m + (e / p.m) * p.ldc)]);
  };
  auto want = [&](index_t e) {
    return da * prod[static_cast<std::size_t>(e)] + (beta == 0.0f ? 0.0 : db * c0(e));
  };
  auto bound = [&](index_t e) {
    return std::fabs(da) * absprod[static_cast<std::size_t>(e)] +
           (beta == 0.0f ? 0.0 : std::fabs(db * c0(e)));
  };
  const std::string err = compare(p, got, c_in, want, bound, tolerance(math, p.k));
  EXPECT_TRUE(err.empty()) << p.str() << " alpha " << alpha << " beta " << beta << " " << name(math)
                           << ": " << err;
}

// ---------------------------------------------------------------------------------
// (a) host loop: odd shapes 1..300, every transpose, alpha/beta grid, three layouts.

TEST_F(SgemmCudaGpu, MatchesHostLoopOnOddShapesAllTransposes) {
  std::mt19937_64 rng(20240611);
  std::vector<std::array<index_t, 3>> shapes = {
      {1, 1, 1},      {1, 300, 1},    {300, 1, 7},   {4, 4, 4},      {128, 128, 8}, {127, 129, 9},
      {129, 127, 17}, {256, 256, 16}, {33, 65, 300}, {255, 257, 15}, {131, 3, 133}};
  std::uniform_int_distribution<index_t> size(1, 300);
  for (int r = 0; r < 6; ++r) shapes.push_back({size(rng), size(rng), size(rng)});
  const float values[] = {0.0f, 1.0f, -1.0f, 0.5f};
  int variant = 0;
  for (const auto& s : shapes)
    for (Trans ta : {Trans::no, Trans::yes})
      for (Trans tb : {Trans::no, Trans::yes}) {
        const Problem p = make_problem(ta, tb, s[0], s[1], s[2], variant++ % 3);
        Operands op(p, rng);
        std::vector<double> prod, absprod;
        host_product(p, op.a, op.b, prod, absprod);
        for (CudaMath math : {CudaMath::fp32, CudaMath::tf32})
          for (float alpha : values)
            for (float beta : values) check_against_host(p, op, prod, absprod, alpha, beta, math);
        if (HasFailure()) return;  // one broken shape says enough
      }
}

TEST_F(SgemmCudaGpu, LongKCrossesManyTilesAndATail) {
  std::mt19937_64 rng(7);
  int variant = 0;
  for (Trans ta : {Trans::no, Trans::yes})
    for (Trans tb : {Trans::no, Trans::yes}) {
      const Problem p = make_problem(ta, tb, 70, 45, 4099, variant++ % 3);
      Operands op(p, rng);
      std::vector<double> prod, absprod;
      host_product(p, op.a, op.b, prod, absprod);
      for (CudaMath math : {CudaMath::fp32, CudaMath::tf32})
        check_against_host(p, op, prod, absprod, -0.5f, 0.5f, math);
    }
}

// ---------------------------------------------------------------------------------
// BLAS special cases.

TEST_F(SgemmCudaGpu, AlphaZeroReadsNeitherANorB) {
  std::mt19937_64 rng(3);
  const Problem p = make_problem(Trans::no, Trans::yes, 37, 29, 11, 0);
  Operands op(p, rng);
  const std::vector<float> nan(std::max(p.a_size(), p.b_size()),
                               std::numeric_limits<float>::quiet_NaN());
  op.da.upload(nan);
  op.db.upload(nan);
  for (CudaMath math : {CudaMath::fp32, CudaMath::tf32}) {
    op.dc.upload(op.c0);
    taihu::gemm_cuda::sgemm(p.ta, p.tb, p.m, p.n, p.k, 0.0f, op.da.get(), p.lda, op.db.get(), p.ldb,
                            0.5f, op.dc.get(), p.ldc, nullptr, math);
    const std::vector<float> got = op.dc.download();
    for (std::size_t e = 0; e < got.size(); ++e) ASSERT_EQ(got[e], 0.5f * op.c0[e]) << e;
  }
}

TEST_F(SgemmCudaGpu, KZeroScalesCAndBetaZeroClearsNaN) {
  std::mt19937_64 rng(4);
  const Problem p = make_problem(Trans::no, Trans::no, 13, 7, 0, 0);
  DeviceBuffer dc(p.c_size());
  const std::vector<float> c0 = random_vector(p.c_size(), rng);
  dc.upload(c0);
  taihu::gemm_cuda::sgemm(p.ta, p.tb, p.m, p.n, 0, 1.0f, nullptr, p.lda, nullptr, p.ldb, -1.0f,
                          dc.get(), p.ldc);
  std::vector<float> got = dc.download();
  for (std::size_t e = 0; e < got.size(); ++e) ASSERT_EQ(got[e], -c0[e]) << e;

  dc.upload(std::vector<float>(p.c_size(), std::numeric_limits<float>::quiet_NaN()));
  taihu::gemm_cuda::sgemm(p.ta, p.tb, p.m, p.n, 0, 1.0f, nullptr, p.lda, nullptr, p.ldb, 0.0f,
                          dc.get(), p.ldc);
  got = dc.download();
  for (std::size_t e = 0; e < got.size(); ++e) ASSERT_EQ(got[e], 0.0f) << e;
}

TEST_F(SgemmCudaGpu, EmptyMOrNLeavesCUntouched) {
  DeviceBuffer dc(64);
  const std::vector<float> c0(64, 42.0f);
  dc.upload(c0);
  float* c = dc.get();
  taihu::gemm_cuda::sgemm(Trans::no, Trans::no, 0, 8, 8, 1.0f, nullptr, 1, nullptr, 8, 0.0f, c, 1);
  taihu::gemm_cuda::sgemm(Trans::no, Trans::no, 8, 0, 8, 1.0f, nullptr, 8, nullptr, 8, 0.0f, c, 8);
  taihu::gemm_cuda::sgemm_reference(Trans::no, Trans::no, 0, 8, 8, 1.0f, nullptr, 1, nullptr, 8,
                                    0.0f, c, 1);
  EXPECT_EQ(dc.download(), c0);
}

// ---------------------------------------------------------------------------------
// (b) large sizes against the device reference and cuBLAS.

class Cublas {
 public:
  Cublas() {
    if (cublasCreate(&handle_) != CUBLAS_STATUS_SUCCESS) throw std::runtime_error("cublasCreate");
  }
  ~Cublas() { cublasDestroy(handle_); }
  Cublas(const Cublas&) = delete;
  Cublas& operator=(const Cublas&) = delete;

  void gemm(const Problem& p, float alpha, const float* a, const float* b, float beta, float* c,
            CudaMath math) {
    const auto op = [](Trans t) { return t == Trans::no ? CUBLAS_OP_N : CUBLAS_OP_T; };
    const int m = static_cast<int>(p.m), n = static_cast<int>(p.n), k = static_cast<int>(p.k);
    const int lda = static_cast<int>(p.lda), ldb = static_cast<int>(p.ldb),
              ldc = static_cast<int>(p.ldc);
    cublasStatus_t s = CUBLAS_STATUS_SUCCESS;
    if (math == CudaMath::fp32) {
      cublasSetMathMode(handle_, CUBLAS_PEDANTIC_MATH);  // no silent TF32
      s = cublasSgemm(handle_, op(p.ta), op(p.tb), m, n, k, &alpha, a, lda, b, ldb, &beta, c, ldc);
    } else {
      cublasSetMathMode(handle_, CUBLAS_DEFAULT_MATH);
      s = cublasGemmEx(handle_, op(p.ta), op(p.tb), m, n, k, &alpha, a, CUDA_R_32F, lda, b,
                       CUDA_R_32F, ldb, &beta, c, CUDA_R_32F, ldc, CUBLAS_COMPUTE_32F_FAST_TF32,
                       CUBLAS_GEMM_DEFAULT);
    }
    if (s != CUBLAS_STATUS_SUCCESS)
      throw std::runtime_error(std::string("cuBLAS: ") + cublasGetStatusString(s));
  }

 private:
  cublasHandle_t handle_ = nullptr;
};

// Absolute values of a host vector, on the device.
std::vector<float> abs_of(const std::vector<float>& v) {
  std::vector<float> r(v.size());
  std::transform(v.begin(), v.end(), r.begin(), [](float x) { return std::fabs(x); });
  return r;
}

void check_large(const Problem& p, Cublas& cublas, std::mt19937_64& rng) {
  const float alpha = 0.75f, beta = -0.5f;
  Operands op(p, rng);
  // want: the reference kernel; bound: the reference kernel on |A|, |B|, |C0|.
  DeviceBuffer dwant(p.c_size(), p.offset), dbound(p.c_size(), p.offset);
  dwant.upload(op.c0);
  taihu::gemm_cuda::sgemm_reference(p.ta, p.tb, p.m, p.n, p.k, alpha, op.da.get(), p.lda,
                                    op.db.get(), p.ldb, beta, dwant.get(), p.ldc);
  {
    DeviceBuffer abs_a(p.a_size(), p.offset), abs_b(p.b_size(), p.offset);
    abs_a.upload(abs_of(op.a));
    abs_b.upload(abs_of(op.b));
    dbound.upload(abs_of(op.c0));
    taihu::gemm_cuda::sgemm_reference(p.ta, p.tb, p.m, p.n, p.k, std::fabs(alpha), abs_a.get(),
                                      p.lda, abs_b.get(), p.ldb, std::fabs(beta), dbound.get(),
                                      p.ldc);
    dbound.download();  // synchronises before abs_a, abs_b are freed
  }
  const std::vector<float> want = dwant.download(), bound = dbound.download();
  auto at = [&](const std::vector<float>& v) {
    return [&v, &p](index_t e) {
      return static_cast<double>(v[static_cast<std::size_t>(e % p.m + (e / p.m) * p.ldc)]);
    };
  };
  for (CudaMath math : {CudaMath::fp32, CudaMath::tf32}) {
    const double tol = tolerance(math, p.k);
    op.dc.upload(op.c0);
    taihu::gemm_cuda::sgemm(p.ta, p.tb, p.m, p.n, p.k, alpha, op.da.get(), p.lda, op.db.get(),
                            p.ldb, beta, op.dc.get(), p.ldc, nullptr, math);
    const std::vector<float> got = op.dc.download();
    std::string err = compare(p, got, op.c0, at(want), at(bound), tol);
    EXPECT_TRUE(err.empty()) << p.str() << " " << name(math) << " vs reference kernel: " << err;

    op.dc.upload(op.c0);
    cublas.gemm(p, alpha, op.da.get(), op.db.get(), beta, op.dc.get(), math);
    const std::vector<float> theirs = op.dc.download();
    err = compare(p, got, op.c0, at(theirs), at(bound), 2 * tol);
    EXPECT_TRUE(err.empty()) << p.str() << " " << name(math) << " vs cuBLAS: " << err;
  }
}

TEST_F(SgemmCudaGpu, MatchesCublasOn1024Cubed) {
  std::mt19937_64 rng(11);
  Cublas cublas;
  for (Trans ta : {Trans::no, Trans::yes})
    for (Trans tb : {Trans::no, Trans::yes})
      check_large(make_problem(ta, tb, 1024, 1024, 1024, 0), cublas, rng);
}

TEST_F(SgemmCudaGpu, MatchesCublasOn777x1234x513) {
  std::mt19937_64 rng(12);
  Cublas cublas;
  int variant = 0;
  for (Trans ta : {Trans::no, Trans::yes})
    for (Trans tb : {Trans::no, Trans::yes})
      check_large(make_problem(ta, tb, 777, 1234, 513, variant++ % 3), cublas, rng);
}

// The reference kernel itself against the host loop, so (b) rests on something checked.
TEST_F(SgemmCudaGpu, ReferenceKernelMatchesHostLoop) {
  std::mt19937_64 rng(13);
  for (Trans ta : {Trans::no, Trans::yes})
    for (Trans tb : {Trans::no, Trans::yes}) {
      const Problem p = make_problem(ta, tb, 67, 45, 89, 2);
      Operands op(p, rng);
      std::vector<double> prod, absprod;
      host_product(p, op.a, op.b, prod, absprod);
      op.dc.upload(op.c0);
      taihu::gemm_cuda::sgemm_reference(p.ta, p.tb, p.m, p.n, p.k, 1.0f, op.da.get(), p.lda,
                                        op.db.get(), p.ldb, 0.0f, op.dc.get(), p.ldc);
      const std::vector<float> got = op.dc.download();
      auto want = [&](index_t e) { return prod[static_cast<std::size_t>(e)]; };
      auto bound = [&](index_t e) { return absprod[static_cast<std::size_t>(e)]; };
      const std::string err = compare(p, got, op.c0, want, bound, 2 * kUnit);  // one rounding
      EXPECT_TRUE(err.empty()) << p.str() << ": " << err;
    }
}

// ---------------------------------------------------------------------------------
// Streams, grid limits, and the TF32 path really being TF32.

TEST_F(SgemmCudaGpu, RunsOnTheCallersStream) {
  std::mt19937_64 rng(14);
  const Problem p = make_problem(Trans::yes, Trans::no, 300, 200, 100, 1);
  Operands op(p, rng);
  std::vector<double> prod, absprod;
  host_product(p, op.a, op.b, prod, absprod);
  cudaStream_t stream = nullptr;
  cuda_ok(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
  for (CudaMath math : {CudaMath::fp32, CudaMath::tf32}) {
    op.dc.upload(op.c0);
    taihu::gemm_cuda::sgemm(p.ta, p.tb, p.m, p.n, p.k, 1.0f, op.da.get(), p.lda, op.db.get(), p.ldb,
                            0.0f, op.dc.get(), p.ldc, stream, math);
    cuda_ok(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
    const std::vector<float> got = op.dc.download();
    auto want = [&](index_t e) { return prod[static_cast<std::size_t>(e)]; };
    auto bound = [&](index_t e) { return absprod[static_cast<std::size_t>(e)]; };
    const std::string err = compare(p, got, op.c0, want, bound, tolerance(math, p.k));
    EXPECT_TRUE(err.empty()) << p.str() << " " << name(math) << ": " << err;
  }
  cudaStreamDestroy(stream);
}

// n > 65535 * 128: the device layer splits the columns over several launches.
TEST_F(SgemmCudaGpu, NWiderThanOneGridIsSplit) {
  std::mt19937_64 rng(15);
  const index_t n = 65535 * 128 + 77;
  for (Trans tb : {Trans::no, Trans::yes}) {
    const Problem p = make_problem(Trans::no, tb, 3, n, 5, 0);
    Operands op(p, rng);
    std::vector<double> prod, absprod;
    host_product(p, op.a, op.b, prod, absprod);
    op.dc.upload(op.c0);
    taihu::gemm_cuda::sgemm(p.ta, p.tb, p.m, p.n, p.k, 1.0f, op.da.get(), p.lda, op.db.get(), p.ldb,
                            0.0f, op.dc.get(), p.ldc);
    const std::vector<float> got = op.dc.download();
    auto want = [&](index_t e) { return prod[static_cast<std::size_t>(e)]; };
    auto bound = [&](index_t e) { return absprod[static_cast<std::size_t>(e)]; };
    const std::string err = compare(p, got, op.c0, want, bound, tolerance(CudaMath::fp32, p.k));
    EXPECT_TRUE(err.empty()) << p.str() << ": " << err;
  }
}

// 1 + 2^-12 is not a TF32 number (10-bit mantissa): the TF32 path must give 1 where
// fp32 gives 1 + 2^-12, on devices with tensor-core TF32 (compute capability >= 8).
TEST_F(SgemmCudaGpu, Tf32PathRoundsInputsToTf32) {
  const float x = 1.0f + 0x1p-12f;
  DeviceBuffer da(1), db(1), dc(1);
  da.upload({x});
  db.upload({1.0f});
  taihu::gemm_cuda::sgemm(Trans::no, Trans::no, 1, 1, 1, 1.0f, da.get(), 1, db.get(), 1, 0.0f,
                          dc.get(), 1, nullptr, CudaMath::fp32);
  EXPECT_EQ(dc.download()[0], x);
  taihu::gemm_cuda::sgemm(Trans::no, Trans::no, 1, 1, 1, 1.0f, da.get(), 1, db.get(), 1, 0.0f,
                          dc.get(), 1, nullptr, CudaMath::tf32);
  int device = 0, major = 0;
  cuda_ok(cudaGetDevice(&device), "cudaGetDevice");
  cuda_ok(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device), "attribute");
  EXPECT_EQ(dc.download()[0], major >= 8 ? 1.0f : x)
      << "compute capability " << major << ".x: with TF32 the product must round to 1 (was "
      << "taihu built for sm_80+? see CMAKE_CUDA_ARCHITECTURES and TAIHU_VERBOSE=1)";
}

// ---------------------------------------------------------------------------------
// Device detection and argument checks: these need no GPU (nothing is launched).

TEST(SgemmCuda, DeviceAvailableAgreesWithArchQuery) {
  EXPECT_EQ(taihu::gemm_cuda::device_available(), !taihu::arch::query_gpus().devices.empty());
}

// `call` must throw taihu::Error whose message contains `needle`.
void expect_error(const std::function<void()>& call, const std::string& needle) {
  try {
    call();
    ADD_FAILURE() << "no taihu::Error thrown; expected one naming '" << needle << "'";
  } catch (const taihu::Error& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos)
        << "message '" << e.what() << "' does not name '" << needle << "'";
  }
}

TEST(SgemmCuda, BadArgumentsThrowNamingTheArgument) {
  float dummy[4] = {};
  const float* a = dummy;
  const float* b = dummy;
  float* c = dummy;
  using taihu::gemm_cuda::sgemm;
  using taihu::gemm_cuda::sgemm_reference;
  const Trans N = Trans::no, T = Trans::yes;
  expect_error([&] { sgemm(static_cast<Trans>(7), N, 2, 2, 2, 1, a, 2, b, 2, 0, c, 2); },
               "trans_a");
  expect_error([&] { sgemm(N, static_cast<Trans>(7), 2, 2, 2, 1, a, 2, b, 2, 0, c, 2); },
               "trans_b");
  expect_error([&] { sgemm(N, N, -1, 2, 2, 1, a, 2, b, 2, 0, c, 2); }, "m = -1");
  expect_error([&] { sgemm(N, N, 2, -1, 2, 1, a, 2, b, 2, 0, c, 2); }, "n = -1");
  expect_error([&] { sgemm(N, N, 2, 2, -1, 1, a, 2, b, 2, 0, c, 2); }, "k = -1");
  expect_error([&] { sgemm(N, N, 5, 2, 3, 1, a, 4, b, 3, 0, c, 5); }, "lda = 4");
  expect_error([&] { sgemm(T, N, 5, 2, 6, 1, a, 5, b, 6, 0, c, 5); }, "lda = 5");
  expect_error([&] { sgemm(N, N, 0, 2, 3, 1, a, 0, b, 3, 0, c, 1); }, "lda = 0");
  expect_error([&] { sgemm(N, N, 2, 7, 6, 1, a, 2, b, 5, 0, c, 2); }, "ldb = 5");
  expect_error([&] { sgemm(N, T, 2, 7, 6, 1, a, 2, b, 6, 0, c, 2); }, "ldb = 6");
  expect_error([&] { sgemm(N, N, 5, 2, 3, 1, a, 5, b, 3, 0, c, 4); }, "ldc = 4");
  expect_error(
      [&] { sgemm(N, N, 2, 2, 2, 1, a, 2, b, 2, 0, c, 2, nullptr, static_cast<CudaMath>(9)); },
      "math");
  expect_error([&] { sgemm(N, N, 2, 2, 2, 1, a, 2, b, 2, 0, nullptr, 2); }, "dC");
  expect_error([&] { sgemm(N, N, 2, 2, 2, 1, nullptr, 2, b, 2, 0, c, 2); }, "dA");
  expect_error([&] { sgemm(N, N, 2, 2, 2, 1, a, 2, nullptr, 2, 0, c, 2); }, "dB");
  expect_error([&] { sgemm_reference(N, N, 5, 2, 3, 1, a, 5, b, 3, 0, c, 4); }, "ldc = 4");
}

TEST(SgemmCuda, EmptyProblemsNeedNoPointersAndNoDevice) {
  // m or n == 0 returns before touching anything, as BLAS does.
  EXPECT_NO_THROW(taihu::gemm_cuda::sgemm(Trans::no, Trans::no, 0, 0, 0, 1.0f, nullptr, 1, nullptr,
                                          1, 0.0f, nullptr, 1));
  EXPECT_NO_THROW(taihu::gemm_cuda::sgemm(Trans::yes, Trans::yes, 4, 0, 3, 1.0f, nullptr, 3,
                                          nullptr, 1, 0.0f, nullptr, 4));
}

}  // namespace
