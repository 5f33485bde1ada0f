// The ISA selection rule and the ordered implementation lists.
#include <gtest/gtest.h>

#include "taihu/arch/dispatch.hpp"
#include "taihu/arch/error.hpp"
#include "taihu/arch/isa.hpp"

namespace {

using taihu::arch::CpuFeatures;
using taihu::arch::Isa;

CpuFeatures cpu_with(Isa level) {
  CpuFeatures f;
  f.vendor = "TestVendor";
  f.model_name = "Test CPU";
  f.sse42 = true;
  if (level >= Isa::avx2) f.avx = f.fma = f.avx2 = f.os_saves_ymm = true;
  if (level >= Isa::avx512)
    f.avx512f = f.avx512bw = f.avx512vl = f.avx512dq = f.os_saves_zmm = true;
  return f;
}

TEST(Isa, ParseKnownNames) {
  EXPECT_EQ(taihu::arch::parse_isa("generic"), Isa::generic);
  EXPECT_EQ(taihu::arch::parse_isa("avx2"), Isa::avx2);
  EXPECT_EQ(taihu::arch::parse_isa("avx512"), Isa::avx512);
}

TEST(Isa, UnknownNameIsAClearError) {
  try {
    taihu::arch::parse_isa("sse9");
    FAIL() << "no error";
  } catch (const taihu::Error& e) {
    EXPECT_NE(std::string(e.what()).find("'sse9'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("generic, avx2, avx512"), std::string::npos);
  }
}

TEST(Isa, DefaultIsTheBestSupported) {
  for (Isa level : {Isa::generic, Isa::avx2, Isa::avx512})
    EXPECT_EQ(taihu::arch::select_isa(cpu_with(level), std::nullopt).isa, level);
  EXPECT_EQ(taihu::arch::select_isa(cpu_with(Isa::avx512), std::string("")).isa, Isa::avx512);
}

TEST(Isa, ForcingALowerLevelWorks) {
  const auto cpu = cpu_with(Isa::avx512);
  EXPECT_EQ(taihu::arch::select_isa(cpu, std::string("generic")).isa, Isa::generic);
  EXPECT_EQ(taihu::arch::select_isa(cpu, std::string("avx2")).isa, Isa::avx2);
}

TEST(Isa, ForcingAnUnsupportedLevelNamesWhatIsMissing) {
  try {
    taihu::arch::select_isa(cpu_with(Isa::avx2), std::string("avx512"));
    FAIL() << "no error";
  } catch (const taihu::Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("AVX-512F"), std::string::npos) << msg;
    EXPECT_NE(msg.find("best level here is avx2"), std::string::npos) << msg;
  }
}

TEST(Isa, OsWithoutZmmStateDisablesAvx512) {
  auto cpu = cpu_with(Isa::avx512);
  cpu.os_saves_zmm = false;
  EXPECT_EQ(taihu::arch::best_supported_isa(cpu), Isa::avx2);
}

TEST(Isa, ActiveIsaIsSupportedHere) {
  EXPECT_TRUE(taihu::arch::isa_supported(taihu::arch::active_isa(), taihu::arch::cpu_features()));
}

using Fn = int (*)();
int f512() { return 512; }
int f2() { return 2; }
int fg() { return 0; }

TEST(ImplementationList, PicksTheFirstEntryAtOrBelowTheLevel) {
  const taihu::arch::ImplementationList<Fn> list(
      "test family", {{"avx512_x", Isa::avx512, &f512}, {"avx2_x", Isa::avx2, &f2},
                      {"generic_x", Isa::generic, &fg}});
  EXPECT_EQ(list.best_for(Isa::avx512).impl(), 512);
  EXPECT_EQ(list.best_for(Isa::avx2).impl(), 2);
  EXPECT_EQ(list.best_for(Isa::generic).impl(), 0);
  EXPECT_EQ(list.best_for(Isa::generic).name, "generic_x");
  EXPECT_EQ(&list.chosen(), &list.best_for(taihu::arch::active_isa()));
}

TEST(ImplementationList, MissingReferenceIsAnError) {
  const taihu::arch::ImplementationList<Fn> list("no reference", {{"avx2_x", Isa::avx2, &f2}});
  EXPECT_THROW(list.best_for(Isa::generic), taihu::Error);
}

}  // namespace
