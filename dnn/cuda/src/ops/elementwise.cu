// CUDA kernels and launchers for the elementwise operators (elementwise.hpp).
// Pointwise kernels: grid-stride loops, 256 threads, grid capped at 65535 * 4 blocks.
// Softmax with inner == 1: one block per row (warp-shuffle reductions); inner > 1: one
// thread per (outer, inner) position walking the channels (coalesced along inner).
// Scale backward: one block per d reduces over outer * inner.
#include <cuda_runtime.h>

#include <initializer_list>
#include <string>

#include "taihu/arch/error.hpp"
#include "taihu/dnn_cuda/elementwise.hpp"

namespace taihu::dnn_cuda {
namespace {

constexpr int kThreads = 256;

void fail(const char* what, const std::string& msg) {
  throw Error(std::string("taihu::dnn_cuda::") + what + ": " + msg);
}

void check_count(const char* what, index_t count) {
  if (count < 0) fail(what, "count is " + std::to_string(count) + ", expected >= 0");
}

void check_ptr(const char* what, const char* name, const void* p) {
  if (p == nullptr) fail(what, std::string(name) + " is null");
}

void check_launch(const char* what) {
  const cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) fail(what, std::string("CUDA launch failed: ") + cudaGetErrorString(err));
}

unsigned blocks_for(index_t count) {
  const index_t b = (count + kThreads - 1) / kThreads;
  return static_cast<unsigned>(b < 65535 * 4 ? b : 65535 * 4);
}

__global__ void relu_fwd_kernel(index_t n, const float* x, float* y, float slope) {
  for (index_t i = blockIdx.x * static_cast<index_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<index_t>(gridDim.x) * blockDim.x) {
    const float v = x[i];
    y[i] = v > 0.0f ? v : slope * v;
  }
}

__global__ void relu_bwd_kernel(index_t n, const float* x, const float* dy, float* dx,
                                float slope) {
  for (index_t i = blockIdx.x * static_cast<index_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<index_t>(gridDim.x) * blockDim.x)
    dx[i] = x[i] > 0.0f ? dy[i] : slope * dy[i];
}

__global__ void sigmoid_fwd_kernel(index_t n, const float* x, float* y) {
  for (index_t i = blockIdx.x * static_cast<index_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<index_t>(gridDim.x) * blockDim.x)
    y[i] = 1.0f / (1.0f + expf(-x[i]));
}

__global__ void sigmoid_bwd_kernel(index_t n, const float* y, const float* dy, float* dx) {
  for (index_t i = blockIdx.x * static_cast<index_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<index_t>(gridDim.x) * blockDim.x) {
    const float v = y[i];
    dx[i] = dy[i] * v * (1.0f - v);
  }
}

__global__ void tanh_fwd_kernel(index_t n, const float* x, float* y) {
  for (index_t i = blockIdx.x * static_cast<index_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<index_t>(gridDim.x) * blockDim.x)
    y[i] = tanhf(x[i]);
}

__global__ void tanh_bwd_kernel(index_t n, const float* y, const float* dy, float* dx) {
  for (index_t i = blockIdx.x * static_cast<index_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<index_t>(gridDim.x) * blockDim.x) {
    const float v = y[i];
    dx[i] = dy[i] * (1.0f - v * v);
  }
}

__global__ void scale_fwd_kernel(index_t n, index_t dim, index_t inner, const float* x,
                                 const float* scale, const float* bias, float* y) {
  for (index_t i = blockIdx.x * static_cast<index_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<index_t>(gridDim.x) * blockDim.x) {
    const index_t d = (i / inner) % dim;
    y[i] = x[i] * (scale ? scale[d] : 1.0f) + (bias ? bias[d] : 0.0f);
  }
}

__device__ float block_sum(float v, float* shared) {
  for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  __syncthreads();  // shared may still be read by a previous reduction
  if (lane == 0) shared[warp] = v;
  __syncthreads();
  float total = 0.0f;
  const int warps = (blockDim.x + 31) / 32;
  for (int w = 0; w < warps; ++w) total += shared[w];
  return total;
}

__device__ float block_max(float v, float* shared) {
  for (int off = 16; off > 0; off >>= 1) v = fmaxf(v, __shfl_down_sync(0xffffffffu, v, off));
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  __syncthreads();
  if (lane == 0) shared[warp] = v;
  __syncthreads();
  float m = shared[0];
  const int warps = (blockDim.x + 31) / 32;
  for (int w = 1; w < warps; ++w) m = fmaxf(m, shared[w]);
  return m;
}

// One block per d: sums over outer * inner of dy * x and dy.
__global__ void scale_bwd_params_kernel(index_t outer, index_t dim, index_t inner, const float* x,
                                        const float* dy, float* dscale, float* dbias,
                                        bool accumulate) {
  __shared__ float shared[32];
  const index_t d = blockIdx.x;
  float s = 0.0f, b = 0.0f;
  for (index_t j = threadIdx.x; j < outer * inner; j += blockDim.x) {
    const index_t o = j / inner, i = j % inner;
    const index_t at = (o * dim + d) * inner + i;
    const float g = dy[at];
    if (dscale) s += g * x[at];
    b += g;
  }
  const float ts = block_sum(s, shared);
  const float tb = block_sum(b, shared);
  if (threadIdx.x == 0) {
    if (dscale) dscale[d] = ts + (accumulate ? dscale[d] : 0.0f);
    if (dbias) dbias[d] = tb + (accumulate ? dbias[d] : 0.0f);
  }
}

__global__ void axpby_kernel(index_t n, float a, const float* x, float b, float* y) {
  for (index_t i = blockIdx.x * static_cast<index_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<index_t>(gridDim.x) * blockDim.x)
    y[i] = b == 0.0f ? a * x[i] : a * x[i] + b * y[i];
}

__global__ void softmax_rows_kernel(index_t channels, const float* x, float* y) {
  __shared__ float shared[32];
  const float* xr = x + blockIdx.x * channels;
  float* yr = y + blockIdx.x * channels;
  float m = -INFINITY;
  for (index_t c = threadIdx.x; c < channels; c += blockDim.x) m = fmaxf(m, xr[c]);
  m = block_max(m, shared);
  float s = 0.0f;
  for (index_t c = threadIdx.x; c < channels; c += blockDim.x) {
    const float e = expf(xr[c] - m);
    yr[c] = e;
    s += e;
  }
  const float inv = 1.0f / block_sum(s, shared);
  for (index_t c = threadIdx.x; c < channels; c += blockDim.x) yr[c] *= inv;
}

__global__ void softmax_strided_kernel(index_t outer, index_t channels, index_t inner,
                                       const float* x, float* y) {
  for (index_t pos = blockIdx.x * static_cast<index_t>(blockDim.x) + threadIdx.x;
       pos < outer * inner; pos += static_cast<index_t>(gridDim.x) * blockDim.x) {
    const index_t o = pos / inner, i = pos % inner;
    const float* xp = x + o * channels * inner + i;
    float* yp = y + o * channels * inner + i;
    float m = xp[0];
    for (index_t c = 1; c < channels; ++c) m = fmaxf(m, xp[c * inner]);
    float s = 0.0f;
    for (index_t c = 0; c < channels; ++c) {
      const float e = expf(xp[c * inner] - m);
      yp[c * inner] = e;
      s += e;
    }
    const float inv = 1.0f / s;
    for (index_t c = 0; c < channels; ++c) yp[c * inner] *= inv;
  }
}

__global__ void softmax_bwd_rows_kernel(index_t channels, const float* y, const float* dy,
                                        float* dx) {
  __shared__ float shared[32];
  const index_t off = blockIdx.x * channels;
  float s = 0.0f;
  for (index_t c = threadIdx.x; c < channels; c += blockDim.x) s += y[off + c] * dy[off + c];
  const float dot = block_sum(s, shared);
  for (index_t c = threadIdx.x; c < channels; c += blockDim.x)
    dx[off + c] = y[off + c] * (dy[off + c] - dot);
}

__global__ void softmax_bwd_strided_kernel(index_t outer, index_t channels, index_t inner,
                                           const float* y, const float* dy, float* dx) {
  for (index_t pos = blockIdx.x * static_cast<index_t>(blockDim.x) + threadIdx.x;
       pos < outer * inner; pos += static_cast<index_t>(gridDim.x) * blockDim.x) {
    const index_t base = (pos / inner) * channels * inner + pos % inner;
    float dot = 0.0f;
    for (index_t c = 0; c < channels; ++c) dot += y[base + c * inner] * dy[base + c * inner];
    for (index_t c = 0; c < channels; ++c)
      dx[base + c * inner] = y[base + c * inner] * (dy[base + c * inner] - dot);
  }
}

void check_axis(const char* what, index_t outer, index_t channels, index_t inner) {
  if (outer < 0) fail(what, "outer is " + std::to_string(outer) + ", expected >= 0");
  if (channels < 1) fail(what, "channels is " + std::to_string(channels) + ", expected >= 1");
  if (inner < 0) fail(what, "inner is " + std::to_string(inner) + ", expected >= 0");
}

struct Operand {
  const char* name;
  const void* p;
};

// The six activation launchers: checks the count and the operands (by name, in the
// error), then one grid-stride kernel(count, args...) over the elements.
template <class... Params, class... Args>
void launch_pointwise(const char* what, index_t count, Stream stream, std::initializer_list<Operand> operands,
                      void (*kernel)(index_t, Params...), Args... args) {
  check_count(what, count);
  if (count == 0) return;
  for (const Operand& o : operands) check_ptr(what, o.name, o.p);
  kernel<<<blocks_for(count), kThreads, 0, stream>>>(count, args...);
  check_launch(what);
}

}  // namespace

