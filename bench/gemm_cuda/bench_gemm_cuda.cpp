// bench_gemm_cuda: taihu::gemm_cuda::sgemm against cuBLAS on the same device buffers,
// interleaved in one loop and timed with CUDA events (device time, not host time):
//   fp32 rows: taihu's CUDA-core kernel vs cublasSgemm (pedantic math, no TF32);
//   tf32 rows: taihu's wmma TF32 kernel vs cublasGemmEx(CUBLAS_COMPUTE_32F_FAST_TF32).
// Shapes: square 1024..8192 and 64x3136x576 (a ResNet 3x3 convolution as implicit GEMM),
// column major, no transposes, alpha = 1, beta = 0.
// Counters: gflops (taihu), cublas_gflops, pct_cublas = 100 * taihu / cuBLAS rate, and
// vs_anchor = cuBLAS time / taihu time (> 1: taihu is faster), all from the median of
// the per-iteration event timings. The host-roofline pct_peak that other taihu
// benchmarks print means nothing for a GPU and is left out.
// Without a CUDA device the binary runs one benchmark that reports "no CUDA device".
#include <benchmark/benchmark.h>
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>
#include <functional>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench_common.hpp"
#include "taihu/gemm_cuda/sgemm_cuda.hpp"

namespace {

using taihu::gemm_cuda::CudaMath;
using taihu::gemm_cuda::index_t;
using taihu::gemm_cuda::Trans;

void cuda_ok(cudaError_t err, const char* what) {
  if (err != cudaSuccess)
    throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(err));
}

void cublas_ok(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error(std::string(what) + ": " + cublasGetStatusString(s));
}

struct Shape {
  index_t m, n, k;
};

// Device buffers for the current shape, kept across the repeated calls Google
// Benchmark makes while it sizes the iteration count.
class Buffers {
 public:
  static Buffers& get(const Shape& s) {
    static std::unique_ptr<Buffers> current;
    if (!current || current->shape_.m != s.m || current->shape_.n != s.n ||
        current->shape_.k != s.k) {
      current.reset();  // free the previous shape first
      current.reset(new Buffers(s));
    }
    return *current;
  }
  ~Buffers() {
    cudaFree(a);
    cudaFree(b);
    cudaFree(c);
  }
  Buffers(const Buffers&) = delete;
  Buffers& operator=(const Buffers&) = delete;

  float* a = nullptr;
  float* b = nullptr;
  float* c = nullptr;

 private:
  explicit Buffers(const Shape& s) : shape_(s) {
    const auto alloc = [](float*& p, std::size_t n) {
      cuda_ok(cudaMalloc(reinterpret_cast<void**>(&p), n * sizeof(float)), "cudaMalloc");
      fill(p, n);
    };
    alloc(a, static_cast<std::size_t>(s.m * s.k));
    alloc(b, static_cast<std::size_t>(s.k * s.n));
    alloc(c, static_cast<std::size_t>(s.m * s.n));
  }
  // Uniform [-1, 1] (not zeros: the GPU's power, hence clock, depends on the data).
  static void fill(float* d, std::size_t n) {
    static const std::vector<float> pattern = [] {
      std::mt19937 rng(42);
      std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
      std::vector<float> v((1u << 20) + 17);  // odd length: no period aligned to a tile
      for (auto& x : v) x = dist(rng);
      return v;
    }();
    for (std::size_t i = 0; i < n; i += pattern.size()) {
      const std::size_t len = std::min(pattern.size(), n - i);
      cuda_ok(cudaMemcpy(d + i, pattern.data(), len * sizeof(float), cudaMemcpyHostToDevice),
              "cudaMemcpy");
    }
  }
  Shape shape_;
};

cublasHandle_t cublas_handle() {
  static cublasHandle_t handle = [] {
    cublasHandle_t h = nullptr;
    cublas_ok(cublasCreate(&h), "cublasCreate");
    return h;
  }();
  return handle;
}

