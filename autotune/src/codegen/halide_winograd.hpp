// Winograd F(m x m, 3 x 3) convolution as Halide pipelines (private to the Halide
// backend; used for a derived `winograd` algorithm, see space.hpp WinogradSchedule).
//   weights: U[a][b][k / kt][c][k % kt] = (G W[k][c] G^T)[a][b] in panels of the k tile kt,
//            k padded to the k tile with zeros;
//            a separate pipeline, run once per weight pointer (as dnn/ caches its
//            transformed weights) -- outside the timed region of the tuner's repeats.
//   main:    V = B^T d B per image tile d (alpha x alpha, zero padded), the alpha^2
//            GEMMs M[a][b] = U[a][b] V[a][b] over channels (the tuned register tile, on
//            16-lane vectors where 16 divides it on AVX-512),
//            Y = A^T M A scattered back to NCHW.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "taihu/autotune/backend.hpp"

namespace taihu::autotune::halide {

// Throws taihu::Error when the problem's algorithm is not a runnable Winograd conv. Its
// parallel loops run on `threads` threads (0: the process default).
std::unique_ptr<Kernel> make_winograd_kernel(const Problem& p, const Schedule& s, int threads);

// Ahead-of-time: <dir>/<function>_weights.{a,h} (W -> U, run once per set of weights)
// and <dir>/<function>.{a,h} (X, U -> Y; no Halide runtime of its own). U has extents
// (k tile, C rounded up to 8 -- to 16 on AVX-512 where 16 divides C --, K rounded up
// to the k tile / k tile, alpha, alpha),
// innermost first: panels of k-tile output channels; the padding is zero. Returns the paths.
std::vector<std::string> emit_winograd_aot(const Problem& p, const Schedule& s, const std::string& dir,
                                           const std::string& function);

}  // namespace taihu::autotune::halide