void relu_forward(index_t count, const float* x, float* y, float negative_slope, Stream stream) {
  launch_pointwise("relu_forward", count, stream, {{"x", x}, {"y", y}}, relu_fwd_kernel, x, y, negative_slope);
}

void relu_backward(index_t count, const float* x, const float* dy, float* dx, float negative_slope,
                   Stream stream) {
  launch_pointwise("relu_backward", count, stream, {{"x", x}, {"dy", dy}, {"dx", dx}}, relu_bwd_kernel, x, dy, dx,
                   negative_slope);
}

void sigmoid_forward(index_t count, const float* x, float* y, Stream stream) {
  launch_pointwise("sigmoid_forward", count, stream, {{"x", x}, {"y", y}}, sigmoid_fwd_kernel, x, y);
}

void sigmoid_backward(index_t count, const float* y, const float* dy, float* dx, Stream stream) {
  launch_pointwise("sigmoid_backward", count, stream, {{"y", y}, {"dy", dy}, {"dx", dx}}, sigmoid_bwd_kernel, y, dy,
                   dx);
}

void tanh_forward(index_t count, const float* x, float* y, Stream stream) {
  launch_pointwise("tanh_forward", count, stream, {{"x", x}, {"y", y}}, tanh_fwd_kernel, x, y);
}

