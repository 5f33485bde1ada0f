// The packers against a naive reference: every ISA's register-transposing line packers
// (MicroKernel::pack_a_transposed for a transposed A's mr rows, pack_b_lines for a
// no-transpose B's nr columns) called directly, and pack_a / pack_b over whole blocks
// with and without them: both operand layouts, ragged last panels (every edge width and
// height below the panel width), a panel sub-range, k = 0, 1, 7, 8, 9, 37 and 216, a
// leading dimension larger than the block. The packed buffer has NaN guards after it
// (nothing written outside), and the source's elements outside the block are NaN (none
// read into the panel). Sets for ISA levels this CPU lacks are skipped.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernels/microkernel.hpp"
#include "packing.hpp"
#include "taihu/arch/cpu_features.hpp"

namespace {

using taihu::gemm::index_t;
using taihu::gemm::MatrixView;
namespace kernels = taihu::gemm::kernels;
namespace arch = taihu::arch;

const index_t kDepths[] = {0, 1, 7, 8, 9, 37, 216};
constexpr int kGuard = 64;  // NaN elements after the packed panels

struct NamedSet {
  const char* name;
  arch::Isa isa;
  const kernels::KernelSet* set;
};

std::vector<NamedSet> sets() {
  return {{"generic", arch::Isa::generic, &kernels::kGenericKernels},
          {"avx2", arch::Isa::avx2, &kernels::kAvx2Kernels},
          {"avx512 16x12", arch::Isa::avx512, &kernels::kAvx512Kernels},
          {"avx512 24x8", arch::Isa::avx512, &kernels::kAvx512Kernels24x8},
          {"avx512 16x14", arch::Isa::avx512, &kernels::kAvx512Kernels16x14}};
}

bool supported(arch::Isa isa) { return arch::isa_supported(isa, arch::cpu_features()); }

// A column-major rows x cols matrix of distinct values, NaN outside [r0, r0 + nr) x
// [c0, c0 + nc) (the block a packer may read).
template <class T>
std::vector<T> source(index_t rows, index_t cols, index_t r0, index_t nr, index_t c0, index_t nc) {
  std::vector<T> s(static_cast<size_t>(rows * cols), std::numeric_limits<T>::quiet_NaN());
  for (index_t j = c0; j < c0 + nc; ++j)
    for (index_t i = r0; i < r0 + nr; ++i) s[static_cast<size_t>(i + j * rows)] = T(1 + i + 1000 * j);
  return s;
}

template <class T>
bool same(T x, T y) {
  return x == y || (std::isnan(x) && std::isnan(y));
}

// The packer alone on one full panel: dst[p * w + i] = src[i * ld + p].
template <class T>
void check_lines_packer(const std::string& what, kernels::PackLinesFn<T> packer, int width) {
  if (packer == nullptr) return;
  const index_t ld = 230;  // > every depth, so line i starts at i * ld
  for (index_t kc : kDepths) {
    const std::vector<T> src = source<T>(ld, width, 0, kc, 0, width);
    std::vector<T> dst(static_cast<size_t>(width * kc + kGuard), std::numeric_limits<T>::quiet_NaN());
    packer(src.data(), ld, kc, dst.data());
    for (index_t p = 0; p < kc; ++p)
      for (int i = 0; i < width; ++i)
        ASSERT_EQ(dst[static_cast<size_t>(p * width + i)], src[static_cast<size_t>(p + i * ld)])
            << what << " width " << width << " kc " << kc << " at (" << i << ", " << p << ")";
    for (size_t g = static_cast<size_t>(width * kc); g < dst.size(); ++g)
      ASSERT_TRUE(std::isnan(dst[g])) << what << " kc " << kc << ": wrote past the panel";
  }
}

// pack_a or pack_b over a block of `extent` lines at offset x0, panels [lo, hi), with
// `packer` (or none), against the panel layout written out element by element.
template <class T>
void check_block(const std::string& what, bool as_b, bool lines_along_k, int width, index_t extent, index_t kc,
                 kernels::PackLinesFn<T> packer) {
  const index_t x0 = 3, p0 = 5, panels = (extent + width - 1) / width;
  // Element (x, p) of the operand: at data[p + x * ld] along k, else data[x + p * ld].
  const index_t ld = lines_along_k ? p0 + kc + 4 : x0 + extent + 4;
  const index_t other = lines_along_k ? x0 + extent : p0 + kc;
  const std::vector<T> src = lines_along_k ? source<T>(ld, other, p0, kc, x0, extent)
                                           : source<T>(ld, other, x0, extent, p0, kc);
  auto element = [&](index_t x, index_t p) {
    return lines_along_k ? src[static_cast<size_t>(p + x * ld)] : src[static_cast<size_t>(x + p * ld)];
  };
  for (index_t lo : {index_t(0), panels > 1 ? index_t(1) : index_t(0)}) {
    std::vector<T> dst(static_cast<size_t>(panels * width * kc + kGuard), std::numeric_limits<T>::quiet_NaN());
    // B's lines run along k when B is not transposed; A's when A is.
    const MatrixView<T> view{src.data(), ld, as_b ? !lines_along_k : lines_along_k};
    if (as_b)
      taihu::gemm::pack_b(view, p0, kc, x0, extent, width, dst.data(), lo, panels, packer);
    else
      taihu::gemm::pack_a(view, x0, extent, p0, kc, width, dst.data(), lo, panels, packer);
    for (index_t panel = 0; panel < panels; ++panel)
      for (index_t p = 0; p < kc; ++p)
        for (int l = 0; l < width; ++l) {
          const index_t x = panel * width + l;
          const T got = dst[static_cast<size_t>((panel * kc + p) * width + l)];
          const T want = panel < lo ? std::numeric_limits<T>::quiet_NaN() : x < extent ? element(x0 + x, p0 + p) : T(0);
          ASSERT_TRUE(same(got, want)) << what << (as_b ? " pack_b" : " pack_a") << (lines_along_k ? " along k" : " across k")
                                       << " width " << width << " extent " << extent << " kc " << kc << " panels from "
                                       << lo << " at panel " << panel << " (" << l << ", " << p << "): " << got
                                       << " want " << want;
        }
    for (size_t g = static_cast<size_t>(panels * width * kc); g < dst.size(); ++g)
      ASSERT_TRUE(std::isnan(dst[g])) << what << ": wrote past the panels";
  }
}

template <class T>
void exercise(const std::string& name, const kernels::MicroKernel<T>& uk) {
  check_lines_packer<T>(name + " pack_a_transposed", uk.pack_a_transposed, uk.mr);
  check_lines_packer<T>(name + " pack_b_lines", uk.pack_b_lines, uk.nr);
  for (bool as_b : {false, true}) {
    const int width = as_b ? uk.nr : uk.mr;
    const kernels::PackLinesFn<T> packer = as_b ? uk.pack_b_lines : uk.pack_a_transposed;
    for (bool along_k : {false, true})
      for (index_t kc : kDepths)
        // Every ragged last panel (1 .. width - 1 lines) after two full ones, and exact.
        for (index_t extent = 2 * width; extent <= 3 * width; ++extent) {
          check_block<T>(name + " isa packer", as_b, along_k, width, extent, kc, packer);
          if (::testing::Test::HasFatalFailure()) return;
          if (packer != nullptr && kc == 37) check_block<T>(name + " portable", as_b, along_k, width, extent, kc, nullptr);
          if (::testing::Test::HasFatalFailure()) return;
        }
  }
}

TEST(GemmPacking, LinePackersMatchNaiveCopy) {
  for (const auto& s : sets()) {
    if (!supported(s.isa)) continue;
    exercise<float>(std::string(s.name) + " sgemm", s.set->sgemm);
    exercise<double>(std::string(s.name) + " dgemm", s.set->dgemm);
    if (HasFatalFailure()) return;
  }
}

// The SIMD sets have packers for both operands (a set without would silently fall back
// to the portable copy, which is correct but slower).
TEST(GemmPacking, SimdSetsHaveLinePackers) {
  for (const auto& s : sets()) {
    if (s.isa == arch::Isa::generic) continue;
    EXPECT_NE(s.set->sgemm.pack_a_transposed, nullptr) << s.name;
    EXPECT_NE(s.set->sgemm.pack_b_lines, nullptr) << s.name;
    EXPECT_NE(s.set->dgemm.pack_a_transposed, nullptr) << s.name;
    EXPECT_NE(s.set->dgemm.pack_b_lines, nullptr) << s.name;
  }
}

}  // namespace
