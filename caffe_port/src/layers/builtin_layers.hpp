// The built-in layer set: one registration function per layer file, all called by
// register_builtin_layers (LayerRegistry::builtin()). Private to taihu::caffe.
#pragma once
#include "taihu/caffe/layer_registry.hpp"

namespace taihu::caffe {

void register_builtin_layers(LayerRegistry& registry);

void register_input_layer(LayerRegistry& r);
void register_split_layer(LayerRegistry& r);
void register_data_layer(LayerRegistry& r);
void register_file_data_layer(LayerRegistry& r);
void register_convolution_layer(LayerRegistry& r);
void register_pooling_layer(LayerRegistry& r);
void register_inner_product_layer(LayerRegistry& r);
void register_activation_layers(LayerRegistry& r);  // ReLU, Sigmoid, TanH
void register_dropout_layer(LayerRegistry& r);
void register_lrn_layer(LayerRegistry& r);
void register_batch_norm_layer(LayerRegistry& r);
void register_scale_layer(LayerRegistry& r);
void register_eltwise_layer(LayerRegistry& r);
void register_concat_layer(LayerRegistry& r);
void register_reshape_layers(LayerRegistry& r);     // Flatten, Reshape
void register_softmax_layer(LayerRegistry& r);
void register_softmax_loss_layer(LayerRegistry& r);
void register_accuracy_layer(LayerRegistry& r);
void register_euclidean_loss_layer(LayerRegistry& r);
void register_lstm_layer(LayerRegistry& r);
void register_python_layer(LayerRegistry& r);       // python_layer.cpp: a plugin's factory

// Registers a layer class constructed from its LayerParameter.
template <class L>
void add_layer(LayerRegistry& r, const char* type) {
  r.add(type, [](const proto::LayerParameter& p) { return std::unique_ptr<Layer>(new L(p)); });
}

}  // namespace taihu::caffe
