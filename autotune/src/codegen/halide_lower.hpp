// Lowering a Problem to a Halide pipeline and applying a Schedule to it (private to
// the Halide backend). Only compiled when TAIHU_HAVE_HALIDE.
#pragma once
#include <Halide.h>

#include <map>
#include <string>
#include <vector>

#include "taihu/autotune/problem.hpp"
#include "taihu/autotune/space.hpp"

namespace taihu::autotune::halide {

struct Lowered {
  std::vector<Halide::ImageParam> inputs;  // Problem::inputs() order
  Halide::Func output;
  Halide::Pipeline pipeline;
};

// schedule == nullptr: no schedule, with estimates set so an autoscheduler can run on
// the result; for_default additionally computes reductions at root (Halide cannot
// inline them), which makes it runnable as Halide's "default schedule".
Lowered lower(const Problem& p, int algorithm, const Schedule* schedule, int threads, bool for_default = false);

Halide::Target target_for_this_cpu();

}  // namespace taihu::autotune::halide
