// taihu::gemm::sbgemm (taihu/gemm/bf16.hpp): argument checks, row major mapped onto
// column major (C^T = op(B)^T op(A)^T), the degenerate cases, and the choice of
// implementation through arch's dispatch list: vdpbf16ps where the CPU has AVX-512
// BF16 and TAIHU_ISA allows avx512, else A and B widened to fp32 (exact) and multiplied
// by taihu's SGEMM at the active ISA level.
#include <string>
#include <utility>
#include <vector>

#include "driver.hpp"
#include "level3/sbgemm.hpp"
#include "taihu/arch/cpu_features.hpp"
#include "taihu/arch/dispatch.hpp"
#include "taihu/arch/error.hpp"

namespace taihu::gemm {
namespace {

// op(X) (rows x cols) as a packed column-major fp32 matrix.
std::vector<float> widen(const bf16* x, index_t ld, bool trans, index_t rows, index_t cols) {
  std::vector<float> out(static_cast<size_t>(rows * cols));
  for (index_t j = 0; j < cols; ++j)
    for (index_t i = 0; i < rows; ++i)
      out[static_cast<size_t>(i + j * rows)] = bf16_to_float(trans ? x[j + i * ld] : x[i + j * ld]);
  return out;
}

void sbgemm_widened(const level3::Bf16Problem& p) {
  const std::vector<float> a = widen(p.a, p.lda, p.trans_a, p.m, p.k);
  const std::vector<float> b = widen(p.b, p.ldb, p.trans_b, p.k, p.n);
  sgemm(Layout::col_major, Trans::no, Trans::no, p.m, p.n, p.k, p.alpha, a.data(), p.m, b.data(),
        p.k, p.beta, p.c, p.ldc);
}

const arch::ImplementationList<level3::SbgemmFn>& implementations() {
  // The vdpbf16ps entry is listed only on CPUs with AVX-512 BF16 (an ISA level above
  // plain AVX-512 that arch's levels do not name).
  static const arch::ImplementationList<level3::SbgemmFn> list = [] {
    const arch::Implementation<level3::SbgemmFn> bf16_entry{"avx512_bf16 (vdpbf16ps, 32x12)",
                                                            arch::Isa::avx512,
                                                            &level3::sbgemm_avx512bf16};
    const arch::Implementation<level3::SbgemmFn> widened{
        "fp32 widening (bf16 -> fp32, then sgemm)", arch::Isa::generic, &sbgemm_widened};
    if (arch::cpu_features().avx512bf16)
      return arch::ImplementationList<level3::SbgemmFn>("sbgemm", {bf16_entry, widened});
    return arch::ImplementationList<level3::SbgemmFn>("sbgemm", {widened});
  }();
  return list;
}

[[noreturn]] void bad(int number, const char* name, index_t value, const std::string& rule) {
  throw Error("taihu: sbgemm: parameter " + std::to_string(number) + " (" + name + ") = " +
              std::to_string(value) + " " + rule);
}

}  // namespace

void sbgemm(Layout layout, Trans ta, Trans tb, index_t m, index_t n, index_t k, float alpha,
            const bf16* a, index_t lda, const bf16* b, index_t ldb, float beta, float* c,
            index_t ldc) {
  if (layout != Layout::row_major && layout != Layout::col_major)
    bad(1, "layout", static_cast<index_t>(layout), "is not row_major or col_major");
  if (ta != Trans::no && ta != Trans::yes)
    bad(2, "trans_a", static_cast<index_t>(ta), "is not Trans::no or Trans::yes");
  if (tb != Trans::no && tb != Trans::yes)
    bad(3, "trans_b", static_cast<index_t>(tb), "is not Trans::no or Trans::yes");
  if (m < 0) bad(4, "m", m, "must be >= 0");
  if (n < 0) bad(5, "n", n, "must be >= 0");
  if (k < 0) bad(6, "k", k, "must be >= 0");
  const bool row = layout == Layout::row_major;
  const index_t a_span = row ? (ta == Trans::no ? k : m) : (ta == Trans::no ? m : k);
  const index_t b_span = row ? (tb == Trans::no ? n : k) : (tb == Trans::no ? k : n);
  const index_t c_span = row ? n : m;
  auto need = [](int number, const char* name, index_t ld, index_t span) {
    if (ld < (span > 1 ? span : 1))
      bad(number, name, ld, "must be >= max(1, " + std::to_string(span) + ")");
  };
  need(9, "lda", lda, a_span);
  need(11, "ldb", ldb, b_span);
  need(14, "ldc", ldc, c_span);
  if (m == 0 || n == 0) return;
  if (c == nullptr) throw Error("taihu: sbgemm: parameter 13 (c) is null");
  const bool reads_ab = k > 0 && alpha != 0.0f;
  if (reads_ab && (a == nullptr || b == nullptr))
    throw Error(std::string("taihu: sbgemm: parameter ") + (a ? "10 (b)" : "8 (a)") + " is null");
  if (row) {
    std::swap(m, n), std::swap(a, b), std::swap(lda, ldb), std::swap(ta, tb);
  }
  if (!reads_ab) {
    scale_c(m, n, beta, c, ldc);
    return;
  }
  level3::Bf16Problem p;
  p.m = m, p.n = n, p.k = k, p.alpha = alpha, p.beta = beta;
  p.a = a, p.lda = lda, p.trans_a = ta == Trans::yes;
  p.b = b, p.ldb = ldb, p.trans_b = tb == Trans::yes;
  p.c = c, p.ldc = ldc;
  implementations().chosen().impl(p);
}

const char* sbgemm_kernel_name() { return implementations().chosen().name.c_str(); }

}  // namespace taihu::gemm
