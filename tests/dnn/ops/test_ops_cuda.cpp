// taihu::dnn_cuda elementwise operators against taihu::dnn's CPU operators (same
// semantics): activations, scale/bias (with parameter gradients), eltwise sum,
// softmax over rows and over a strided axis. GPU tests skip per test without a device;
// the argument checks run everywhere (they launch nothing).
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "ops_test_support.hpp"
#include "taihu/arch/error.hpp"
#include "taihu/dnn/activation.hpp"
#include "taihu/dnn/scale.hpp"
#include "taihu/dnn/softmax.hpp"
#include "taihu/dnn_cuda/elementwise.hpp"

namespace {

namespace cpu = taihu::dnn;
namespace gpu = taihu::dnn_cuda;
using cpu::index_t;

bool have_gpu() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

#define REQUIRE_GPU() \
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device"

class Device {
 public:
  explicit Device(const std::vector<float>& host) : n_(host.size()) {
    if (cudaMalloc(reinterpret_cast<void**>(&p_), (n_ + 1) * sizeof(float)) != cudaSuccess)
      throw std::runtime_error("cudaMalloc");
    cudaMemcpy(p_, host.data(), n_ * sizeof(float), cudaMemcpyHostToDevice);
  }
  explicit Device(std::size_t n) : Device(std::vector<float>(n, 0.0f)) {}
  ~Device() { cudaFree(p_); }
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;
  float* get() const { return p_; }
  std::vector<float> host() const {
    std::vector<float> h(n_);
    cudaDeviceSynchronize();
    cudaMemcpy(h.data(), p_, n_ * sizeof(float), cudaMemcpyDeviceToHost);
    return h;
  }