void tanh_backward(index_t count, const float* y, const float* dy, float* dx, Stream stream) {
  launch_pointwise("tanh_backward", count, stream, {{"y", y}, {"dy", dy}, {"dx", dx}}, tanh_bwd_kernel, y, dy, dx);
}

void scale_forward(index_t outer, index_t dim, index_t inner, const float* x, const float* scale,
                   const float* bias, float* y, Stream stream) {
  constexpr const char* what = "scale_forward";
  check_axis(what, outer, dim, inner);
  const index_t count = outer * dim * inner;
  if (count == 0) return;
  check_ptr(what, "x", x);
  check_ptr(what, "y", y);
  scale_fwd_kernel<<<blocks_for(count), kThreads, 0, stream>>>(count, dim, inner, x, scale, bias,
                                                               y);
  check_launch(what);
}

void scale_backward(index_t outer, index_t dim, index_t inner, const float* x, const float* scale,
                    const float* dy, float* dx, float* dscale, float* dbias, bool accumulate,
                    Stream stream) {
  constexpr const char* what = "scale_backward";
  check_axis(what, outer, dim, inner);
  const index_t count = outer * dim * inner;
  if (dscale != nullptr || dbias != nullptr) {
    if (count > 0) check_ptr(what, "dy", dy);
    if (count > 0 && dscale != nullptr) check_ptr(what, "x", x);
    scale_bwd_params_kernel<<<static_cast<unsigned>(dim), kThreads, 0, stream>>>(
        outer, dim, inner, x, dy, dscale, dbias, accumulate);
    check_launch(what);
  }
  if (dx != nullptr) scale_forward(outer, dim, inner, dy, scale, nullptr, dx, stream);
}

void eltwise_sum(index_t count, int num_inputs, const float* const* inputs, const float* coeffs,
                 float* y, Stream stream) {
  constexpr const char* what = "eltwise_sum";
  check_count(what, count);
  if (num_inputs < 1) fail(what, "num_inputs is " + std::to_string(num_inputs) + ", expected >= 1");
  check_ptr(what, "inputs", inputs);
  if (count == 0) return;
  check_ptr(what, "y", y);
  for (int i = 0; i < num_inputs; ++i)
    if (inputs[i] == nullptr) fail(what, "inputs[" + std::to_string(i) + "] is null");
  for (int i = 0; i < num_inputs; ++i) {
    axpby_kernel<<<blocks_for(count), kThreads, 0, stream>>>(
        count, coeffs ? coeffs[i] : 1.0f, inputs[i], i == 0 ? 0.0f : 1.0f, y);
    check_launch(what);
  }
}

void softmax_forward(index_t outer, index_t channels, index_t inner, const float* x, float* y,
                     Stream stream) {
  constexpr const char* what = "softmax_forward";
  check_axis(what, outer, channels, inner);
  if (outer * inner == 0) return;
  check_ptr(what, "x", x);
  check_ptr(what, "y", y);
  if (inner == 1)
    softmax_rows_kernel<<<static_cast<unsigned>(outer), kThreads, 0, stream>>>(channels, x, y);
  else
    softmax_strided_kernel<<<blocks_for(outer * inner), kThreads, 0, stream>>>(outer, channels,
                                                                               inner, x, y);
  check_launch(what);
}

void softmax_backward(index_t outer, index_t channels, index_t inner, const float* y,
                      const float* dy, float* dx, Stream stream) {
  constexpr const char* what = "softmax_backward";
  check_axis(what, outer, channels, inner);
  if (outer * inner == 0) return;
  check_ptr(what, "y", y);
  check_ptr(what, "dy", dy);
  check_ptr(what, "dx", dx);
  if (inner == 1)
    softmax_bwd_rows_kernel<<<static_cast<unsigned>(outer), kThreads, 0, stream>>>(channels, y, dy,
                                                                                   dx);
  else
    softmax_bwd_strided_kernel<<<blocks_for(outer * inner), kThreads, 0, stream>>>(
        outer, channels, inner, y, dy, dx);
  check_launch(what);
}

}  // namespace taihu::dnn_cuda
