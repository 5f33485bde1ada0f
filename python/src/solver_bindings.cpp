// caffe.SGDSolver, NesterovSolver, AdaGradSolver, RMSPropSolver, AdamSolver and
// get_solver: taihu::caffe::Solver seen from Python. The named constructors force the
// solver type (as pycaffe's classes do); get_solver uses the file's `type`.
// step/solve release the GIL (a Python layer takes it back). Under mpirun with several
// ranks the solvers train data-parallel (parallel.hpp).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <optional>
#include <string>

#include "bindings.hpp"
#include "parallel.hpp"
#include "taihu/caffe/proto.hpp"
#include "taihu/caffe/solver.hpp"

namespace taihu::pycaffe {

namespace {

using caffe::Net;
using caffe::Solver;
namespace proto = caffe::proto;

SolverPtr make_solver(const std::string& solver_file, const char* type) {
  require_readable(solver_file, "solver_file");
  proto::SolverParameter p = caffe::read_solver_param(solver_file);
  // As in pycaffe, the mode is caffe.set_mode_cpu/gpu's, not the file's solver_mode
  // (set_mode_gpu has warned once already).
  p.set_solver_mode(proto::SolverParameter::CPU);
  if (type != nullptr) {
    p.set_type(type);
    p.clear_solver_type();  // the deprecated enum would contradict the forced type
  }
  py::gil_scoped_release release;  // building nets may run Python layers
  const bool parallel = prepare_solver(&p);  // collective under mpirun
  SolverPtr solver(caffe::create_solver(p).release());
  register_solver(solver.get(), parallel);
  return solver;
}

}  // namespace

void bind_solver(py::module_& m) {
  py::class_<Solver, SolverPtr>(m, "Solver", "A Caffe solver: the train net, test nets and update rule")
      .def_property_readonly("net", &Solver::net, py::return_value_policy::reference_internal)
      .def_property_readonly("test_nets", [](const Solver& s) {
             std::vector<Net*> nets;
             for (const auto& n : s.test_nets()) nets.push_back(n.get());
             return nets;
           }, py::return_value_policy::reference_internal)
      .def_property_readonly("iter", &Solver::iter)
      .def_property_readonly("type", [](const Solver& s) { return std::string(s.type()); })
      .def("step", [](Solver& s, int iters) {
             if (iters < 0) throw py::value_error("step(" + std::to_string(iters) + "): iters must be >= 0");
             py::gil_scoped_release release;
             start_training(s);
             s.step(iters);
           }, py::arg("iters"))
      .def("solve", [](Solver& s, std::optional<std::string> resume_file) {
             if (resume_file) require_readable(*resume_file, "resume_file");
             py::gil_scoped_release release;
             start_training(s);
             s.solve(resume_file.value_or(""));
           }, py::arg("resume_file") = py::none())
      .def("restore", [](Solver& s, const std::string& path) {
             require_readable(path, "solverstate");
             py::gil_scoped_release release;
             s.restore(path);
           }, py::arg("state_file"))
      .def("snapshot", [](Solver& s) {
             py::gil_scoped_release release;
             return snapshot(s);
           }, "Writes <prefix>_iter_N.caffemodel and .solverstate; returns the .solverstate path\n"
              "(data-parallel: collective; rank 0 writes)")
      .def("test_all", [](Solver& s) {
             py::gil_scoped_release release;
             return s.test_all();
           }, "Runs each test net test_iter times; returns their mean outputs")
      .def("share_weights", [](Solver& s, Net& net) { net.share_trained_layers_with(s.net()); }, py::arg("net"),
           "Makes `net` use the train net's parameters")
      .def_property_readonly("learning_rate", [](const Solver& s) { return s.learning_rate(); });

  const auto named = [&m](const char* name, const char* type) {
    m.def(name, [type](const std::string& f) { return make_solver(f, type); }, py::arg("solver_file"),
          (std::string("A ") + type + " solver from a solver prototxt (its `type` is ignored)").c_str());
  };
  named("SGDSolver", "SGD");
  named("NesterovSolver", "Nesterov");
  named("AdaGradSolver", "AdaGrad");
  named("RMSPropSolver", "RMSProp");
  named("AdamSolver", "Adam");
  m.def("get_solver", [](const std::string& f) { return make_solver(f, nullptr); }, py::arg("solver_file"),
        "The solver the file's `type` names");
}

}  // namespace taihu::pycaffe
