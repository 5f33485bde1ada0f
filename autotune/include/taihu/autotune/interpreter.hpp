// The reference: a direct interpreter of a Problem's statements in double precision.
// Slow and obviously right; every generated candidate is checked against it.
// Accesses outside a tensor read 0 (boundary zero), the clamped element (boundary
// clamp), or throw taihu::Error naming the access (no boundary).
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "taihu/autotune/problem.hpp"

namespace taihu::autotune {

using TensorMap = std::map<std::string, std::vector<float>>;

// Runs `algorithm` (index into the spec's compute blocks), all steps; returns the output.
std::vector<float> interpret(const Problem& p, int algorithm, const TensorMap& inputs);

// The output at selected flat indices only, evaluated on demand (temps and earlier
// steps are computed, memoized, only where the selected points need them). This is
// how candidates are checked at full size: a few hundred points cost milliseconds.
std::vector<double> interpret_points(const Problem& p, int algorithm, const TensorMap& inputs,
                                     const std::vector<std::int64_t>& points);

// `count` distinct flat output indices spread over the output (seeded), always
// including the first and the last element.
std::vector<std::int64_t> sample_points(const Problem& p, std::size_t count, std::uint64_t seed);

// Inputs filled with uniform values in [-1, 1] from `seed` (same seed, same data).
TensorMap random_inputs(const Problem& p, std::uint64_t seed);

struct Agreement {
  bool ok = true;
  double max_error = 0;  // max |got - want| / (1 + |want|)
  std::int64_t worst = -1;
  std::string message;   // "" when ok
};
// Relative+absolute comparison; NaN anywhere fails.
Agreement compare_outputs(const std::vector<float>& got, const std::vector<float>& want, double tolerance);

// A tolerance for the problem: grows with the longest reduction (float rounding).
double default_tolerance(const Problem& p, int algorithm);

}  // namespace taihu::autotune
