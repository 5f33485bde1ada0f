// The instruction-set levels taihu's kernels are written for, and the one rule that
// picks which level runs: the best the CPU and OS support, unless TAIHU_ISA caps it.
//   TAIHU_ISA=generic  portable C++ kernels only
//   TAIHU_ISA=avx2     AVX2 + FMA kernels
//   TAIHU_ISA=avx512   AVX-512 F/BW/VL/DQ kernels
// An unknown name, or a level the CPU cannot run, is reported once on stderr and the
// best supported level runs (environment.hpp); the tools reject it at start-up.
#pragma once
#include <optional>
#include <string>
#include <string_view>

#include "taihu/arch/cpu_features.hpp"

namespace taihu::arch {

enum class Isa { generic = 0, avx2 = 1, avx512 = 2 };

const char* isa_name(Isa isa);

// Parses "generic" | "avx2" | "avx512"; throws taihu::Error naming the bad value.
Isa parse_isa(std::string_view text);

// Whether the CPU (and OS) can run kernels of this level.
bool isa_supported(Isa isa, const CpuFeatures& cpu);

// The best level the CPU supports.
Isa best_supported_isa(const CpuFeatures& cpu);

struct IsaChoice {
  Isa isa = Isa::generic;
  std::string reason;  // human-readable: why this level, for TAIHU_VERBOSE
};

// Pure decision function (tested directly): `requested` is TAIHU_ISA's value if set.
// Throws taihu::Error for an unknown value or a level the CPU cannot run.
IsaChoice select_isa(const CpuFeatures& cpu, const std::optional<std::string>& requested);

// The level in force for this process: select_isa(cpu_features(), $TAIHU_ISA),
// decided once. Never throws: where select_isa would, the problem is reported once on
// stderr and the best level the CPU supports is used.
Isa active_isa();

}  // namespace taihu::arch
