// Scale/Bias, Eltwise SUM/PROD/MAX, Concat/Slice/Split: forward against naive loops,
// backward by finite differences in double, Caffe's MAX tie rule, accumulate
// semantics, argument errors.
#include <gtest/gtest.h>

#include <vector>

#include "ops_test_support.hpp"
#include "taihu/arch/error.hpp"
#include "taihu/dnn/concat.hpp"
#include "taihu/dnn/eltwise.hpp"
#include "taihu/dnn/scale.hpp"

namespace {

using namespace taihu::dnn;
using ops_test::OpsTest;

TEST_F(OpsTest, ScaleForwardMatchesNaive) {
  for (const auto& [outer, dim, inner] :
       {std::tuple<index_t, index_t, index_t>{2, 3, 17}, {5, 7, 1}, {1, 4, 4099}}) {
    const index_t count = outer * dim * inner;
    const auto x = ops_test::random_vector<float>(count, rng);
    const auto s = ops_test::random_vector<float>(dim, rng);
    const auto b = ops_test::random_vector<float>(dim, rng);
    std::vector<float> y(count), y_nobias(count), y_bias_only(count);
    scale_forward(outer, dim, inner, x.data(), s.data(), b.data(), y.data());
    scale_forward(outer, dim, inner, x.data(), s.data(), static_cast<const float*>(nullptr),
                  y_nobias.data());
    scale_forward(outer, dim, inner, x.data(), static_cast<const float*>(nullptr), b.data(),
                  y_bias_only.data());
    std::vector<double> r(count), r_nobias(count), r_bias(count);
    for (index_t o = 0; o < outer; ++o)
      for (index_t d = 0; d < dim; ++d)
        for (index_t i = 0; i < inner; ++i) {
          const index_t at = (o * dim + d) * inner + i;
          r_nobias[at] = double(x[at]) * s[d];
          r[at] = r_nobias[at] + b[d];
          r_bias[at] = double(x[at]) + b[d];
        }
    ops_test::expect_close(y, r, 1e-6, 1e-6, "scale+bias");
    ops_test::expect_close(y_nobias, r_nobias, 1e-6, 1e-6, "scale");
    ops_test::expect_close(y_bias_only, r_bias, 1e-6, 1e-6, "bias");
  }
}

TEST_F(OpsTest, ScaleBackwardByFiniteDifferencesAndAccumulates) {
  const index_t outer = 3, dim = 4, inner = 5, count = outer * dim * inner;
  auto x = ops_test::random_vector<double>(count, rng);
  auto s = ops_test::random_vector<double>(dim, rng);
  auto b = ops_test::random_vector<double>(dim, rng);
  const auto w = ops_test::random_vector<double>(count, rng);
  std::vector<double> dx(count), ds(dim, 7.0), db(dim, 7.0);
  scale_backward(outer, dim, inner, x.data(), s.data(), w.data(), dx.data(), ds.data(), db.data(),
                 false);
  const auto objective = [&] {
    std::vector<double> y(count);
    scale_forward(outer, dim, inner, x.data(), s.data(), b.data(), y.data());
    return ops_test::dot(w, y);
  };
  ops_test::expect_gradient(x, dx, objective, "scale dx");
  ops_test::expect_gradient(s, ds, objective, "scale dscale");
  ops_test::expect_gradient(b, db, objective, "scale dbias");
  // accumulate adds to what is there.
  std::vector<double> ds2 = ds, db2 = db;
  scale_backward(outer, dim, inner, x.data(), s.data(), w.data(), static_cast<double*>(nullptr),
                 ds2.data(), db2.data(), true);
  for (index_t d = 0; d < dim; ++d) {
    EXPECT_NEAR(ds2[d], 2 * ds[d], 1e-12);
    EXPECT_NEAR(db2[d], 2 * db[d], 1e-12);
  }
  // in place: dx written over dy after the parameter gradients were taken from it.
  std::vector<double> g = w, ds3(dim), db3(dim);
  scale_backward(outer, dim, inner, x.data(), s.data(), g.data(), g.data(), ds3.data(), db3.data(),
                 false);
  ops_test::expect_close(g, dx, 0, 1e-15, "scale backward in place dx");
  ops_test::expect_close(ds3, ds, 0, 1e-15, "scale backward in place dscale");
}

TEST_F(OpsTest, ScaleRejectsBadSizes) {
  std::vector<float> v(8);
  try {
    scale_forward(2, 0, 4, v.data(), v.data(), v.data(), v.data());
    FAIL();
  } catch (const taihu::Error& e) {
    EXPECT_NE(std::string(e.what()).find("dim"), std::string::npos) << e.what();
  }
}

TEST_F(OpsTest, EltwiseForwardMatchesNaive) {
  const index_t n = 10007;
  const auto a = ops_test::random_vector<float>(n, rng), b = ops_test::random_vector<float>(n, rng),
             c = ops_test::random_vector<float>(n, rng);
  const std::vector<const float*> in{a.data(), b.data(), c.data()};
  const std::vector<float> coeffs{0.5f, -2.0f, 1.5f};
  std::vector<float> y(n);
  std::vector<std::int32_t> mask(n);
  eltwise_forward(EltwiseOp::sum, n, in, coeffs, y.data(), nullptr);
  std::vector<double> r(n);
  for (index_t i = 0; i < n; ++i) r[i] = 0.5 * a[i] - 2.0 * b[i] + 1.5 * c[i];
  ops_test::expect_close(y, r, 1e-6, 1e-6, "eltwise sum");
  eltwise_forward(EltwiseOp::prod, n, in, {}, y.data(), nullptr);
  for (index_t i = 0; i < n; ++i) r[i] = double(a[i]) * b[i] * c[i];
  ops_test::expect_close(y, r, 1e-7, 1e-6, "eltwise prod");
  eltwise_forward(EltwiseOp::max, n, in, {}, y.data(), mask.data());
  for (index_t i = 0; i < n; ++i) {
    const int arg = a[i] > b[i] ? (c[i] > a[i] ? 2 : 0) : (c[i] > b[i] ? 2 : 1);
    ASSERT_EQ(mask[i], arg) << i;
    ASSERT_EQ(y[i], in[arg][i]) << i;
  }
}

TEST_F(OpsTest, EltwiseMaxTiesFollowCaffe) {
  const std::vector<float> a{1, 2, 3}, b{1, 2, 0}, c{1, 5, 3};
  std::vector<float> y(3);
  std::vector<std::int32_t> mask(3);
  eltwise_forward<float>(EltwiseOp::max, 3, std::vector<const float*>{a.data(), b.data(), c.data()},
                         {}, y.data(), mask.data());
  EXPECT_EQ(mask, (std::vector<std::int32_t>{1, 2, 0}));  // a==b -> 1; c==max later -> keeps
}

TEST_F(OpsTest, EltwiseBackwardByFiniteDifferences) {
  const index_t n = 40;
  std::vector<std::vector<double>> x(3);
  for (auto& v : x) v = ops_test::random_vector<double>(n, rng, 0.2, 2.0);
  const auto w = ops_test::random_vector<double>(n, rng);
  const std::vector<double> coeffs{1.5, -0.5, 2.0};
  for (const EltwiseOp op : {EltwiseOp::sum, EltwiseOp::prod, EltwiseOp::max}) {
    const auto ptrs = [&] {
      return std::vector<const double*>{x[0].data(), x[1].data(), x[2].data()};
    };
    std::vector<double> y(n);
    std::vector<std::int32_t> mask(n);
    const std::vector<double> cf = op == EltwiseOp::sum ? coeffs : std::vector<double>{};
    eltwise_forward(op, n, ptrs(), cf, y.data(), mask.data());
    for (index_t which = 0; which < 3; ++which) {
      std::vector<double> dx(n);
      eltwise_backward(op, n, ptrs(), cf, mask.data(), w.data(), which, dx.data());
      ops_test::expect_gradient(
          x[which], dx,
          [&] {
            std::vector<double> out(n);
            eltwise_forward(op, n, ptrs(), cf, out.data(), nullptr);
            return ops_test::dot(w, out);
          },
          "eltwise op " + std::to_string(int(op)) + " input " + std::to_string(which));
    }
  }
}

TEST_F(OpsTest, EltwiseRejectsBadArguments) {
  std::vector<float> a(4), y(4);
  try {
    eltwise_forward<float>(EltwiseOp::sum, 4, std::vector<const float*>{a.data()}, {}, y.data(),
                           nullptr);
    FAIL();
  } catch (const taihu::Error& e) {
    EXPECT_NE(std::string(e.what()).find("inputs"), std::string::npos) << e.what();
  }
  try {
    eltwise_forward<float>(EltwiseOp::sum, 4, std::vector<const float*>{a.data(), a.data()},
                           std::vector<float>{1.0f}, y.data(), nullptr);
    FAIL();
  } catch (const taihu::Error& e) {
    EXPECT_NE(std::string(e.what()).find("coeffs"), std::string::npos) << e.what();
  }
}

TEST_F(OpsTest, ConcatSliceSplitMatchNaive) {
  const index_t outer = 3, inner = 5;
  const std::vector<index_t> ch{2, 0, 4, 1};
  std::vector<std::vector<float>> in;
  std::vector<const float*> ptrs;
  for (const index_t c : ch) {
    in.push_back(ops_test::random_vector<float>(outer * c * inner, rng));
    ptrs.push_back(in.back().data());
  }
  const index_t total = 7;
  std::vector<float> y(outer * total * inner, -1.0f);
  concat_forward(outer, inner, ch, ptrs, y.data());
  index_t off = 0;
  for (std::size_t i = 0; i < ch.size(); ++i) {
    for (index_t o = 0; o < outer; ++o)
      for (index_t c = 0; c < ch[i]; ++c)
        for (index_t j = 0; j < inner; ++j)
          ASSERT_EQ(y[(o * total + off + c) * inner + j], in[i][(o * ch[i] + c) * inner + j]);
    off += ch[i];
  }
  // Backward (= Slice) gives the pieces back; a null output is skipped.
  std::vector<std::vector<float>> back;
  std::vector<float*> bptrs;
  for (const index_t c : ch) {
    back.emplace_back(outer * c * inner, 0.0f);
    bptrs.push_back(back.back().data());
  }
  bptrs[3] = nullptr;
  concat_backward(outer, inner, ch, y.data(), bptrs);
  for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(back[i], in[i]) << i;
  EXPECT_EQ(back[3], std::vector<float>(outer * inner, 0.0f));
  // Split backward sums the top diffs.
  std::vector<float> dx(20);
  const auto d1 = ops_test::random_vector<float>(20, rng),
             d2 = ops_test::random_vector<float>(20, rng);
  split_backward(20, std::vector<const float*>{d1.data(), d2.data()}, dx.data());
  for (int i = 0; i < 20; ++i) EXPECT_FLOAT_EQ(dx[i], d1[i] + d2[i]);
  try {
    concat_forward(outer, inner, std::vector<index_t>{2, 3}, ptrs, y.data());
    FAIL();
  } catch (const taihu::Error& e) {
    EXPECT_NE(std::string(e.what()).find("channels"), std::string::npos) << e.what();
  }
}

}  // namespace