 private:
  std::size_t n_;
  float* p_ = nullptr;
};

class CudaOpsTest : public ::testing::Test {
 protected:
  std::mt19937_64 rng{777};
};

TEST_F(CudaOpsTest, ActivationsMatchCpu) {
  REQUIRE_GPU();
  const index_t n = 1000003;
  const auto x = ops_test::random_vector<float>(n, rng, -6, 6);
  const auto dy = ops_test::random_vector<float>(n, rng);
  Device dx_in(x), ddy(dy), dyo(n), ddx(n);
  std::vector<float> y(n), dx(n);
  gpu::relu_forward(n, dx_in.get(), dyo.get(), 0.1f);
  cpu::relu_forward(n, x.data(), y.data(), 0.1f);
  ops_test::expect_close(dyo.host(), y, 0, 0, "relu forward");
  gpu::relu_backward(n, dx_in.get(), ddy.get(), ddx.get(), 0.1f);
  cpu::relu_backward(n, x.data(), dy.data(), dx.data(), 0.1f);
  ops_test::expect_close(ddx.host(), dx, 0, 0, "relu backward");
  gpu::sigmoid_forward(n, dx_in.get(), dyo.get());
  cpu::sigmoid_forward(n, x.data(), y.data());
  ops_test::expect_close(dyo.host(), y, 1e-6, 1e-5, "sigmoid forward");
  gpu::sigmoid_backward(n, dyo.get(), ddy.get(), ddx.get());
  cpu::sigmoid_backward(n, y.data(), dy.data(), dx.data());
  ops_test::expect_close(ddx.host(), dx, 1e-6, 1e-5, "sigmoid backward");
  gpu::tanh_forward(n, dx_in.get(), dyo.get());
  cpu::tanh_forward(n, x.data(), y.data());
  ops_test::expect_close(dyo.host(), y, 1e-6, 1e-5, "tanh forward");
  gpu::tanh_backward(n, dyo.get(), ddy.get(), ddx.get());
  cpu::tanh_backward(n, y.data(), dy.data(), dx.data());
  ops_test::expect_close(ddx.host(), dx, 1e-6, 1e-5, "tanh backward");
}

TEST_F(CudaOpsTest, ScaleAndEltwiseSumMatchCpu) {
  REQUIRE_GPU();
  const index_t outer = 7, dim = 13, inner = 333, count = outer * dim * inner;
  const auto x = ops_test::random_vector<float>(count, rng);
  const auto dy = ops_test::random_vector<float>(count, rng);
  const auto s = ops_test::random_vector<float>(dim, rng);
  const auto b = ops_test::random_vector<float>(dim, rng);
  Device gx(x), gdy(dy), gs(s), gb(b), gy(count), gdx(count), gds(std::vector<float>(dim, 1.0f)),
      gdb(std::vector<float>(dim, 1.0f));
  std::vector<float> y(count), dx(count), ds(dim, 1.0f), db(dim, 1.0f);
  gpu::scale_forward(outer, dim, inner, gx.get(), gs.get(), gb.get(), gy.get());
  cpu::scale_forward(outer, dim, inner, x.data(), s.data(), b.data(), y.data());
  ops_test::expect_close(gy.host(), y, 1e-6, 1e-6, "scale forward");
  gpu::scale_backward(outer, dim, inner, gx.get(), gs.get(), gdy.get(), gdx.get(), gds.get(),
                      gdb.get(), true);
  cpu::scale_backward(outer, dim, inner, x.data(), s.data(), dy.data(), dx.data(), ds.data(),
                      db.data(), true);
  ops_test::expect_close(gdx.host(), dx, 1e-6, 1e-6, "scale dx");
  ops_test::expect_close(gds.host(), ds, 1e-3, 1e-4, "scale dscale");
  ops_test::expect_close(gdb.host(), db, 1e-3, 1e-4, "scale dbias");
  const float coeffs[] = {0.5f, -1.0f, 2.0f};
  const float* inputs[] = {gx.get(), gdy.get(), gy.get()};
  gpu::eltwise_sum(count, 3, inputs, coeffs, gdx.get());
  const auto out = gdx.host();
  for (index_t i = 0; i < count; ++i)
    ASSERT_NEAR(out[i], 0.5f * x[i] - dy[i] + 2.0f * y[i], 1e-5) << i;
}

TEST_F(CudaOpsTest, SoftmaxMatchesCpu) {
  REQUIRE_GPU();
  for (const auto& [outer, ch, inner] :
       {std::tuple<index_t, index_t, index_t>{64, 1000, 1}, {3, 21, 500}, {5, 1, 7}}) {
    const index_t count = outer * ch * inner;
    const auto x = ops_test::random_vector<float>(count, rng, -10, 10);
    const auto dy = ops_test::random_vector<float>(count, rng);
    Device gx(x), gdy(dy), gy(count), gdx(count);
    std::vector<float> y(count), dx(count);
    gpu::softmax_forward(outer, ch, inner, gx.get(), gy.get());
    cpu::softmax_forward(outer, ch, inner, x.data(), y.data());
    const std::string what = std::to_string(ch) + "x" + std::to_string(inner);
    ops_test::expect_close(gy.host(), y, 1e-7, 1e-5, "softmax " + what);
    gpu::softmax_backward(outer, ch, inner, gy.get(), gdy.get(), gdx.get());
    cpu::softmax_backward(outer, ch, inner, y.data(), dy.data(), dx.data());
    ops_test::expect_close(gdx.host(), dx, 1e-6, 1e-4, "softmax backward " + what);
  }
}

TEST_F(CudaOpsTest, ArgumentErrorsNameTheArgument) {
  try {
    gpu::relu_forward(-5, nullptr, nullptr);
    FAIL();
  } catch (const taihu::Error& e) {
    EXPECT_NE(std::string(e.what()).find("count"), std::string::npos) << e.what();
  }
  try {
    gpu::softmax_forward(2, 0, 1, nullptr, nullptr);
    FAIL();
  } catch (const taihu::Error& e) {
    EXPECT_NE(std::string(e.what()).find("channels"), std::string::npos) << e.what();
  }
  try {
    gpu::eltwise_sum(10, 0, nullptr, nullptr, nullptr);
    FAIL();
  } catch (const taihu::Error& e) {
    EXPECT_NE(std::string(e.what()).find("num_inputs"), std::string::npos) << e.what();
  }
}

}  // namespace
