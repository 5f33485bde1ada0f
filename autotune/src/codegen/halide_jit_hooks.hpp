// Pieces shared by the hand-structured Halide kernels (Winograd, ocvec; private to the
// Halide backend): the JIT allocator and parallel-loop hooks, dense buffer shapes.
//   cached_malloc / cached_free: a block cache behind Halide's per-run allocations.
//   pool_do_par_for: parallel loops on autotune's task pool (task_pool.hpp).
//   install_jit_hooks(pipeline): sets the three on a pipeline before compile_jit.
#pragma once
#include <Halide.h>

#include <cstdint>
#include <vector>

namespace taihu::autotune::halide {

inline std::int64_t round_up(std::int64_t v, std::int64_t to) { return (v + to - 1) / to * to; }

void* cached_malloc(Halide::JITUserContext*, std::size_t size);
void cached_free(Halide::JITUserContext*, void* p);
int pool_do_par_for(Halide::JITUserContext* ctx, int (*task)(Halide::JITUserContext*, int, std::uint8_t*), int min, int extent,
                    std::uint8_t* closure);
void install_jit_hooks(Halide::Pipeline& pipeline);

// Declares p dense with these extents (innermost first), min 0.
void set_dense(Halide::OutputImageParam p, const std::vector<int>& extents);

}  // namespace taihu::autotune::halide
