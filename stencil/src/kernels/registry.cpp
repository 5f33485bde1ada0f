// The ordered list of optimized CPU kernels: best ISA first, portable build last.
#include "kernels/kernel_api.hpp"
#include "taihu/arch/dispatch.hpp"

namespace taihu::stencil::kernels {
namespace {
const arch::ImplementationList<StepFn>& step_list() {
  static const arch::ImplementationList<StepFn> list(
      "stencil time step", {{"avx512 (16-wide hand-written order-8 acoustic, 8-wide template kernels, y slabs streamed)",
                             arch::Isa::avx512, &cpu_step_avx512},
                            {"avx2 (8-wide fma, y slabs streamed)", arch::Isa::avx2, &cpu_step_avx2},
                            {"generic (4-wide vectors, y slabs streamed)", arch::Isa::generic, &cpu_step_generic}});
  return list;
}
const arch::ImplementationList<PairFn>& pair_list() {
  static const arch::ImplementationList<PairFn> list(
      "stencil temporal-blocked step pair", {{"avx512 (2-step wavefront, slab flags)", arch::Isa::avx512, &cpu_step_pair_avx512},
                                             {"avx2 (2-step wavefront, slab flags)", arch::Isa::avx2, &cpu_step_pair_avx2},
                                             {"generic (2-step wavefront, slab flags)", arch::Isa::generic, &cpu_step_pair_generic}});
  return list;
}
}  // namespace

PairFn optimized_step_pair() { return pair_list().chosen().impl; }

StepFn optimized_step() { return step_list().chosen().impl; }
const char* optimized_step_name() { return step_list().chosen().name.c_str(); }

}  // namespace taihu::stencil::kernels
