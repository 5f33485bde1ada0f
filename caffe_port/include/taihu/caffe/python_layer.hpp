// The "Python" layer type (python_param { module layer param_str }): a layer whose
// setup/reshape/forward/backward are methods of a user's Python class, as in pycaffe.
// taihu::caffe does not link Python. The type's factory comes at run time from whoever
// has an interpreter:
//   - the caffe Python extension (_caffe) installs it when imported, so nets built
//     from Python use the running interpreter;
//   - otherwise (taihu-caffe train) the first Python layer loads the plugin
//     libtaihu_caffe_python.so (beside libtaihu_caffe.so, or TAIHU_CAFFE_PYTHON_PLUGIN),
//     which embeds the interpreter and installs the factory.
// Without either, creating a Python layer throws taihu::Error naming the layer, its
// module and why the plugin could not be loaded.
#pragma once
#include <memory>

#include "taihu/caffe/layer.hpp"

namespace taihu::caffe {

using PythonLayerFactory = std::unique_ptr<Layer> (*)(const proto::LayerParameter& param);

// Installs (or, with nullptr, removes) the factory of the "Python" type.
void set_python_layer_factory(PythonLayerFactory factory);

}  // namespace taihu::caffe

// The plugin's entry point: installs its factory (initialising the embedded
// interpreter if none runs). Returns 0, or non-zero when Python cannot start.
extern "C" int taihu_caffe_python_plugin_init();
