// _caffe: the compiled core of the `caffe` Python package (pycaffe's API on
// taihu::caffe). The package's __init__.py re-exports it and adds pycaffe's Python
// conveniences (pycaffe.py). This file: the module, error translation, CPU/GPU modes.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "bindings.hpp"
#include "python_layer.hpp"
#include "taihu/arch/error.hpp"
#include "taihu/caffe/layer_registry.hpp"
#include "taihu/caffe/proto.hpp"
#include "taihu/caffe/rng.hpp"
#include "taihu/caffe/solver.hpp"

namespace taihu::pycaffe {

void require_readable(const std::string& path, const char* what) {
  std::ifstream f(path, std::ios::binary);
  if (f) return;
  const int err = errno != 0 ? errno : ENOENT;
  py::object oserror = py::module_::import("builtins").attr("OSError");
  // OSError(errno, message, filename) picks the subclass (FileNotFoundError, ...).
  PyErr_SetObject(oserror.ptr(),
                  py::make_tuple(err, std::string(what) + ": cannot open '" + path + "': " + std::strerror(err), path)
                      .ptr());
  throw py::error_already_set();
}

void bind_errors(py::module_& m) {
  // taihu::Error (bad files, bad prototxt with file:line:column, bad shapes) becomes
  // caffe.CaffeError, a RuntimeError carrying taihu's message.
  static py::exception<Error> caffe_error(m, "CaffeError", PyExc_RuntimeError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const PythonLayerError& e) {
      // An error raised inside a Python layer keeps its Python type (ImportError, ...).
      py::object builtins = py::module_::import("builtins");
      if (py::hasattr(builtins, e.python_type().c_str())) {
        py::object type = builtins.attr(e.python_type().c_str());
        if (PyExceptionClass_Check(type.ptr())) {
          PyErr_SetString(type.ptr(), e.what());
          return;
        }
      }
      caffe_error(e.what());
    } catch (const Error& e) {
      caffe_error(e.what());
    }
  });
}

namespace {

// Caffe's GPU mode on a CPU-only build: warn once (as taihu-caffe's solver_mode does)
// and keep computing on the CPU.
void warn_gpu_once() {
  static bool warned = false;
  if (warned) return;
  warned = true;
  caffe::proto::SolverParameter p;
  p.set_solver_mode(caffe::proto::SolverParameter::GPU);
  caffe::use_gpu(p);
}

}  // namespace

void bind_modes(py::module_& m) {
  py::enum_<caffe::proto::Phase>(m, "Phase")
      .value("TRAIN", caffe::proto::TRAIN)
      .value("TEST", caffe::proto::TEST)
      .export_values();
  // pycaffe's phases are plain ints too (caffe_pb2.TEST == 1).
  py::implicitly_convertible<int, caffe::proto::Phase>();
  m.def("set_mode_cpu", [] {}, "Compute on the CPU (taihu's only training path).");
  m.def("set_mode_gpu", [] { warn_gpu_once(); },
        "Accepted for Caffe scripts: warns once and keeps computing on the CPU.");
  m.def("set_device", [](int /*device*/) { warn_gpu_once(); }, py::arg("device"),
        "Accepted for Caffe scripts: warns once and keeps computing on the CPU.");
  m.def("layer_type_list", [] { return caffe::LayerRegistry::builtin().types(); },
        "The layer types a prototxt may use");
  m.def("set_random_seed", [](long seed) { caffe::seed_rng(static_cast<std::uint64_t>(seed)); }, py::arg("seed"),
        "Seeds taihu's process-wide generator (fillers, dropout, shuffling).");
}

}  // namespace taihu::pycaffe

PYBIND11_MODULE(_caffe, m) {
  using namespace taihu::pycaffe;
  m.doc() = "taihu's Caffe core: Blob, Net, solvers (use the `caffe` package, not this module)";
  bind_errors(m);
  bind_parallel(m);  // first: under mpirun, MPI starts at import
  bind_modes(m);
  bind_blob(m);
  bind_net(m);
  bind_solver(m);
  bind_python_layer(m);
}
