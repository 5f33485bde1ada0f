// The standalone C++ generator: a Problem at a Schedule becomes one C++17 source file
// with OpenMP loops (`#pragma omp parallel for`, `#pragma omp simd`, GCC unroll) that
// needs nothing but a C++ compiler. The generated function is
//   extern "C" void <function>(const float* in0, ..., float* out);
// with inputs in Problem::inputs() order. Knobs it honours: algorithm, tile, order,
// vectorize, unroll, parallel, compute_at (temps are computed whole, "root"). layout
// staging and time blocking are Halide-only knobs (the C++ code runs steps in turn).
#pragma once
#include <string>

#include "taihu/autotune/problem.hpp"
#include "taihu/autotune/space.hpp"

namespace taihu::autotune {

// The compiler flags that vectorize for the dispatch ISA (arch::active_isa): on
// AVX-512 "-march=native -mprefer-vector-width=512", on AVX2 "-march=haswell ...", on
// generic "-march=x86-64". The C++ backend compiles with them; the emitted file names them.
std::string cpp_march_flags();

// threads > 0 fixes the OpenMP team size in the code (num_threads clause).
std::string emit_cpp(const Problem& p, const Schedule& s, const std::string& function, int threads = 0);

}  // namespace taihu::autotune
