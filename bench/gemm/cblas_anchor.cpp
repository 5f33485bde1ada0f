// dlopen-based loading of peer BLAS libraries for side-by-side benchmarks.
#include "cblas_anchor.hpp"

#include <dlfcn.h>

#include <cstring>

#include "anchor_registry.hpp"

namespace taihu::bench {

CblasAnchor::CblasAnchor(std::string name, std::initializer_list<std::string> candidates, std::string prefix)
    : name_(std::move(name)), prefix_(std::move(prefix)) {
  for (const std::string& file : candidates) {
    if (file.empty()) continue;
    handle_ = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
    if (handle_ != nullptr) {
      path_ = file;
      break;
    }
  }
  if (handle_ == nullptr) return;
  sgemm_ = reinterpret_cast<Sgemm>(symbol("cblas_sgemm"));
  dgemm_ = reinterpret_cast<Dgemm>(symbol("cblas_dgemm"));
  set_threads_int_ = reinterpret_cast<void (*)(int)>(symbol("openblas_set_num_threads"));
  if (set_threads_int_ == nullptr) set_threads_int_ = reinterpret_cast<void (*)(int)>(symbol("MKL_Set_Num_Threads"));
  set_threads_long_ = reinterpret_cast<void (*)(long)>(symbol("bli_thread_set_num_threads"));
  kernel_ = describe_kernel();
}

CblasAnchor::~CblasAnchor() {
  if (handle_ != nullptr) dlclose(handle_);
}

void* CblasAnchor::symbol(const char* name) const { return dlsym(handle_, (prefix_ + name).c_str()); }

std::string CblasAnchor::describe_kernel() const {
  // OpenBLAS: the core its dynamic dispatch picked, plus its build string.
  using CharFn = char* (*)();
  if (auto core = reinterpret_cast<CharFn>(symbol("openblas_get_corename")); core != nullptr) {
    std::string s = std::string("core ") + core();
    if (auto config = reinterpret_cast<CharFn>(symbol("openblas_get_config")); config != nullptr)
      s += " (" + std::string(config()) + ")";
    return s;
  }
  // MKL: MKL_Get_Version's Processor field names the code path (AVX-512, AVX2, ...).
  struct MklVersion {
    int major, minor, update, patch;
    char *status, *build, *processor, *platform;
  };
  if (auto version = reinterpret_cast<void (*)(MklVersion*)>(symbol("MKL_Get_Version")); version != nullptr) {
    MklVersion v{};
    version(&v);
    return "MKL " + std::to_string(v.major) + "." + std::to_string(v.minor) + "." + std::to_string(v.update) +
           ", " + (v.processor != nullptr ? v.processor : "?");
  }
  // BLIS: the sub-configuration chosen at run time.
  auto arch_id = reinterpret_cast<int (*)()>(symbol("bli_arch_query_id"));
  auto arch_name = reinterpret_cast<const char* (*)(int)>(symbol("bli_arch_string"));
  auto info = reinterpret_cast<const char* (*)()>(symbol("bli_info_get_version_str"));
  if (arch_id != nullptr && arch_name != nullptr)
    return std::string("config ") + arch_name(arch_id()) + (info != nullptr ? std::string(" (BLIS ") + info() + ")" : "");
  return "unknown";
}

void CblasAnchor::set_threads(int n) const {
  if (set_threads_int_ != nullptr) set_threads_int_(n);
  if (set_threads_long_ != nullptr) set_threads_long_(n);
}

std::vector<std::unique_ptr<CblasAnchor>> newest_cblas_anchors(const char* fallback_mkl,
                                                               const char* fallback_openblas) {
  const std::string mkl = anchor_setting("TAIHU_ANCHOR_MKL");
  const std::string openblas = anchor_setting("TAIHU_ANCHOR_OPENBLAS");
  if (mkl.empty()) missing_anchor("MKL", fallback_mkl);
  if (openblas.empty()) missing_anchor("OpenBLAS 0.3.34 (scipy-openblas32)", fallback_openblas);
  std::vector<std::unique_ptr<CblasAnchor>> v;
  v.push_back(std::make_unique<CblasAnchor>("mkl", std::initializer_list<std::string>{mkl}));
  v.push_back(std::make_unique<CblasAnchor>("openblas", std::initializer_list<std::string>{openblas}, "scipy_"));
  return v;
}

}  // namespace taihu::bench
