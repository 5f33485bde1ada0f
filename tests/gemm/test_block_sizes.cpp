// The analytical block-size model (block_sizes.hpp) against hand-worked values.
#include <gtest/gtest.h>

#include "block_sizes.hpp"

namespace {

using taihu::gemm::CacheGeometry;

TEST(BlockSizes, HaswellLikeCachesGiveTheModelsValues) {
  // 32 KiB 8-way L1, 256 KiB 8-way L2, 8 MiB 16-way L3 shared by 4 cores.
  const CacheGeometry l1{32 << 10, 8, 64, 1}, l2{256 << 10, 8, 64, 1}, l3{8 << 20, 16, 64, 4};
  // 16x6 floats. L1: 4 KiB per way; A's 16-wide micro-panel gets 4 ways:
  // kc = 4 * 4096 / (16 * 4) = 256.
  const auto s = taihu::gemm::derive_block_sizes(16, 6, 4, l1, l2, l3);
  EXPECT_EQ(s.kc, 256);
  // L2: 32 KiB per way; B's block gets 4 ways: nc = 4 * 32768 / (256 * 4) = 128 -> 126.
  EXPECT_EQ(s.nc, 126);
  // L3: 2 MiB per core, A's block half of it: mc = 1 MiB / (256 * 4) = 1024.
  EXPECT_EQ(s.mc, 1024);
  // 8x6 doubles: kc = 4 * 4096 / (8 * 8) = 256; nc = 131072 / 2048 = 64 -> 60;
  // mc = 1 MiB / 2048 = 512.
  const auto d = taihu::gemm::derive_block_sizes(8, 6, 8, l1, l2, l3);
  EXPECT_EQ(d.kc, 256);
  EXPECT_EQ(d.nc, 60);
  EXPECT_EQ(d.mc, 512);
}

TEST(BlockSizes, LargeL3CapsTheABlockAtFourMiB) {
  const CacheGeometry l1{32 << 10, 8, 64, 1}, l2{512 << 10, 8, 64, 1}, l3{64 << 20, 16, 64, 1};
  const auto s = taihu::gemm::derive_block_sizes(16, 6, 4, l1, l2, l3);
  EXPECT_EQ(s.mc * s.kc * 4, 4 << 20);
}

TEST(BlockSizes, ThisMachineGivesUsableBlocks) {
  const auto b = taihu::gemm::block_sizes_for(16, 6, 4);
  EXPECT_GE(b.kc, 64);
  EXPECT_GE(b.mc, 16);
  EXPECT_GE(b.nc, 6);
}

}  // namespace
