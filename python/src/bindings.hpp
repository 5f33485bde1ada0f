// Declarations shared by the files of the _caffe extension: one bind_* function per
// file, called in order by module.cpp, and the helpers they share.
#pragma once
#include <pybind11/pybind11.h>

#include <string>

namespace taihu::pycaffe {

namespace py = pybind11;

void bind_errors(py::module_& m);   // module.cpp: CaffeError, taihu::Error translation
void bind_modes(py::module_& m);    // module.cpp: set_mode_cpu/gpu, set_device, Phase
void bind_blob(py::module_& m);     // blob_bindings.cpp: Blob (numpy views of data/diff)
void bind_net(py::module_& m);      // net_bindings.cpp: Net, Layer
void bind_solver(py::module_& m);   // solver_bindings.cpp: the solvers, get_solver
void bind_python_layer(py::module_& m);  // python_layer.cpp: the "Python" layer type
void bind_parallel(py::module_& m);  // parallel_bindings.cpp: MPI start-up, solver_count, set_multiprocess

// Raises FileNotFoundError / PermissionError (OSError with errno and the path) when
// `path` cannot be opened for reading; `what` says which argument it was.
void require_readable(const std::string& path, const char* what);

}  // namespace taihu::pycaffe
