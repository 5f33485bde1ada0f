// The layer registry. See taihu/caffe/layer_registry.hpp; the built-in set is listed
// in layers/builtin_layers.cpp.
#include "taihu/arch/error.hpp"
#include "taihu/caffe/layer_registry.hpp"
#include "layers/builtin_layers.hpp"

namespace taihu::caffe {

const LayerRegistry& LayerRegistry::builtin() {
  static const LayerRegistry registry = [] {
    LayerRegistry r;
    register_builtin_layers(r);
    return r;
  }();
  return registry;
}

void LayerRegistry::add(const std::string& type, Factory factory) {
  if (!factories_.emplace(type, std::move(factory)).second) {
    throw Error("layer registry: type \"" + type + "\" registered twice");
  }
}

std::vector<std::string> LayerRegistry::types() const {
  std::vector<std::string> t;
  for (const auto& [name, f] : factories_) t.push_back(name);
  return t;
}

std::unique_ptr<Layer> LayerRegistry::create(const proto::LayerParameter& param) const {
  auto it = factories_.find(param.type());
  if (it == factories_.end()) {
    std::string known;
    for (const auto& [name, f] : factories_) {
      if (!known.empty()) known += ", ";
      known += name;
    }
    throw Error("layer " + param.name() + ": unknown layer type \"" + param.type() + "\" (known: " + known + ")");
  }
  return it->second(param);
}

}  // namespace taihu::caffe
