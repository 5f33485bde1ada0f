// A peer BLAS (OpenBLAS, BLIS) loaded with dlopen(RTLD_LOCAL | RTLD_DEEPBIND), so
// several libraries exporting the same cblas_* symbols live side by side in one
// benchmark process, each with its own thread-count setter.
#pragma once
#include <string>

namespace taihu::bench {

class CblasAnchor {
 public:
  // Tries each candidate file name; loaded() is false if none opens.
  CblasAnchor(std::string name, std::initializer_list<const char*> candidates);
  ~CblasAnchor();
  CblasAnchor(const CblasAnchor&) = delete;
  CblasAnchor& operator=(const CblasAnchor&) = delete;

  bool loaded() const { return sgemm_ != nullptr && dgemm_ != nullptr; }
  const std::string& name() const { return name_; }
  const std::string& path() const { return path_; }
  void set_threads(int n) const;

  // CBLAS argument order and enum values (101/102 layout, 111/112 transpose).
  using Sgemm = void (*)(int, int, int, int, int, int, float, const float*, int, const float*, int,
                         float, float*, int);
  using Dgemm = void (*)(int, int, int, int, int, int, double, const double*, int, const double*,
                         int, double, double*, int);
  Sgemm sgemm() const { return sgemm_; }
  Dgemm dgemm() const { return dgemm_; }

 private:
  std::string name_, path_;
  void* handle_ = nullptr;
  Sgemm sgemm_ = nullptr;
  Dgemm dgemm_ = nullptr;
  void (*set_threads_int_)(int) = nullptr;         // openblas_set_num_threads
  void (*set_threads_long_)(long) = nullptr;       // bli_thread_set_num_threads (dim_t)
};

}  // namespace taihu::bench
