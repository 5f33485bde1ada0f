// An installed taihu's smallest user: a 3x3 sgemm checked by hand, plus the ISA
// dispatch picked (taihu::arch). Prints "consumer: OK" and exits 0 when right.
#include <cstdio>

#include "taihu/arch/isa.hpp"
#include "taihu/gemm/gemm.hpp"

int main() {
  using namespace taihu::gemm;
  const float a[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};  // row major
  const float b[9] = {1, 0, 0, 0, 2, 0, 0, 0, 3};  // diag(1, 2, 3)
  float c[9] = {};
  sgemm(Layout::row_major, Trans::no, Trans::no, 3, 3, 3, 1.0f, a, 3, b, 3, 0.0f, c, 3);
  const float want[9] = {1, 4, 9, 4, 10, 18, 7, 16, 27};
  for (int i = 0; i < 9; ++i) {
    if (c[i] != want[i]) {
      std::printf("consumer: FAILED: c[%d] = %g, expected %g\n", i, double(c[i]), double(want[i]));
      return 1;
    }
  }
  std::printf("consumer: OK (3x3 sgemm, isa %s)\n",
              taihu::arch::isa_name(taihu::arch::active_isa()));
  return 0;
}
