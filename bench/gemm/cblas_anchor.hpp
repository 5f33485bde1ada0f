// A peer BLAS (MKL, the newest OpenBLAS, Debian's OpenBLAS, BLIS) loaded with
// dlopen(RTLD_LOCAL | RTLD_DEEPBIND), so several libraries exporting cblas_* symbols
// live side by side in one benchmark process, each with its own thread-count setter.
// kernel() names the code path the library chose for this CPU (OpenBLAS's core name,
// MKL's ISA, BLIS's sub-configuration), so a fallback such as OpenBLAS's "Prescott"
// on a core it does not know is visible next to its figures.
#pragma once
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

namespace taihu::bench {

class CblasAnchor {
 public:
  // Tries each candidate file name (empty ones are skipped); loaded() is false if none
  // opens. `prefix` is prepended to every symbol: scipy-openblas32 exports
  // scipy_cblas_sgemm, scipy_openblas_set_num_threads, ...
  CblasAnchor(std::string name, std::initializer_list<std::string> candidates, std::string prefix = "");
  ~CblasAnchor();
  CblasAnchor(const CblasAnchor&) = delete;
  CblasAnchor& operator=(const CblasAnchor&) = delete;

  bool loaded() const { return sgemm_ != nullptr && dgemm_ != nullptr; }
  const std::string& name() const { return name_; }
  const std::string& path() const { return path_; }
  const std::string& kernel() const { return kernel_; }
  void set_threads(int n) const;

  // CBLAS argument order and enum values (101/102 layout, 111/112 transpose).
  using Sgemm = void (*)(int, int, int, int, int, int, float, const float*, int, const float*, int,
                         float, float*, int);
  using Dgemm = void (*)(int, int, int, int, int, int, double, const double*, int, const double*,
                         int, double, double*, int);
  Sgemm sgemm() const { return sgemm_; }
  Dgemm dgemm() const { return dgemm_; }

  // Any other entry point by its CBLAS name (the prefix added), nullptr where the
  // library lacks it: bench_gemm_level3 casts cblas_strsm, cblas_gemm_bf16bf16f32, ...
  void* symbol(const char* name) const;

 private:
  std::string describe_kernel() const;

  std::string name_, path_, prefix_, kernel_;
  void* handle_ = nullptr;
  Sgemm sgemm_ = nullptr;
  Dgemm dgemm_ = nullptr;
  void (*set_threads_int_)(int) = nullptr;    // openblas_set_num_threads, MKL_Set_Num_Threads
  void (*set_threads_long_)(long) = nullptr;  // bli_thread_set_num_threads (dim_t)
};

// Today's peers, strongest first: MKL (TAIHU_ANCHOR_MKL) and the newest OpenBLAS
// (TAIHU_ANCHOR_OPENBLAS, scipy-openblas32), as scripts/anchors installs them. A missing
// one is announced once, saying what the run compares against instead (`fallback_*`).
std::vector<std::unique_ptr<CblasAnchor>> newest_cblas_anchors(const char* fallback_mkl,
                                                               const char* fallback_openblas);

}  // namespace taihu::bench
