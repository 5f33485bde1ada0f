// The ISA selection rule (see isa.hpp) and TAIHU_ISA parsing.
#include "taihu/arch/isa.hpp"

#include <cstdlib>
#include <mutex>

#include "taihu/arch/environment.hpp"
#include "taihu/arch/error.hpp"
#include "taihu/arch/log.hpp"

namespace taihu::arch {

const char* isa_name(Isa isa) {
  switch (isa) {
    case Isa::generic: return "generic";
    case Isa::avx2: return "avx2";
    case Isa::avx512: return "avx512";
  }
  return "unknown";
}

Isa parse_isa(std::string_view text) {
  if (text == "generic") return Isa::generic;
  if (text == "avx2") return Isa::avx2;
  if (text == "avx512") return Isa::avx512;
  throw Error("taihu: TAIHU_ISA='" + std::string(text) +
              "' is not a known ISA level; use one of generic, avx2, avx512");
}

bool isa_supported(Isa isa, const CpuFeatures& cpu) {
  switch (isa) {
    case Isa::generic: return true;
    case Isa::avx2: return cpu.avx2 && cpu.fma && cpu.os_saves_ymm;
    case Isa::avx512:
      return cpu.avx512f && cpu.avx512bw && cpu.avx512vl && cpu.avx512dq && cpu.os_saves_zmm &&
             isa_supported(Isa::avx2, cpu);
  }
  return false;
}

Isa best_supported_isa(const CpuFeatures& cpu) {
  if (isa_supported(Isa::avx512, cpu)) return Isa::avx512;
  if (isa_supported(Isa::avx2, cpu)) return Isa::avx2;
  return Isa::generic;
}

namespace {
std::string missing_features(Isa isa, const CpuFeatures& cpu) {
  std::string m;
  auto need = [&m](bool ok, const char* name) {
    if (ok) return;
    if (!m.empty()) m += ", ";
    m += name;
  };
  need(cpu.avx2, "AVX2");
  need(cpu.fma, "FMA");
  need(cpu.os_saves_ymm, "OS support for YMM state");
  if (isa == Isa::avx512) {
    need(cpu.avx512f, "AVX-512F");
    need(cpu.avx512bw, "AVX-512BW");
    need(cpu.avx512vl, "AVX-512VL");
    need(cpu.avx512dq, "AVX-512DQ");
    need(cpu.os_saves_zmm, "OS support for ZMM state");
  }
  return m;
}
}  // namespace

IsaChoice select_isa(const CpuFeatures& cpu, const std::optional<std::string>& requested) {
  const Isa best = best_supported_isa(cpu);
  if (!requested || requested->empty())
    return {best, std::string("best the CPU supports (TAIHU_ISA unset)")};
  const Isa want = parse_isa(*requested);
  if (!isa_supported(want, cpu))
    throw Error("taihu: TAIHU_ISA=" + *requested + " was requested but this CPU (" +
                (cpu.model_name.empty() ? cpu.vendor : cpu.model_name) +
                ") cannot run it: missing " + missing_features(want, cpu) +
                "; the best level here is " + isa_name(best));
  return {want, "forced by TAIHU_ISA=" + *requested + " (best supported: " + isa_name(best) + ")"};
}

namespace {

// The strict check: the problem with TAIHU_ISA for this CPU, or "".
std::string isa_environment_problem() {
  const char* env = std::getenv("TAIHU_ISA");
  try {
    select_isa(cpu_features(), env ? std::optional<std::string>(env) : std::nullopt);
  } catch (const Error& e) {
    return e.what();
  }
  return {};
}

[[maybe_unused]] const bool g_check_registered =
    register_environment_check(&isa_environment_problem);

}  // namespace

Isa active_isa() {
  static const Isa isa = [] {
    const char* env = std::getenv("TAIHU_ISA");
    IsaChoice choice;
    try {
      choice = select_isa(cpu_features(), env ? std::optional<std::string>(env) : std::nullopt);
    } catch (const Error& e) {
      // An unknown name or a level this CPU cannot run: the best level it can.
      choice = select_isa(cpu_features(), std::nullopt);
      warn_environment(e.what(), std::string(isa_name(choice.isa)) +
                                     " (the best level this CPU supports)");
    }
    log_verbose("isa: %s, %s", isa_name(choice.isa), choice.reason.c_str());
    return choice.isa;
  }();
  return isa;
}

}  // namespace taihu::arch
