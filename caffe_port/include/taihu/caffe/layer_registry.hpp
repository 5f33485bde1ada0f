// The layer registry, keyed by the prototxt type string ("Convolution", "ReLU", ...).
// LayerRegistry::builtin() holds taihu's layers; a program may copy it and add its
// own types. create() throws taihu::Error naming an unknown type and the known ones.
#pragma once
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "taihu/caffe/layer.hpp"

namespace taihu::caffe {

class LayerRegistry {
 public:
  using Factory = std::function<std::unique_ptr<Layer>(const proto::LayerParameter&)>;

  // The built-in layers (created on first use, immutable).
  static const LayerRegistry& builtin();

  // Throws taihu::Error when `type` is already registered.
  void add(const std::string& type, Factory factory);
  bool has(const std::string& type) const { return factories_.count(type) != 0; }
  std::vector<std::string> types() const;
  std::unique_ptr<Layer> create(const proto::LayerParameter& param) const;

 private:
  std::map<std::string, Factory> factories_;
};

}  // namespace taihu::caffe
