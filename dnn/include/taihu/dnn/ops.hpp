// taihu::dnn operators (everything but convolution): one include for all of them.
#pragma once
#include "taihu/dnn/activation.hpp"
#include "taihu/dnn/batch_norm.hpp"
#include "taihu/dnn/concat.hpp"
#include "taihu/dnn/dropout.hpp"
#include "taihu/dnn/eltwise.hpp"
#include "taihu/dnn/inner_product.hpp"
#include "taihu/dnn/lrn.hpp"
#include "taihu/dnn/lstm.hpp"
#include "taihu/dnn/ops_common.hpp"
#include "taihu/dnn/pooling.hpp"
#include "taihu/dnn/scale.hpp"
#include "taihu/dnn/softmax.hpp"
