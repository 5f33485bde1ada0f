// BLAS argument rules for the CUDA SGEMM entry points (see arguments.hpp).
#include "common/arguments.hpp"

#include <algorithm>
#include <string>

#include "taihu/arch/error.hpp"

namespace taihu::gemm_cuda::detail {
namespace {

[[noreturn]] void fail(const char* routine, const std::string& what) {
  throw taihu::Error(std::string(routine) + ": " + what);
}

void check_trans(const char* routine, const char* name, Trans t) {
  if (t != Trans::no && t != Trans::yes)
    fail(routine, std::string(name) + " = " + std::to_string(static_cast<int>(t)) +
                      " is not Trans::no or Trans::yes");
}

void check_size(const char* routine, const char* name, index_t v) {
  if (v < 0) fail(routine, std::string(name) + " = " + std::to_string(v) + " must be >= 0");
}

// ld must be >= max(1, rows of the matrix as it is stored).
void check_ld(const char* routine, const char* name, index_t ld, index_t rows,
              const char* rows_name, const char* matrix) {
  const index_t need = std::max<index_t>(1, rows);
  if (ld < need)
    fail(routine, std::string(name) + " = " + std::to_string(ld) + " must be >= max(1, " +
                      rows_name + ") = " + std::to_string(need) + " (" + matrix + ")");
}

}  // namespace

void check_arguments(const char* routine, Trans ta, Trans tb, index_t m, index_t n, index_t k,
                     index_t lda, index_t ldb, index_t ldc) {
  check_trans(routine, "trans_a", ta);
  check_trans(routine, "trans_b", tb);
  check_size(routine, "m", m);
  check_size(routine, "n", n);
  check_size(routine, "k", k);
  if (ta == Trans::no)
    check_ld(routine, "lda", lda, m, "m", "A is m x k, not transposed");
  else
    check_ld(routine, "lda", lda, k, "k", "A is k x m, transposed");
  if (tb == Trans::no)
    check_ld(routine, "ldb", ldb, k, "k", "B is k x n, not transposed");
  else
    check_ld(routine, "ldb", ldb, n, "n", "B is n x k, transposed");
  check_ld(routine, "ldc", ldc, m, "m", "C is m x n");
}

void check_pointers(const char* routine, index_t m, index_t n, index_t k, float alpha,
                    const float* a, const float* b, const float* c) {
  if (m == 0 || n == 0) return;
  if (c == nullptr)
    fail(routine, "dC is null but C is " + std::to_string(m) + " x " + std::to_string(n));
  if (alpha == 0.0f || k == 0) return;  // A and B are not read
  if (a == nullptr) fail(routine, "dA is null but alpha != 0 and k > 0");
  if (b == nullptr) fail(routine, "dB is null but alpha != 0 and k > 0");
}

}  // namespace taihu::gemm_cuda::detail
