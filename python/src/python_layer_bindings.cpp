// caffe._LayerBlobs (a Python layer's self.blobs) and the installation of the
// "Python" layer factory when the extension is imported.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>

#include "bindings.hpp"
#include "python_layer.hpp"
#include "taihu/caffe/python_layer.hpp"

namespace taihu::pycaffe {

void bind_python_layer(py::module_& m) {
  py::class_<LayerBlobs>(m, "_LayerBlobs", "A Python layer's parameter blobs (self.blobs)")
      .def("__len__", [](const LayerBlobs& b) { return b.layer->blobs().size(); })
      .def("__getitem__", [](const LayerBlobs& b, long i) {
        const long n = static_cast<long>(b.layer->blobs().size());
        if (i < 0) i += n;
        if (i < 0 || i >= n) throw py::index_error("layer blob index out of range");
        return b.layer->blobs()[static_cast<std::size_t>(i)];
      })
      .def("__iter__", [](const LayerBlobs& b) { return py::iter(py::cast(b.layer->blobs())); })
      .def("add_blob", [](LayerBlobs& b, const py::args& shape) {
        std::vector<int> dims;
        for (py::handle d : shape) dims.push_back(d.cast<int>());
        b.layer->blobs().push_back(std::make_shared<caffe::Blob>(dims));
      }, "add_blob(d0, d1, ...): appends a parameter blob of that shape (zeros)");
  caffe::set_python_layer_factory(&create_python_layer);
}

}  // namespace taihu::pycaffe
