// Aligned buffers: alignment, ownership transfer.
#include <gtest/gtest.h>

#include <cstdint>

#include "taihu/arch/aligned_buffer.hpp"

namespace {

TEST(AlignedBuffer, AlignedAndWritable) {
  for (std::size_t align : {64u, 4096u}) {
    taihu::arch::AlignedBuffer<double> b(1000, align);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(b.data()) % align, 0u);
    for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<double>(i);
    EXPECT_EQ(b[999], 999.0);
  }
}

TEST(AlignedBuffer, MoveTransfersOwnership) {
  taihu::arch::AlignedBuffer<float> a(16);
  float* p = a.data();
  taihu::arch::AlignedBuffer<float> b(std::move(a));
  EXPECT_EQ(b.data(), p);
  EXPECT_EQ(a.data(), nullptr);
  EXPECT_EQ(a.size(), 0u);
  a = std::move(b);
  EXPECT_EQ(a.data(), p);
}

TEST(AlignedBuffer, ZeroSizeIsValid) {
  taihu::arch::AlignedBuffer<float> z(0);
  EXPECT_NE(z.data(), nullptr);
  EXPECT_EQ(z.size(), 0u);
}

}  // namespace
