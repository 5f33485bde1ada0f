// The "Python" layer type's registration and its run-time factory (see
// taihu/caffe/python_layer.hpp): the installed factory, or the embedding plugin
// loaded on the first Python layer.
#include "taihu/caffe/python_layer.hpp"

#include <dlfcn.h>

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <string>

#include "layers/builtin_layers.hpp"
#include "taihu/arch/error.hpp"

namespace taihu::caffe {

namespace {

std::atomic<PythonLayerFactory> installed_factory{nullptr};

// The plugin's path: TAIHU_CAFFE_PYTHON_PLUGIN, else beside this library.
std::string plugin_path() {
  if (const char* env = std::getenv("TAIHU_CAFFE_PYTHON_PLUGIN"); env != nullptr && *env != '\0') return env;
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&set_python_layer_factory), &info) != 0 && info.dli_fname != nullptr) {
    std::string self = info.dli_fname;
    const auto slash = self.rfind('/');
    if (slash != std::string::npos) return self.substr(0, slash + 1) + "libtaihu_caffe_python.so";
  }
  return "libtaihu_caffe_python.so";
}

// Loads the plugin once; returns an empty string, or why it failed.
std::string load_plugin() {
  static std::once_flag once;
  static std::string failure;
  std::call_once(once, [] {
    const std::string path = plugin_path();
    // RTLD_GLOBAL: Python's extension modules (numpy) resolve libpython's symbols globally.
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
    if (handle == nullptr) {
      const char* why = dlerror();
      failure = "cannot load " + path + " (" + (why ? why : "unknown error") +
                "); build the `pycaffe` target, or run the net from Python (import caffe)";
      return;
    }
    auto init = reinterpret_cast<int (*)()>(dlsym(handle, "taihu_caffe_python_plugin_init"));
    if (init == nullptr) {
      failure = path + " has no taihu_caffe_python_plugin_init";
      return;
    }
    if (init() != 0) failure = "the embedded Python interpreter did not start (" + path + ")";
  });
  return failure;
}

std::unique_ptr<Layer> create_python_layer(const proto::LayerParameter& param) {
  PythonLayerFactory factory = installed_factory.load();
  if (factory == nullptr) {
    const std::string failure = load_plugin();
    factory = installed_factory.load();
    if (factory == nullptr) {
      throw Error("layer " + param.name() + " (Python): module '" + param.python_param().module() +
                  "' needs Python, which is not available: " +
                  (failure.empty() ? std::string("the plugin installed no factory") : failure));
    }
  }
  return factory(param);
}

}  // namespace

void set_python_layer_factory(PythonLayerFactory factory) { installed_factory.store(factory); }

void register_python_layer(LayerRegistry& r) { r.add("Python", &create_python_layer); }

}  // namespace taihu::caffe
