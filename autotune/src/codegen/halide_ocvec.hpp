// A direct convolution with output channels in vector lanes, as a Halide pipeline
// (private to the Halide backend; used for a derived `ocvec` algorithm, see space.hpp
// OcvecSchedule).
//   weights: Wp[ko][c][r][s][kv] = W[ko V + kv][c][r][s] (V: the ISA's f32 lanes), zero
//            for channels >= K and padded to whole register tiles; a separate pipeline,
//            run once per weight pointer (as dnn prepacks) -- outside the timed calls.
//   main:    Y[n][k][y][x] = sum_{c,r,s} Wp[k / V][c][r][s][k % V] X[n][c][y + r + oy][x + s + ox],
//            a register tile of k_vectors x V output channels x x_tile pixels of a row,
//            one broadcast input value FMA'd into k_vectors accumulators.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "taihu/autotune/backend.hpp"

namespace taihu::autotune::halide {

// Throws taihu::Error when the problem's algorithm is not a runnable ocvec conv. Its
// parallel loops run on `threads` threads (0: the process default).
std::unique_ptr<Kernel> make_ocvec_kernel(const Problem& p, const Schedule& s, int threads);

// Ahead-of-time: <dir>/<function>_weights.{a,h} (W -> Wp, once per set of weights) and
// <dir>/<function>.{a,h} (X, Wp -> Y; no Halide runtime of its own). Wp has extents
// (V, S, R, C, K / V rounded up to the tile), innermost first. Returns the paths.
std::vector<std::string> emit_ocvec_aot(const Problem& p, const Schedule& s, const std::string& dir, const std::string& function);

}  // namespace taihu::autotune::halide
