// The AVX-512 Winograd kernel set (16-channel blocks: transforms, channel GEMMs and row
// scatter/gather, dnn/src/conv/kernels/avx512/winograd_avx512.hpp) on any x86 CPU, its
// intrinsics through SIMDe's emulation, against the double definitions of
// winograd_kernel_check.hpp. On AVX-512 CPUs the real instructions are checked by
// test_dnn_conv (WinogradKernels.*) and every Winograd test under TAIHU_ISA=avx512.
#include <immintrin.h>
#define SIMDE_ENABLE_NATIVE_ALIASES
#include <simde/x86/avx512.h>

#include <gtest/gtest.h>

#include "conv/kernels/avx512/winograd_avx512.hpp"
#include "winograd_kernel_check.hpp"

namespace {

TEST(DnnConvAvx512Emulated, WinogradTransformsMatchTheDefinition) {
  winograd_kernel_check::transforms_match_definition(taihu::dnn::conv::kernels::make_winograd_kernels_avx512());
}

TEST(DnnConvAvx512Emulated, WinogradChannelGemmMatchesTheDefinition) {
  winograd_kernel_check::gemm_matches_definition(taihu::dnn::conv::kernels::make_winograd_kernels_avx512());
}

TEST(DnnConvAvx512Emulated, WinogradWeightGemmMatchesTheDefinition) {
  winograd_kernel_check::weight_gemm_matches_definition(taihu::dnn::conv::kernels::make_winograd_kernels_avx512());
}

TEST(DnnConvAvx512Emulated, WinogradRowScatterGatherMatchTheDefinition) {
  winograd_kernel_check::rows_match_definition(taihu::dnn::conv::kernels::make_winograd_kernels_avx512());
  winograd_kernel_check::streaming_scatter_matches_definition(taihu::dnn::conv::kernels::make_winograd_kernels_avx512());
}

}  // namespace
