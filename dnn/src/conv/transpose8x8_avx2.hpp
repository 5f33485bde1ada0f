// Forwarding header: the 8x8 AVX2 transpose lives in core/transpose8x8_avx2.hpp (shared
// with core/'s layout reorders, so core/ includes nothing from conv/). conv/ code finds
// taihu::dnn::transpose8x8 unqualified from namespace taihu::dnn::conv.
#pragma once
#include "core/transpose8x8_avx2.hpp"
