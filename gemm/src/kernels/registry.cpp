// The ordered kernel list: best ISA first, portable reference last. On AVX-512 the DGEMM
// tile is the hand-scheduled inline-asm 16x14 unless TAIHU_GEMM_DGEMM_TILE picks 16x12
// (the intrinsics template), 24x8 (BLIS skx's shape, the same template) or 24x8asm /
// 24x8asmemb (the inline-asm 24x8, register / embedded broadcasts of B), and the SGEMM
// tile the 32x12 template unless TAIHU_GEMM_SGEMM_TILE picks 32x14 (the inline asm).
// 16x14pipe / 32x14pipe: the x14 asm software-pipelined; 16x14pipe is the DGEMM
// default on AMD cores.
#include <string>
#include <vector>

#include "taihu/arch/cpu_features.hpp"
#include "taihu/arch/dispatch.hpp"
#include "taihu/arch/environment.hpp"
#include "kernels/microkernel.hpp"

namespace taihu::gemm::kernels {
namespace {

// One environment-selectable tile: the value, the micro-kernel (K: MicroKernel<T> or, for
// DGEMM, the whole AVX-512 set that carries it) and its name in TAIHU_VERBOSE output.
template <class K>
struct TileChoice {
  const char* value;
  const K* kernel;
  const char* name;
};

// DGEMM: empty means 16x14 (16x14pipe on AMD, default_tile), which measured level with or ahead of 16x12 on the Xeon
// (DGEMM 2048^3 0.93 vs 0.90x MKL, bench/results/2026-11-28-xeon-dgemm-asm.md).
const TileChoice<KernelSet> kDgemmTiles[] = {
    {"16x14", &kAvx512Kernels16x14, "dgemm 16x14 asm"},
    {"16x12", &kAvx512Kernels, "dgemm 16x12"},
    {"24x8", &kAvx512Kernels24x8, "dgemm 24x8"},
    {"24x8asm", &kAvx512Kernels24x8Asm, "dgemm 24x8 asm"},
    {"24x8asmemb", &kAvx512Kernels24x8AsmEmb, "dgemm 24x8 asm embedded-broadcast"},
    {"16x14pipe", &kAvx512Kernels16x14Pipe, "dgemm 16x14 asm pipelined"},
};
// SGEMM: the first entry is the default (bench/results/2026-11-28-xeon-gemm-packing.md).
const TileChoice<MicroKernel<float>> kSgemmTiles[] = {
    {"32x12", &kAvx512Kernels.sgemm, "sgemm 32x12"},
    {"32x14", &kAvx512Sgemm32x14, "sgemm 32x14 asm"},
    {"32x14pipe", &kAvx512Sgemm32x14Pipe, "sgemm 32x14 asm pipelined"},
};

// The default tile: the first entry, but on AMD cores the pipelined DGEMM 16x14 (B as
// embedded broadcasts, A one step ahead: Zen 4 runs a 512-bit FMA as two 256-bit
// halves, so a k step has load slots to spare; DGEMM 2048^3 0.96 vs 0.95x the best
// anchor in 3 of 3 pairs, the other shapes level or ahead). The SGEMM 32x14pipe gained
// 2-3% at 2048^3 there but lost 0.91 -> 0.76 on 128x128x4096, so SGEMM keeps 32x12
// (bench/results/2026-11-28-zen4-gemm-kernel3.md).
template <class K, std::size_t N>
const TileChoice<K>& default_tile(const TileChoice<K> (&tiles)[N]) {
  static const bool amd = arch::cpu_features().amd();
  if (amd)
    for (const auto& t : tiles)
      if (std::string(t.value) == "16x14pipe") return t;
  return tiles[0];
}

template <class K, std::size_t N>
std::vector<std::string> tile_values(const TileChoice<K> (&tiles)[N]) {
  std::vector<std::string> values;
  for (const auto& t : tiles) values.emplace_back(t.value);
  return values;
}

// A bad value is reported once and the default tile is used.
const arch::EnvironmentChoice& dgemm_tile_choice() {
  static const arch::EnvironmentChoice c("TAIHU_GEMM_DGEMM_TILE", tile_values(kDgemmTiles),
                                         std::string("the ") + default_tile(kDgemmTiles).value + " tile");
  return c;
}
const arch::EnvironmentChoice& sgemm_tile_choice() {
  static const arch::EnvironmentChoice c("TAIHU_GEMM_SGEMM_TILE", tile_values(kSgemmTiles),
                                         std::string("the ") + default_tile(kSgemmTiles).value + " tile");
  return c;
}
[[maybe_unused]] const bool g_tile_checks_registered = (dgemm_tile_choice(), sgemm_tile_choice(), true);

template <class K, std::size_t N>
const TileChoice<K>& read_tile(const TileChoice<K> (&tiles)[N], const arch::EnvironmentChoice& choice) {
  const int i = choice.index();
  return i < 0 ? default_tile(tiles) : tiles[i];
}

// The AVX-512 set with the chosen tiles: the chosen DGEMM tile's set, its SGEMM entry
// replaced by the chosen SGEMM tile.
struct Avx512Choice {
  KernelSet set;
  std::string name;
};
const Avx512Choice& avx512_choice() {
  static const Avx512Choice c = [] {
    const auto& d = read_tile(kDgemmTiles, dgemm_tile_choice());
    const auto& s = read_tile(kSgemmTiles, sgemm_tile_choice());
    KernelSet set = *d.kernel;
    set.sgemm = *s.kernel;
    return Avx512Choice{set, std::string("avx512 (") + s.name + ", " + d.name + ")"};
  }();
  return c;
}

// The AVX-512 entry is a placeholder for avx512_choice() (the list holds pointers).
const arch::ImplementationList<const KernelSet*>& kernel_list() {
  static const arch::ImplementationList<const KernelSet*> list(
      "gemm kernels", {{avx512_choice().name.c_str(), arch::Isa::avx512, &avx512_choice().set},
                       {"avx2 (sgemm 16x6, dgemm 8x6)", arch::Isa::avx2, &kAvx2Kernels},
                       {"generic (sgemm 8x4, dgemm 8x4)", arch::Isa::generic, &kGenericKernels}});
  return list;
}

}  // namespace

const KernelSet& active_kernels() { return *kernel_list().chosen().impl; }
const KernelSet& kernels_for(arch::Isa level) { return *kernel_list().best_for(level).impl; }
const char* active_kernels_name() { return kernel_list().chosen().name.c_str(); }

}  // namespace taihu::gemm::kernels
