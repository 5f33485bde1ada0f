// The "Python" layer on a live interpreter, shared by the _caffe extension (the
// interpreter that imported caffe) and the embedding plugin (taihu-caffe).
// create_python_layer imports python_param.module, instantiates its class `layer`,
// sets param_str, phase and blobs, and wraps it in a taihu::caffe::Layer whose
// setup/reshape/forward/backward call the object's methods with lists of caffe.Blob,
// holding the GIL only while Python runs. A Python exception becomes a
// PythonLayerError naming the layer, the method and the Python error.
#pragma once
#include <memory>
#include <string>

#include "taihu/arch/error.hpp"
#include "taihu/caffe/layer.hpp"

namespace taihu::pycaffe {

// taihu::Error from Python code; `python_type` is the exception's class name
// ("ImportError", "ValueError", ...) so the extension can re-raise that type.
class PythonLayerError : public Error {
 public:
  PythonLayerError(const std::string& what, std::string python_type)
      : Error(what), python_type_(std::move(python_type)) {}
  const std::string& python_type() const { return python_type_; }

 private:
  std::string python_type_;
};

// The layer's parameter blobs as Python sees them (self.blobs): len, [i], add_blob.
struct LayerBlobs {
  caffe::Layer* layer;
};

std::unique_ptr<caffe::Layer> create_python_layer(const caffe::proto::LayerParameter& param);

}  // namespace taihu::pycaffe
