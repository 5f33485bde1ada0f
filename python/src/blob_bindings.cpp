// caffe.Blob: a taihu::caffe::Blob seen from Python. `data` and `diff` are numpy
// float32 arrays that VIEW the blob's storage (no copy): writing `blob.data[...] = x`
// changes what the net computes with. A view stays valid until the blob is reshaped
// to a larger count (as in pycaffe: read `.data` again after reshape).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <vector>

#include "bindings.hpp"
#include "taihu/arch/error.hpp"
#include "taihu/caffe/blob.hpp"

namespace taihu::pycaffe {

namespace {

using caffe::Blob;

// A numpy view of `ptr` with the blob's shape, owned by (keeping alive) `owner`.
py::array view(Blob& blob, float* ptr, py::handle owner) {
  std::vector<py::ssize_t> shape(blob.shape().begin(), blob.shape().end());
  if (ptr == nullptr) return py::array_t<float>(shape);  // count 0: nothing to view
  return py::array_t<float>(shape, ptr, owner);
}

// Caffe's legacy 4-D accessors: axis `index` of a blob with at most 4 axes, 1 beyond.
int legacy_dim(const Blob& b, int index) {
  if (b.num_axes() > 4) {
    throw Error("blob with " + std::to_string(b.num_axes()) +
                " axes has no num/channels/height/width (use .shape)");
  }
  return index < b.num_axes() ? b.shape(index) : 1;
}

std::vector<int> shape_from_args(const py::args& args) {
  // reshape(2, 3) or reshape((2, 3)) or reshape([2, 3])
  std::vector<int> shape;
  if (args.size() == 1 && !py::isinstance<py::int_>(args[0])) {
    for (py::handle d : args[0]) shape.push_back(d.cast<int>());
  } else {
    for (py::handle d : args) shape.push_back(d.cast<int>());
  }
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] < 0) {
      throw py::value_error("reshape: dimension " + std::to_string(i) + " is " + std::to_string(shape[i]) +
                            " (dimensions must be >= 0)");
    }
  }
  return shape;
}

}  // namespace

void bind_blob(py::module_& m) {
  py::class_<Blob, std::shared_ptr<Blob>>(m, "Blob", "An N-D float32 array with its gradient (Caffe's Blob)")
      .def(py::init([](const py::args& args) { return std::make_shared<Blob>(shape_from_args(args)); }),
           "Blob(shape) or Blob(d0, d1, ...)")
      .def_property_readonly("data", [](py::object self) {
        Blob& b = self.cast<Blob&>();
        return view(b, b.mutable_data(), self);
      }, "numpy view of the values")
      .def_property_readonly("diff", [](py::object self) {
        Blob& b = self.cast<Blob&>();
        return view(b, b.mutable_diff(), self);
      }, "numpy view of the gradients")
      .def_property_readonly("shape", [](const Blob& b) { return py::tuple(py::cast(b.shape())); })
      .def_property_readonly("count", [](const Blob& b) { return b.count(); })
      .def_property_readonly("num_axes", &Blob::num_axes)
      .def_property_readonly("num", [](const Blob& b) { return legacy_dim(b, 0); })
      .def_property_readonly("channels", [](const Blob& b) { return legacy_dim(b, 1); })
      .def_property_readonly("height", [](const Blob& b) { return legacy_dim(b, 2); })
      .def_property_readonly("width", [](const Blob& b) { return legacy_dim(b, 3); })
      .def("reshape", [](Blob& b, const py::args& args) { b.reshape(shape_from_args(args)); },
           "reshape(d0, d1, ...): new shape; storage is kept while the count fits")
      .def("__repr__", [](const Blob& b) { return "<caffe.Blob " + b.shape_string() + ">"; });
}

}  // namespace taihu::pycaffe
