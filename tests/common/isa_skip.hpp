// The one test-side answer to "can this CPU run the TAIHU_ISA level the suite was
// started with?". The libraries fall back to the best supported level on a bad
// TAIHU_ISA (so a linked application still computes), which means a test can no
// longer learn this from an exception: every ISA-parameterised test asks here and
// skips, so an avx512 run on an AVX2-only machine reports "skipped", never a pass that
// ran AVX2 code.
#pragma once
#include <cstdlib>
#include <string>

#include "taihu/arch/cpu_features.hpp"
#include "taihu/arch/isa.hpp"

namespace taihu_test {

// Non-empty (the reason to skip) when TAIHU_ISA names a level this CPU cannot run.
inline std::string isa_unavailable_reason() {
  const char* isa = std::getenv("TAIHU_ISA");
  if (isa == nullptr || *isa == 0) return {};
  if (taihu::arch::isa_supported(taihu::arch::parse_isa(isa), taihu::arch::cpu_features())) return {};
  return std::string("this CPU cannot run TAIHU_ISA=") + isa;
}

}  // namespace taihu_test

#define TAIHU_TEST_REQUIRE_ISA()                                                          \
  do {                                                                                    \
    if (const std::string reason_ = taihu_test::isa_unavailable_reason(); !reason_.empty()) \
      GTEST_SKIP() << reason_;                                                            \
  } while (0)
