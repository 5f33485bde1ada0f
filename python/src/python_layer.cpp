// The "Python" layer (see python_layer.hpp) and, in the extension, its bindings
// (caffe._LayerBlobs) and factory installation.
#include "python_layer.hpp"

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <vector>

#include "taihu/caffe/python_layer.hpp"

namespace taihu::pycaffe {

namespace py = pybind11;

namespace {

using caffe::Blob;
using caffe::BlobVec;
using caffe::Layer;
namespace proto = caffe::proto;

// "ValueError: message" plus the traceback's last lines, from the active Python error.
[[noreturn]] void rethrow_python(const py::error_already_set& e, const std::string& where) {
  std::string type = "Exception";
  if (e.type()) type = py::str(e.type().attr("__name__")).cast<std::string>();
  throw PythonLayerError(where + type + ": " + py::str(e.value()).cast<std::string>(), type);
}

py::list blob_list(const BlobVec& blobs) {
  py::list l;
  for (Blob* b : blobs) l.append(py::cast(b, py::return_value_policy::reference));
  return l;
}

class PythonLayer final : public Layer {
 public:
  PythonLayer(const proto::LayerParameter& param, py::object self) : Layer(param), self_(std::move(self)) {}
  ~PythonLayer() override {
    if (Py_IsInitialized() == 0) {  // the interpreter is gone: nothing to release
      self_.release();
      return;
    }
    py::gil_scoped_acquire gil;
    self_ = py::object();
  }

  const char* type() const override { return "Python"; }

  void layer_setup(const BlobVec& bottom, const BlobVec& top) override {
    py::gil_scoped_acquire gil;
    try {
      self_.attr("phase") = py::cast(phase());
      self_.attr("setup")(blob_list(bottom), blob_list(top));
    } catch (py::error_already_set& e) {
      rethrow_python(e, where() + method("setup"));
    }
  }
  void reshape(const BlobVec& bottom, const BlobVec& top) override { call("reshape", bottom, top); }
  void forward(const BlobVec& bottom, const BlobVec& top) override {
    // Caffe reshapes a layer before each forward; Python layers rely on it.
    call("reshape", bottom, top);
    call("forward", bottom, top);
  }
  void backward(const BlobVec& top, const std::vector<bool>& propagate_down, const BlobVec& bottom) override {
    py::gil_scoped_acquire gil;
    try {
      py::list down;
      for (bool d : propagate_down) down.append(py::bool_(d));
      self_.attr("backward")(blob_list(top), down, blob_list(bottom));
    } catch (py::error_already_set& e) {
      rethrow_python(e, where() + method("backward"));
    }
  }

 private:
  std::string method(const char* name) const {
    return param().python_param().module() + "." + param().python_param().layer() + "." + name + "() raised ";
  }
  void call(const char* name, const BlobVec& bottom, const BlobVec& top) {
    py::gil_scoped_acquire gil;
    try {
      self_.attr(name)(blob_list(bottom), blob_list(top));
    } catch (py::error_already_set& e) {
      rethrow_python(e, where() + method(name));
    }
  }

  py::object self_;
};

}  // namespace

std::unique_ptr<Layer> create_python_layer(const proto::LayerParameter& param) {
  const auto& pp = param.python_param();
  const std::string where = "layer " + param.name() + " (Python): ";
  if (pp.module().empty() || pp.layer().empty()) {
    throw Error(where + "python_param { module: ... layer: ... } is required");
  }
  py::gil_scoped_acquire gil;
  try {
    // The caffe package registers Blob and Phase; a layer's module imports it too.
    py::module_::import("caffe");
  } catch (py::error_already_set& e) {
    rethrow_python(e, where + "the caffe package is not importable (put build/python on PYTHONPATH): ");
  }
  py::object cls;
  try {
    cls = py::module_::import(pp.module().c_str()).attr(pp.layer().c_str());
  } catch (py::error_already_set& e) {
    rethrow_python(e, where + "cannot load " + pp.module() + "." + pp.layer() + ": ");
  }
  std::unique_ptr<Layer> layer;
  try {
    py::object self = cls();
    self.attr("param_str") = py::str(pp.param_str());
    layer = std::make_unique<PythonLayer>(param, self);
    self.attr("blobs") = py::cast(LayerBlobs{layer.get()});
  } catch (py::error_already_set& e) {
    rethrow_python(e, where + pp.module() + "." + pp.layer() + "() raised ");
  }
  return layer;
}

}  // namespace taihu::pycaffe
