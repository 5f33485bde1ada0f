// libtaihu_caffe_python.so: loaded by taihu::caffe (dlopen) when a net has a Python
// layer and no caffe extension has installed the factory, i.e. in taihu-caffe. It
// starts an embedded interpreter (PYTHONPATH decides what it imports), releases the GIL
// for the trainer's threads, and installs create_python_layer. The interpreter lives
// until the process exits (finalising under numpy is not safe).
#include <pybind11/embed.h>

#include <cstdio>

#include "python_layer.hpp"
#include "taihu/caffe/python_layer.hpp"

extern "C" __attribute__((visibility("default"))) int taihu_caffe_python_plugin_init() {
  namespace py = pybind11;
  try {
    if (Py_IsInitialized() == 0) {
      py::initialize_interpreter(/*init_signal_handlers=*/false);
      PyEval_SaveThread();  // every Python layer call takes the GIL itself
    }
    taihu::caffe::set_python_layer_factory(&taihu::pycaffe::create_python_layer);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "taihu: embedded Python failed to start: %s\n", e.what());
    return 1;
  }
}
