// The optimized CPU kernel compiled for the baseline ISA (TAIHU_ISA=generic).
#include "kernels/cpu/cpu_step_impl.hpp"

namespace taihu::stencil::kernels {
void cpu_step_generic(const StepArgs& args, long j0, long j1) { cpu_step(args, j0, j1); }
void cpu_step_pair_generic(const StepArgs& args) { cpu_step_pair(args); }
}  // namespace taihu::stencil::kernels
