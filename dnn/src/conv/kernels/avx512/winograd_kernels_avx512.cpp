// AVX-512 instantiation of the Winograd tile transforms: 16-channel blocks (see
// kernels/avx512/winograd_avx512.hpp). conv_winograd.cpp takes it for problems whose
// channel counts pad no further at 16 than at 8.
#include "conv/kernels/avx512/winograd_avx512.hpp"

namespace taihu::dnn::conv {

constinit const WinogradKernelSet winograd_kernels_avx512 = kernels::make_winograd_kernels_avx512();

}  // namespace taihu::dnn::conv