// Seconds of device time for f(), measured with events on the default stream.
double device_seconds(cudaEvent_t start, cudaEvent_t stop, const std::function<void()>& f) {
  cuda_ok(cudaEventRecord(start), "cudaEventRecord");
  f();
  cuda_ok(cudaEventRecord(stop), "cudaEventRecord");
  cuda_ok(cudaEventSynchronize(stop), "cudaEventSynchronize");
  float ms = 0;
  cuda_ok(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
  return 1e-3 * static_cast<double>(ms);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

void bench_sgemm(benchmark::State& state, Shape s, CudaMath math) {
  try {
    Buffers& buf = Buffers::get(s);
    const float alpha = 1.0f, beta = 0.0f;
    const int m = static_cast<int>(s.m), n = static_cast<int>(s.n), k = static_cast<int>(s.k);
    cublasHandle_t h = cublas_handle();
    const auto taihu = [&] {
      taihu::gemm_cuda::sgemm(Trans::no, Trans::no, s.m, s.n, s.k, alpha, buf.a, s.m, buf.b, s.k,
                              beta, buf.c, s.m, nullptr, math);
    };
    const auto cublas = [&] {
      if (math == CudaMath::fp32) {
        cublas_ok(cublasSetMathMode(h, CUBLAS_PEDANTIC_MATH), "cublasSetMathMode");
        cublas_ok(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, buf.a, m, buf.b, k,
                              &beta, buf.c, m),
                  "cublasSgemm");
      } else {
        cublas_ok(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH), "cublasSetMathMode");
        cublas_ok(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, buf.a, CUDA_R_32F, m,
                               buf.b, CUDA_R_32F, k, &beta, buf.c, CUDA_R_32F, m,
                               CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_GEMM_DEFAULT),
                  "cublasGemmEx");
      }
    };
    cudaEvent_t start = nullptr, stop = nullptr;
    cuda_ok(cudaEventCreate(&start), "cudaEventCreate");
    cuda_ok(cudaEventCreate(&stop), "cudaEventCreate");
    std::unique_ptr<CUevent_st, cudaError_t (*)(cudaEvent_t)> start_guard(start, cudaEventDestroy);
    std::unique_ptr<CUevent_st, cudaError_t (*)(cudaEvent_t)> stop_guard(stop, cudaEventDestroy);

    device_seconds(start, stop, taihu);  // warm-up: module load, cuBLAS heuristics, clocks
    device_seconds(start, stop, cublas);
    std::vector<double> taihu_s, cublas_s;
    for (auto _ : state) {
      cublas_s.push_back(device_seconds(start, stop, cublas));
      taihu_s.push_back(device_seconds(start, stop, taihu));
      state.SetIterationTime(taihu_s.back());
    }

    taihu::bench::Work work;
    work.flops =
        2.0 * static_cast<double>(s.m) * static_cast<double>(s.n) * static_cast<double>(s.k);
    const double t = median(taihu_s), a = median(cublas_s);
    taihu::bench::report(state, work, taihu::bench::Ceiling::peak_sp, 1, t, a);
    // A GPU against the host's roofline is meaningless: report against cuBLAS instead.
    state.counters.erase("pct_peak");
    state.counters.erase("anchor_gflops");
    state.counters["gflops"] = t > 0 ? work.flops / t / 1e9 : 0.0;
    state.counters["cublas_gflops"] = a > 0 ? work.flops / a / 1e9 : 0.0;
    state.counters["pct_cublas"] = t > 0 ? 100.0 * a / t : 0.0;
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

void register_benchmarks() {
  const Shape shapes[] = {{1024, 1024, 1024},
                          {2048, 2048, 2048},
                          {4096, 4096, 4096},
                          {8192, 8192, 8192},
                          {64, 3136, 576}};
  for (const Shape& s : shapes)
    for (CudaMath math : {CudaMath::fp32, CudaMath::tf32}) {
      const std::string name =
          std::string("sgemm_cuda/") + (math == CudaMath::fp32 ? "fp32" : "tf32") + "/NN/" +
          std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k);
      benchmark::RegisterBenchmark(name.c_str(), bench_sgemm, s, math)
          ->UseManualTime()
          ->Unit(benchmark::kMillisecond);
    }
}

std::string device_name() {
  int device = 0;
  cudaDeviceProp prop{};
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaGetDeviceProperties(&prop, device) != cudaSuccess)
    return "unknown";
  return std::string(prop.name) + " (sm_" + std::to_string(prop.major) +
         std::to_string(prop.minor) + ", " + std::to_string(prop.multiProcessorCount) + " SMs)";
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  if (taihu::gemm_cuda::device_available()) {
    benchmark::AddCustomContext("gpu", device_name());
    register_benchmarks();
  } else {
    benchmark::RegisterBenchmark("sgemm_cuda/no_device", [](benchmark::State& state) {
      state.SkipWithError("no CUDA device");
    });
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
