// The list of built-in layers (see builtin_layers.hpp).
#include "layers/builtin_layers.hpp"

namespace taihu::caffe {

void register_builtin_layers(LayerRegistry& r) {
  register_input_layer(r);
  register_split_layer(r);
  register_data_layer(r);
  register_file_data_layer(r);
  register_convolution_layer(r);
  register_pooling_layer(r);
  register_inner_product_layer(r);
  register_activation_layers(r);
  register_dropout_layer(r);
  register_lrn_layer(r);
  register_batch_norm_layer(r);
  register_scale_layer(r);
  register_eltwise_layer(r);
  register_concat_layer(r);
  register_reshape_layers(r);
  register_softmax_layer(r);
  register_softmax_loss_layer(r);
  register_accuracy_layer(r);
  register_euclidean_loss_layer(r);
  register_lstm_layer(r);
  register_python_layer(r);
}

}  // namespace taihu::caffe
