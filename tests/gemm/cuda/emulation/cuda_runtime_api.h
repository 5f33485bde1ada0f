// Host stand-in for <cuda_runtime_api.h> (test_sgemm_cuda_emulated only).
#pragma once
#include "cuda_runtime.h"

typedef struct CUstream_st* cudaStream_t;
