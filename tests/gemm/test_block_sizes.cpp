// The analytical block-size model against hand-worked values (Low et al.).
#include <gtest/gtest.h>

#include "block_sizes.hpp"

namespace {

using taihu::gemm::CacheGeometry;

TEST(BlockSizes, HaswellLikeCachesGiveTheModelsValues) {
  // 32 KiB 8-way L1, 256 KiB 8-way L2, 8 MiB 16-way L3 shared by 4 cores; 16x6 floats.
  const CacheGeometry l1{32 << 10, 8, 64, 1}, l2{256 << 10, 8, 64, 1}, l3{8 << 20, 16, 64, 4};
  const auto b = taihu::gemm::derive_block_sizes(16, 6, 4, l1, l2, l3);
  // L1: 4 KiB per way; B's micro-panel gets 8/2 - 1 = 3 ways -> kc = 3*4096 / (6*4) = 512.
  EXPECT_EQ(b.kc, 512);
  // L2: 32 KiB per way; A's block gets half the ways: mc = 4 * 32768 / (512*4) = 64.
  EXPECT_EQ(b.mc, 64);
  // L3: 2 MiB per core, 128 KiB ways; A takes 1 way, 14 for B: 14*131072/2048 = 896 -> 894.
  EXPECT_EQ(b.nc, 894);
  EXPECT_EQ(b.mc % 16, 0);
  EXPECT_EQ(b.nc % 6, 0);
}

TEST(BlockSizes, ThisMachineGivesUsableBlocks) {
  const auto b = taihu::gemm::block_sizes_for(16, 6, 4);
  EXPECT_GE(b.kc, 64);
  EXPECT_GE(b.mc, 16);
  EXPECT_GE(b.nc, 6);
}

}  // namespace
