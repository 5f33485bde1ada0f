// The ordered kernel list: best ISA first, portable reference last. On AVX-512 the DGEMM
// tile is the hand-scheduled inline-asm 16x14 unless TAIHU_GEMM_DGEMM_TILE picks 16x12
// (the intrinsics template) or 24x8 (BLIS skx's shape, the same template).
#include <cstdlib>
#include <string>

#include "taihu/arch/dispatch.hpp"
#include "taihu/arch/environment.hpp"
#include "kernels/microkernel.hpp"

namespace taihu::gemm::kernels {
namespace {

// The AVX-512 DGEMM tiles TAIHU_GEMM_DGEMM_TILE chooses between (empty: 16x14, which
// measured level with or ahead of 16x12 on the Xeon: DGEMM 2048^3 0.93 vs 0.90x MKL,
// bench/results/2026-11-28-xeon-dgemm-asm.md).
struct TileChoice {
  const char* value;      // the environment value
  const KernelSet* set;   // the AVX-512 set with that DGEMM tile
  const char* name;       // as TAIHU_VERBOSE and active_kernels_name() say it
};
const TileChoice kTiles[] = {
    {"16x14", &kAvx512Kernels16x14, "avx512 (sgemm 32x12, dgemm 16x14 asm)"},
    {"16x12", &kAvx512Kernels, "avx512 (sgemm 32x12, dgemm 16x12)"},
    {"24x8", &kAvx512Kernels24x8, "avx512 (sgemm 32x12, dgemm 24x8)"},
};

// The AVX-512 entry is the default tile, kTiles[0].
const arch::ImplementationList<const KernelSet*>& kernel_list() {
  static const arch::ImplementationList<const KernelSet*> list(
      "gemm kernels", {{kTiles[0].name, arch::Isa::avx512, kTiles[0].set},
                       {"avx2 (sgemm 16x6, dgemm 8x6)", arch::Isa::avx2, &kAvx2Kernels},
                       {"generic (sgemm 8x4, dgemm 8x4)", arch::Isa::generic, &kGenericKernels}});
  return list;
}

// nullptr: a value that names no tile.
const TileChoice* parse_dgemm_tile(const char* env) {
  if (env == nullptr || *env == '\0') return &kTiles[0];
  const std::string v(env);
  for (const auto& t : kTiles)
    if (v == t.value) return &t;
  return nullptr;
}

std::string dgemm_tile_problem() {
  const char* env = std::getenv("TAIHU_GEMM_DGEMM_TILE");
  if (parse_dgemm_tile(env) != nullptr) return {};
  return std::string("TAIHU_GEMM_DGEMM_TILE='") + env + "': use 16x14, 16x12 or 24x8";
}

[[maybe_unused]] const bool g_tile_check_registered = arch::register_environment_check(&dgemm_tile_problem);

// Read once: a bad value is reported once and 16x14 is used.
const TileChoice& dgemm_tile() {
  static const TileChoice& tile = []() -> const TileChoice& {
    const TileChoice* t = parse_dgemm_tile(std::getenv("TAIHU_GEMM_DGEMM_TILE"));
    if (t == nullptr) {
      arch::warn_environment(dgemm_tile_problem(), "the 16x14 tile");
      t = &kTiles[0];
    }
    return *t;
  }();
  return tile;
}

struct Chosen {
  const KernelSet* set;
  std::string name;
};

const Chosen& chosen() {
  static const Chosen c = [] {
    const auto& e = kernel_list().chosen();
    if (e.impl == kTiles[0].set && dgemm_tile().set != kTiles[0].set) {
      const TileChoice& t = dgemm_tile();
      arch::log_verbose("dispatch: gemm kernels -> %s (TAIHU_GEMM_DGEMM_TILE)", t.name);
      return Chosen{t.set, t.name};
    }
    return Chosen{e.impl, e.name};
  }();
  return c;
}

}  // namespace

const KernelSet& active_kernels() { return *chosen().set; }
const KernelSet& kernels_for(arch::Isa level) {
  const KernelSet* ks = kernel_list().best_for(level).impl;
  return ks == kTiles[0].set ? *dgemm_tile().set : *ks;
}
const char* active_kernels_name() { return chosen().name.c_str(); }

}  // namespace taihu::gemm::kernels
