// The analytical block-size model against hand-worked values (Low et al.).
#include <gtest/gtest.h>

#include "block_sizes.hpp"

namespace {

using taihu::gemm::CacheGeometry;

TEST(BlockSizes, HaswellLikeCachesGiveTheModelsValues) {
  // 32 KiB 8-way L1, 256 KiB 8-way L2, 8 MiB 16-way L3 shared by 4 cores; 16x6 floats.
  const CacheGeometry l1{32 << 10, 8, 64, 1}, l2{256 << 10, 8, 64, 1}, l3{8 << 20, 16, 64, 4};
  const auto b = taihu::gemm::derive_block_sizes(16, 6, 4, l1, l2, l3);
  // L1: 64 sets; C_Ar = floor(7 / (1 + 6/16)) = 5 ways -> kc = 5*64*64 / (16*4) = 320.
  EXPECT_EQ(b.kc, 320);
  // L2: 512 sets, 32 KiB per way; B's micro-panel 320*6*4 B takes 1 way; 6 ways for A:
  // mc = 6 * 32768 / (320 * 4) = 153.6 -> 144 (multiple of 16).
  EXPECT_EQ(b.mc, 144);
  // L3: 2 MiB per core, 128 KiB ways; A takes 2 ways, 13 for B: 13*131072/1280 = 1331 -> 1326.
  EXPECT_EQ(b.nc, 1326);
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
