// The two integer ABIs libtaihu_blas.so exports every BLAS routine in:
//   LP64   32-bit int sizes, the reference names (sgemm_, cblas_sgemm, xerbla_)
//   ILP64  64-bit integer sizes, OpenBLAS's INTERFACE64=1 SYMBOLSUFFIX=64_ names: the
//          LP64 name followed by "64_" (sgemm_64_, cblas_sgemm64_, xerbla_64_), which
//          are also Reference-LAPACK's ILP64 Fortran names (BUILD_INDEX64_EXT_API)
// Each ABI source writes its extern "C" definitions once, as a macro over (Int, NAME),
// and instantiates it with (int, TAIHU_BLAS_LP64_NAME) and (std::int64_t,
// TAIHU_BLAS_ILP64_NAME); the bodies are templates over Int, and every argument check
// works on 64-bit values (gemm_arg_checks.hpp), so both ABIs share one implementation.
#pragma once
#include <cstdint>
#include <type_traits>

#define TAIHU_BLAS_LP64_NAME(name) name
#define TAIHU_BLAS_ILP64_NAME(name) name##64_

namespace taihu::blas {

enum class Abi { lp64, ilp64 };

// The ABI whose integers are Int (int or std::int64_t).
template <typename Int>
inline constexpr Abi abi_of = std::is_same_v<Int, std::int64_t> ? Abi::ilp64 : Abi::lp64;

static_assert(sizeof(int) == 4, "LP64 BLAS integers are 32-bit");

}  // namespace taihu::blas
