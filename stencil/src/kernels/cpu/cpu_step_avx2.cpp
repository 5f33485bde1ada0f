// The optimized CPU kernel compiled with AVX2 + FMA (8 floats per vector); dispatch
// runs it only on CPUs that have them.
#include "kernels/cpu/cpu_step_impl.hpp"

namespace taihu::stencil::kernels {
void cpu_step_avx2(const StepArgs& args, long j0, long j1) { cpu_step(args, j0, j1); }
void cpu_step_pair_avx2(const StepArgs& args) { cpu_step_pair(args); }
}  // namespace taihu::stencil::kernels
