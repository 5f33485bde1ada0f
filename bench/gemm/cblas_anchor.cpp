// dlopen-based loading of peer BLAS libraries for side-by-side benchmarks.
#include "cblas_anchor.hpp"

#include <dlfcn.h>

namespace taihu::bench {

CblasAnchor::CblasAnchor(std::string name, std::initializer_list<const char*> candidates)
    : name_(std::move(name)) {
  for (const char* file : candidates) {
    handle_ = dlopen(file, RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
    if (handle_ != nullptr) {
      path_ = file;
      break;
    }
  }
  if (handle_ == nullptr) return;
  sgemm_ = reinterpret_cast<Sgemm>(dlsym(handle_, "cblas_sgemm"));
  dgemm_ = reinterpret_cast<Dgemm>(dlsym(handle_, "cblas_dgemm"));
  set_threads_int_ = reinterpret_cast<void (*)(int)>(dlsym(handle_, "openblas_set_num_threads"));
  set_threads_long_ = reinterpret_cast<void (*)(long)>(dlsym(handle_, "bli_thread_set_num_threads"));
}

CblasAnchor::~CblasAnchor() {
  if (handle_ != nullptr) dlclose(handle_);
}

void CblasAnchor::set_threads(int n) const {
  if (set_threads_int_ != nullptr) set_threads_int_(n);
  if (set_threads_long_ != nullptr) set_threads_long_(n);
}

}  // namespace taihu::bench
