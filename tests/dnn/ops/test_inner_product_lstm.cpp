// InnerProduct (both weight layouts, with and without bias) and Caffe's LSTM: forward
// against naive loops written here, every gradient (data, weights, bias, initial states)
// by finite differences in double, accumulate semantics, argument errors.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "ops_test_support.hpp"
#include "taihu/arch/error.hpp"
#include "taihu/dnn/inner_product.hpp"
#include "taihu/dnn/lstm.hpp"

namespace {

using namespace taihu::dnn;
using ops_test::OpsTest;

TEST_F(OpsTest, InnerProductForwardMatchesNaive) {
  for (const bool transpose : {false, true})
    for (const bool with_bias : {false, true}) {
      const InnerProductShape s{7, 19, 11, transpose};
      const auto x = ops_test::random_vector<float>(7 * 19, rng);
      const auto wt = ops_test::random_vector<float>(19 * 11, rng);
      const auto b = ops_test::random_vector<float>(11, rng);
      std::vector<float> y(7 * 11, 99.0f);
      inner_product_forward(s, x.data(), wt.data(), with_bias ? b.data() : nullptr, y.data());
      std::vector<double> ref(y.size());
      for (index_t m = 0; m < 7; ++m)
        for (index_t n = 0; n < 11; ++n) {
          double acc = with_bias ? b[n] : 0.0;
          for (index_t k = 0; k < 19; ++k)
            acc += double(x[m * 19 + k]) * (transpose ? wt[k * 11 + n] : wt[n * 19 + k]);
          ref[m * 11 + n] = acc;
        }
      ops_test::expect_close(y, ref, 1e-5, 1e-5, "inner product");
    }
}

TEST_F(OpsTest, InnerProductBackwardByFiniteDifferences) {
  for (const bool transpose : {false, true}) {
    const InnerProductShape s{4, 6, 5, transpose};
    auto x = ops_test::random_vector<double>(24, rng);
    auto wt = ops_test::random_vector<double>(30, rng);
    auto b = ops_test::random_vector<double>(5, rng);
    const auto g = ops_test::random_vector<double>(20, rng);
    std::vector<double> dx(24), dw(30), db(5);
    inner_product_backward_data(s, g.data(), wt.data(), dx.data());
    inner_product_backward_weights(s, x.data(), g.data(), dw.data(), db.data(), false);
    const auto objective = [&] {
      std::vector<double> y(20);
      inner_product_forward(s, x.data(), wt.data(), b.data(), y.data());
      return ops_test::dot(g, y);
    };
    ops_test::expect_gradient(x, dx, objective, "ip dx");
    ops_test::expect_gradient(wt, dw, objective, "ip dweight");
    ops_test::expect_gradient(b, db, objective, "ip dbias");
    std::vector<double> dw2 = dw, db2 = db;
    inner_product_backward_weights(s, x.data(), g.data(), dw2.data(), db2.data(), true);
    for (std::size_t i = 0; i < dw.size(); ++i) EXPECT_NEAR(dw2[i], 2 * dw[i], 1e-12);
    for (std::size_t i = 0; i < db.size(); ++i) EXPECT_NEAR(db2[i], 2 * db[i], 1e-12);
  }
}

TEST_F(OpsTest, InnerProductRejectsBadSizes) {
  std::vector<float> v(8);
  try {
    inner_product_forward(InnerProductShape{2, 0, 3, false}, v.data(), v.data(),
                          static_cast<const float*>(nullptr), v.data());
    FAIL();
  } catch (const taihu::Error& e) {
    EXPECT_NE(std::string(e.what()).find("inputs"), std::string::npos) << e.what();
  }
}

// Caffe's LSTM written out gate by gate, in double.
struct NaiveLstm {
  index_t T, N, I, H;
  std::vector<double> h, c;  // [T][N][H]
  void run(const std::vector<double>& x, const std::vector<double>& cont,
           const std::vector<double>& wxc, const std::vector<double>& bc,
           const std::vector<double>& whc, const std::vector<double>& h0,
           const std::vector<double>& c0) {
    h.assign(T * N * H, 0);
    c.assign(T * N * H, 0);
    const auto sig = [](double v) { return 1 / (1 + std::exp(-v)); };
    for (index_t t = 0; t < T; ++t)
      for (index_t n = 0; n < N; ++n) {
        const double* hp = t > 0 ? &h[((t - 1) * N + n) * H] : &h0[n * H];
        const double* cp = t > 0 ? &c[((t - 1) * N + n) * H] : &c0[n * H];
        const double ct = cont[t * N + n];
        std::vector<double> pre(4 * H);
        for (index_t g = 0; g < 4 * H; ++g) {
          double acc = bc[g];
          for (index_t i = 0; i < I; ++i) acc += wxc[g * I + i] * x[(t * N + n) * I + i];
          for (index_t j = 0; j < H; ++j) acc += whc[g * H + j] * ct * hp[j];
          pre[g] = acc;
        }
        for (index_t j = 0; j < H; ++j) {
          const double ig = sig(pre[j]), fg = sig(pre[H + j]), og = sig(pre[2 * H + j]),
                       gg = std::tanh(pre[3 * H + j]);
          const double cc = ct * fg * cp[j] + ig * gg;
          c[(t * N + n) * H + j] = cc;
          h[(t * N + n) * H + j] = og * std::tanh(cc);
        }
      }
  }
};

TEST_F(OpsTest, LstmForwardMatchesNaiveAndBackwardByFiniteDifferences) {
  const LstmShape s{4, 3, 5, 6};
  const index_t T = 4, N = 3, I = 5, H = 6;
  auto x = ops_test::random_vector<double>(T * N * I, rng);
  const std::vector<double> cont{0, 1, 1, 1, 1, 0, 1, 0, 1, 1, 1, 1};  // resets inside the run
  auto wxc = ops_test::random_vector<double>(4 * H * I, rng, -0.5, 0.5);
  auto bc = ops_test::random_vector<double>(4 * H, rng, -0.5, 0.5);
  auto whc = ops_test::random_vector<double>(4 * H * H, rng, -0.5, 0.5);
  auto h0 = ops_test::random_vector<double>(N * H, rng);
  auto c0 = ops_test::random_vector<double>(N * H, rng);
  std::vector<double> h(T * N * H), ws(s.workspace_elements()), h_last(N * H), c_last(N * H);
  const auto weights = [&] { return LstmWeights<double>{wxc.data(), bc.data(), whc.data()}; };
  lstm_forward(s, weights(), x.data(), cont.data(), h0.data(), c0.data(), h.data(), ws.data(),
               h_last.data(), c_last.data());
  NaiveLstm ref{T, N, I, H, {}, {}};
  ref.run(x, cont, wxc, bc, whc, h0, c0);
  ops_test::expect_close(h, ref.h, 1e-12, 1e-10, "lstm h");
  ops_test::expect_close(c_last, std::vector<double>(ref.c.end() - N * H, ref.c.end()), 1e-12,
                         1e-10, "lstm c_last");

  // L = w . h + u . c_last: exercises dh over time and dc_last.
  const auto w = ops_test::random_vector<double>(h.size(), rng);
  const auto u = ops_test::random_vector<double>(N * H, rng);
  std::vector<double> dx(x.size()), dwxc(wxc.size(), 5.0), dbc(bc.size(), 5.0),
      dwhc(whc.size(), 5.0), dh0(N * H), dc0(N * H);
  lstm_backward(s, weights(), x.data(), cont.data(), h0.data(), c0.data(), h.data(), ws.data(),
                w.data(), static_cast<const double*>(nullptr), u.data(), dx.data(),
                LstmWeightGrads<double>{dwxc.data(), dbc.data(), dwhc.data()}, dh0.data(),
                dc0.data(), false);
  const auto objective = [&] {
    std::vector<double> hh(h.size()), wsp(ws.size()), cl(N * H);
    lstm_forward(s, weights(), x.data(), cont.data(), h0.data(), c0.data(), hh.data(), wsp.data(),
                 static_cast<double*>(nullptr), cl.data());
    return ops_test::dot(w, hh) + ops_test::dot(u, cl);
  };
  ops_test::expect_gradient(x, dx, objective, "lstm dx");
  ops_test::expect_gradient(wxc, dwxc, objective, "lstm dW_xc");
  ops_test::expect_gradient(bc, dbc, objective, "lstm db_c");
  ops_test::expect_gradient(whc, dwhc, objective, "lstm dW_hc");
  ops_test::expect_gradient(h0, dh0, objective, "lstm dh0");
  ops_test::expect_gradient(c0, dc0, objective, "lstm dc0");

  // Float agrees with double.
  const auto f = [](const std::vector<double>& v) { return ops_test::convert<float>(v); };
  const auto xf = f(x), cf = f(cont), wxf = f(wxc), bf = f(bc), whf = f(whc);
  std::vector<float> hf(h.size()), wsf(ws.size());
  lstm_forward(s, LstmWeights<float>{wxf.data(), bf.data(), whf.data()}, xf.data(), cf.data(),
               static_cast<const float*>(nullptr), static_cast<const float*>(nullptr), hf.data(),
               wsf.data(), static_cast<float*>(nullptr), static_cast<float*>(nullptr));
  lstm_forward(s, weights(), x.data(), cont.data(), static_cast<const double*>(nullptr),
               static_cast<const double*>(nullptr), h.data(), ws.data(),
               static_cast<double*>(nullptr), static_cast<double*>(nullptr));
  ops_test::expect_close(hf, h, 2e-6, 1e-5, "lstm float vs double");
}

TEST_F(OpsTest, LstmRejectsBadShape) {
  std::vector<float> v(16);
  try {
    lstm_forward(LstmShape{2, 1, 3, 0}, LstmWeights<float>{v.data(), v.data(), v.data()}, v.data(),
                 v.data(), static_cast<const float*>(nullptr), static_cast<const float*>(nullptr),
                 v.data(), v.data(), static_cast<float*>(nullptr), static_cast<float*>(nullptr));
    FAIL();
  } catch (const taihu::Error& e) {
    EXPECT_NE(std::string(e.what()).find("hidden"), std::string::npos) << e.what();
  }
}

}  // namespace
