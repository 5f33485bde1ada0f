// caffe.Net and caffe.Layer: taihu::caffe::Net seen from Python. The underscored
// members are the raw interface; pycaffe.py builds pycaffe's conveniences on them
// (blobs/params as OrderedDicts, forward(**inputs), top_names, ...).
// forward/backward/reshape release the GIL (a Python layer takes it back).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bindings.hpp"
#include "taihu/arch/error.hpp"
#include "taihu/caffe/net.hpp"
#include "taihu/caffe/proto.hpp"

namespace taihu::pycaffe {

namespace {

using caffe::Blob;
using caffe::Layer;
using caffe::Net;
namespace proto = caffe::proto;

std::unique_ptr<Net> make_net(const std::string& network_file, proto::Phase phase, int level,
                              const std::vector<std::string>& stages, const std::optional<std::string>& weights) {
  require_readable(network_file, "network_file");
  if (weights) require_readable(*weights, "weights");
  const proto::NetParameter param = caffe::read_net_param(network_file);
  proto::NetState state;
  state.set_phase(phase);
  state.set_level(level);
  for (const std::string& s : stages) state.add_stage(s);
  py::gil_scoped_release release;  // layer set-up may run Python layers and take it back
  auto net = std::make_unique<Net>(param, state);
  if (weights) net->copy_trained_layers_from(*weights);
  return net;
}

int layer_index(const Net& net, int i, const char* what) {
  if (i < 0 || i >= net.num_layers()) {
    throw py::index_error(std::string(what) + " = " + std::to_string(i) + ": the net has layers 0.." +
                          std::to_string(net.num_layers() - 1));
  }
  return i;
}

// Caffe's ForwardFromTo: layers start..end (inclusive); returns their weighted loss.
float forward_range(Net& net, int start, int end) {
  double loss = 0;
  for (int i = start; i <= end; ++i) {
    net.forward_layer(i);
    const auto& tops = net.top_vecs()[static_cast<std::size_t>(i)];
    for (std::size_t j = 0; j < tops.size(); ++j) {
      const float w = net.layer(i).loss_weight(static_cast<int>(j));
      if (w == 0.f) continue;
      const float* d = tops[j]->data();
      const float* g = tops[j]->diff();
      for (std::int64_t k = 0; k < tops[j]->count(); ++k) loss += static_cast<double>(d[k]) * g[k];
    }
  }
  return static_cast<float>(loss);
}

// Blob ids of a layer's bottoms or tops (in-place layers repeat an id, as in Caffe).
std::vector<int> blob_ids(const Net& net, const caffe::BlobVec& vec) {
  std::vector<int> ids;
  for (const Blob* b : vec) {
    for (std::size_t k = 0; k < net.blobs().size(); ++k) {
      if (net.blobs()[k].get() == b) {
        ids.push_back(static_cast<int>(k));
        break;
      }
    }
  }
  return ids;
}

std::vector<int> input_ids(const Net& net) {
  std::vector<int> ids;
  for (int i = 0; i < net.num_layers(); ++i) {
    if (std::string(net.layers()[static_cast<std::size_t>(i)]->type()) != "Input") continue;
    for (int id : blob_ids(net, net.top_vecs()[static_cast<std::size_t>(i)])) ids.push_back(id);
  }
  return ids;
}

}  // namespace

void bind_net(py::module_& m) {
  py::class_<Layer>(m, "Layer_", "A layer of a Net (type, name, parameter blobs)")
      .def_property_readonly("type", [](const Layer& l) { return std::string(l.type()); })
      .def_property_readonly("name", &Layer::name)
      .def_property_readonly("blobs", [](Layer& l) { return l.blobs(); }, "the layer's parameter Blobs");

  py::class_<Net>(m, "Net", py::dynamic_attr(),
                  "Net(network_file, phase, level=0, stages=None, weights=None) or "
                  "Net(network_file, weights, phase)")
      .def(py::init([](const std::string& file, proto::Phase phase, int level,
                       std::optional<std::vector<std::string>> stages, std::optional<std::string> weights) {
             return make_net(file, phase, level, stages.value_or(std::vector<std::string>{}), weights);
           }),
           py::arg("network_file"), py::arg("phase"), py::arg("level") = 0, py::arg("stages") = py::none(),
           py::arg("weights") = py::none())
      .def(py::init([](const std::string& file, const std::string& weights, proto::Phase phase) {
             return make_net(file, phase, 0, {}, weights);
           }),
           py::arg("network_file"), py::arg("weights"), py::arg("phase"))
      .def("_forward", [](Net& n, int start, int end) {
             layer_index(n, start, "start");
             layer_index(n, end, "end");
             py::gil_scoped_release release;
             return forward_range(n, start, end);
           }, py::arg("start"), py::arg("end"), "Caffe's ForwardFromTo (inclusive); returns the loss")
      .def("_backward", [](Net& n, int start, int end) {
             layer_index(n, start, "start");
             layer_index(n, end, "end");
             py::gil_scoped_release release;
             for (int i = start; i >= end; --i) n.backward_layer(i);
           }, py::arg("start"), py::arg("end"), "Caffe's BackwardFromTo: layers start down to end")
      .def("reshape", [](Net& n) {
             py::gil_scoped_release release;
             n.reshape();
           }, "Re-shapes every layer after an input blob's shape changed")
      .def("copy_from", [](Net& n, const std::string& weights) {
             require_readable(weights, "weights");
             py::gil_scoped_release release;
             n.copy_trained_layers_from(weights);
           }, py::arg("weights"), "Loads a .caffemodel's weights by layer name")
      .def("share_with", [](Net& n, const Net& other) { n.share_trained_layers_with(other); }, py::arg("other"),
           "Uses `other`'s parameter storage for the layers both nets have")
      .def("save", [](const Net& n, const std::string& filename) {
             proto::NetParameter p;
             n.to_proto(&p, false);
             caffe::write_binary_atomic(filename, p);
           }, py::arg("filename"), "Writes the weights as a .caffemodel (atomically)")
      .def_property_readonly("name", &Net::name)
      .def_property_readonly("phase", &Net::phase)
      .def_property_readonly("_blob_names", &Net::blob_names)
      .def_property_readonly("_layer_names", &Net::layer_names)
      .def_property_readonly("_blobs", [](const Net& n) { return n.blobs(); })
      .def_property_readonly("layers", [](Net& n) {
             std::vector<Layer*> l;
             for (const auto& p : n.layers()) l.push_back(p.get());
             return l;
           }, py::return_value_policy::reference_internal)
      .def_property_readonly("_inputs", &input_ids)
      .def_property_readonly("_outputs", [](const Net& n) { return n.output_blob_indices(); })
      .def("_top_ids", [](const Net& n, int i) {
             return blob_ids(n, n.top_vecs()[static_cast<std::size_t>(layer_index(n, i, "layer"))]);
           })
      .def("_bottom_ids", [](const Net& n, int i) {
             return blob_ids(n, n.bottom_vecs()[static_cast<std::size_t>(layer_index(n, i, "layer"))]);
           })
      .def("_output_loss_weight", &Net::output_loss_weight);
}

}  // namespace taihu::pycaffe
