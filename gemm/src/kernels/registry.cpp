// The ordered kernel list: best ISA first, portable reference last. On AVX-512 the DGEMM
// tile is 16x12 unless TAIHU_GEMM_DGEMM_TILE=24x8 picks BLIS skx's shape.
#include <cstdlib>
#include <string>

#include "taihu/arch/dispatch.hpp"
#include "taihu/arch/environment.hpp"
#include "kernels/microkernel.hpp"

namespace taihu::gemm::kernels {
namespace {

const arch::ImplementationList<const KernelSet*>& kernel_list() {
  static const arch::ImplementationList<const KernelSet*> list(
      "gemm kernels", {{"avx512 (sgemm 32x12, dgemm 16x12)", arch::Isa::avx512, &kAvx512Kernels},
                       {"avx2 (sgemm 16x6, dgemm 8x6)", arch::Isa::avx2, &kAvx2Kernels},
                       {"generic (sgemm 8x4, dgemm 8x4)", arch::Isa::generic, &kGenericKernels}});
  return list;
}

// TAIHU_GEMM_DGEMM_TILE=16x12|24x8 (empty: 16x12); true for 24x8.
bool parse_dgemm_tile(const char* env, bool& tile_24x8) {
  tile_24x8 = false;
  if (env == nullptr || *env == '\0') return true;
  const std::string v(env);
  if (v == "24x8") tile_24x8 = true;
  else if (v != "16x12") return false;
  return true;
}

std::string dgemm_tile_problem() {
  const char* env = std::getenv("TAIHU_GEMM_DGEMM_TILE");
  bool t;
  if (parse_dgemm_tile(env, t)) return {};
  return std::string("TAIHU_GEMM_DGEMM_TILE='") + env + "': use 16x12 or 24x8";
}

[[maybe_unused]] const bool g_tile_check_registered = arch::register_environment_check(&dgemm_tile_problem);

// Read once: a bad value is reported once and 16x12 is used.
bool dgemm_tile_24x8() {
  static const bool on = [] {
    bool t;
    if (!parse_dgemm_tile(std::getenv("TAIHU_GEMM_DGEMM_TILE"), t))
      arch::warn_environment(dgemm_tile_problem(), "the 16x12 tile");
    return t;
  }();
  return on;
}

struct Chosen {
  const KernelSet* set;
  std::string name;
};

const Chosen& chosen() {
  static const Chosen c = [] {
    const auto& e = kernel_list().chosen();
    if (e.impl == &kAvx512Kernels && dgemm_tile_24x8()) {
      arch::log_verbose("dispatch: gemm kernels -> avx512 (sgemm 32x12, dgemm 24x8) (TAIHU_GEMM_DGEMM_TILE)");
      return Chosen{&kAvx512Kernels24x8, "avx512 (sgemm 32x12, dgemm 24x8)"};
    }
    return Chosen{e.impl, e.name};
  }();
  return c;
}

}  // namespace

const KernelSet& active_kernels() { return *chosen().set; }
const KernelSet& kernels_for(arch::Isa level) {
  const KernelSet* ks = kernel_list().best_for(level).impl;
  return ks == &kAvx512Kernels && dgemm_tile_24x8() ? kAvx512Kernels24x8 : *ks;
}
const char* active_kernels_name() { return chosen().name.c_str(); }

}  // namespace taihu::gemm::kernels
