// The optimized CPU kernel compiled with AVX-512F (+ AVX2, FMA); dispatch runs it only on
// CPUs that have it. The 3D acoustic order-8 line kernel is 16 floats wide
// (acoustic_o8_x86.hpp); the other kernels are the 8-wide template code.
#include "kernels/cpu/cpu_step_impl.hpp"

namespace taihu::stencil::kernels {
void cpu_step_avx512(const StepArgs& args, long j0, long j1) { cpu_step(args, j0, j1); }
void cpu_step_pair_avx512(const StepArgs& args) { cpu_step_pair(args); }
}  // namespace taihu::stencil::kernels
