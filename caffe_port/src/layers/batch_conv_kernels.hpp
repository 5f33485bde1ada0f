// ISA-specific kernels of BatchConv (batch_conv.hpp), compiled with their ISA's flags
// (batch_conv_<isa>.cpp); BatchConv calls them only when taihu::arch::active_isa()
// allows (TAIHU_ISA=generic turns them off).
#pragma once
#include <cstdint>

namespace taihu::caffe::kernels {

// dw[k][r] (leading dimension rows) += sum over p < depth of dy[k * ld + p] *
// col[r * ld + p], for k < kg, r < rows.
void backward_weights_small_avx2(const float* dy, const float* col, std::int64_t kg, std::int64_t rows,
                                 std::int64_t depth, std::int64_t ld, float* dw);

}  // namespace taihu::caffe::kernels
