// Every layer's backward checked against central differences of the Net's loss
// (Caffe's GradientChecker idea), through a Net: Input -> layer -> objective.
#include <cmath>
#include <cstring>
#include <utility>

#include "caffe_test_util.hpp"

namespace taihu::caffe::test {
namespace {

// Builds Input(x [shape]) -> <layer text> -> TestObjective, fills inputs and params.
std::unique_ptr<Net> make_net(const std::string& inputs, const std::string& layer, const std::string& objective_bottoms,
                              std::uint64_t seed = 1) {
  const std::string text = "name: 'g' force_backward: true\n" + inputs + layer +
                           "layer { name: 'obj' type: 'TestObjective' " + objective_bottoms + " top: 'loss' }\n";
  auto net = std::make_unique<Net>(net_from_text(text), proto::TRAIN, test_registry());
  for (int i = 0; i < net->num_layers(); ++i) {
    if (std::string(net->layers()[static_cast<std::size_t>(i)]->type()) == "Input") {
      for (Blob* b : net->top_vecs()[static_cast<std::size_t>(i)]) fill_spaced(b, seed++);
    }
  }
  for (Blob* p : net->learnable_params()) fill_spaced(p, seed++, 0.5f);
  return net;
}

std::string input(const std::string& name, const std::string& dims) {
  std::string shape;
  std::size_t start = 0;
  while (start < dims.size()) {
    const auto x = dims.find('x', start);
    shape += " dim: " + dims.substr(start, x == std::string::npos ? std::string::npos : x - start);
    if (x == std::string::npos) break;
    start = x + 1;
  }
  return "layer { name: 'in_" + name + "' type: 'Input' top: '" + name + "' input_param { shape {" + shape + " } } }\n";
}

TEST(CaffeGradient, Convolution) {
  auto net = make_net(input("x", "2x3x7x6"),
                      "layer { name: 'c' type: 'Convolution' bottom: 'x' top: 'y' convolution_param { num_output: 4 "
                      "kernel_size: 3 stride: 2 pad: 1 } }\n",
                      "bottom: 'y'");
  check_gradients(*net);
}

TEST(CaffeGradient, ConvolutionGroupsDilationNoBias) {
  auto net = make_net(input("x", "1x4x7x7"),
                      "layer { name: 'c' type: 'Convolution' bottom: 'x' top: 'y' convolution_param { num_output: 6 "
                      "kernel_size: 3 group: 2 dilation: 2 bias_term: false } }\n",
                      "bottom: 'y'");
  check_gradients(*net);
}

TEST(CaffeGradient, PoolingMaxAndAverage) {
  for (const char* pool : {"MAX", "AVE"}) {
    auto net = make_net(input("x", "2x2x7x7"),
                        std::string("layer { name: 'p' type: 'Pooling' bottom: 'x' top: 'y' pooling_param { pool: ") + pool +
                            " kernel_size: 3 stride: 2 pad: 1 } }\n",
                        "bottom: 'y'");
    SCOPED_TRACE(pool);
    check_gradients(*net);
  }
}

TEST(CaffeGradient, InnerProductAndTranspose) {
  for (const char* t : {"false", "true"}) {
    auto net = make_net(input("x", "3x2x2x3"),
                        std::string("layer { name: 'ip' type: 'InnerProduct' bottom: 'x' top: 'y' inner_product_param { "
                                    "num_output: 5 transpose: ") + t + " } }\n",
                        "bottom: 'y'");
    SCOPED_TRACE(t);
    check_gradients(*net);
  }
}

TEST(CaffeGradient, ActivationsInPlaceAndNot) {
  for (const char* type : {"ReLU", "Sigmoid", "TanH"}) {
    SCOPED_TRACE(type);
    auto net = make_net(input("x", "2x3x4"),
                        std::string("layer { name: 'ip' type: 'InnerProduct' bottom: 'x' top: 'h' inner_product_param { num_output: 7 } }\n"
                                    "layer { name: 'a' type: '") + type + "' bottom: 'h' top: 'h' }\n",
                        "bottom: 'h'");
    check_gradients(*net);
    auto net2 = make_net(input("x", "2x3x4"), std::string("layer { name: 'a' type: '") + type + "' bottom: 'x' top: 'y' }\n", "bottom: 'y'");
    check_gradients(*net2);
  }
  auto leaky = make_net(input("x", "2x9"), "layer { name: 'a' type: 'ReLU' bottom: 'x' top: 'y' relu_param { negative_slope: 0.1 } }\n", "bottom: 'y'");
  check_gradients(*leaky);
}

TEST(CaffeGradient, DropoutWithFixedMask) {
  auto net = make_net(input("x", "4x50"), "layer { name: 'd' type: 'Dropout' bottom: 'x' top: 'y' dropout_param { dropout_ratio: 0.3 } }\n",
                      "bottom: 'y'");
  GradientCheckOptions opt;
  opt.before_forward = [](Net& n) { n.layer_by_name("d")->load_state("7"); };  // same mask every pass
  check_gradients(*net, opt);
  // The mask really drops units and scales the kept ones by 1 / (1 - ratio).
  net->layer_by_name("d")->load_state("7");
  net->forward();
  const Blob* x = net->blob_by_name("x");
  const Blob* y = net->blob_by_name("y");
  int dropped = 0;
  for (std::int64_t i = 0; i < x->count(); ++i) {
    if (y->data()[i] == 0.f) ++dropped;
    else EXPECT_FLOAT_EQ(y->data()[i], x->data()[i] / 0.7f);
  }
  EXPECT_GT(dropped, 30);
  EXPECT_LT(dropped, 90);
}

TEST(CaffeGradient, LRNAcrossAndWithin) {
  for (const char* region : {"ACROSS_CHANNELS", "WITHIN_CHANNEL"}) {
    SCOPED_TRACE(region);
    auto net = make_net(input("x", "2x7x3x3"),
                        std::string("layer { name: 'n' type: 'LRN' bottom: 'x' top: 'y' lrn_param { local_size: 3 alpha: 0.5 "
                                    "beta: 0.75 norm_region: ") + region + " } }\n",
                        "bottom: 'y'");
    check_gradients(*net);
  }
}

TEST(CaffeGradient, BatchNormThenScale) {
  auto net = make_net(input("x", "4x3x2x2"),
                      "layer { name: 'bn' type: 'BatchNorm' bottom: 'x' top: 'y' }\n"
                      "layer { name: 's' type: 'Scale' bottom: 'y' top: 'y' scale_param { bias_term: true } }\n",
                      "bottom: 'y'");
  GradientCheckOptions opt;
  opt.threshold = 2e-2f;
  check_gradients(*net, opt);
}

TEST(CaffeGradient, EltwiseSumProdMax) {
  for (const char* op : {"SUM coeff: 2 coeff: -0.5", "PROD", "MAX"}) {
    SCOPED_TRACE(op);
    auto net = make_net(input("a", "2x3x4") + input("b", "2x3x4"),
                        std::string("layer { name: 'e' type: 'Eltwise' bottom: 'a' bottom: 'b' top: 'y' eltwise_param { operation: ") + op + " } }\n",
                        "bottom: 'y'");
    check_gradients(*net);
  }
}

TEST(CaffeGradient, ConcatFlattenReshape) {
  auto net = make_net(input("a", "2x3x2x2") + input("b", "2x1x2x2"),
                      "layer { name: 'c' type: 'Concat' bottom: 'a' bottom: 'b' top: 'y' }\n"
                      "layer { name: 'f' type: 'Flatten' bottom: 'y' top: 'f' }\n"
                      "layer { name: 'r' type: 'Reshape' bottom: 'f' top: 'r' reshape_param { shape { dim: 0 dim: -1 dim: 4 } } }\n"
                      "layer { name: 'ip' type: 'InnerProduct' bottom: 'r' top: 'z' inner_product_param { num_output: 3 axis: 2 } }\n",
                      "bottom: 'z'");
  EXPECT_EQ(net->blob_by_name("f")->shape(), (std::vector<int>{2, 16}));
  EXPECT_EQ(net->blob_by_name("r")->shape(), (std::vector<int>{2, 4, 4}));
  EXPECT_EQ(net->blob_by_name("z")->shape(), (std::vector<int>{2, 4, 3}));
  check_gradients(*net);
}

TEST(CaffeGradient, Softmax) {
  auto net = make_net(input("x", "3x5x2"), "layer { name: 's' type: 'Softmax' bottom: 'x' top: 'y' }\n", "bottom: 'y'");
  check_gradients(*net);
}

TEST(CaffeGradient, SoftmaxWithLossAndAccuracy) {
  const std::string text =
      "force_backward: true\n" + input("x", "6x4") + input("label", "6") +
      "layer { name: 'loss' type: 'SoftmaxWithLoss' bottom: 'x' bottom: 'label' top: 'loss' loss_weight: 2 }\n";
  Net net(net_from_text(text), proto::TRAIN);
  fill_spaced(net.blob_by_name("x"), 3);
  const float labels[6] = {0, 3, 1, 2, 3, 0};
  std::memcpy(net.blob_by_name("label")->mutable_data(), labels, sizeof labels);
  // Independent reference loss in double.
  const float* x = net.blob_by_name("x")->data();
  double ref = 0;
  for (int i = 0; i < 6; ++i) {
    double m = -1e30, s = 0;
    for (int c = 0; c < 4; ++c) m = std::max(m, static_cast<double>(x[i * 4 + c]));
    for (int c = 0; c < 4; ++c) s += std::exp(x[i * 4 + c] - m);
    ref -= (x[i * 4 + static_cast<int>(labels[i])] - m) - std::log(s);
  }
  EXPECT_NEAR(net.forward(), 2 * ref / 6, 1e-5);
  GradientCheckOptions opt;
  opt.skip_blobs = {"label"};
  check_gradients(net, opt);
}

TEST(CaffeGradient, EuclideanLoss) {
  const std::string text = "force_backward: true\n" + input("a", "3x4") + input("b", "3x4") +
                           "layer { name: 'loss' type: 'EuclideanLoss' bottom: 'a' bottom: 'b' top: 'loss' }\n";
  Net net(net_from_text(text), proto::TRAIN);
  fill_spaced(net.blob_by_name("a"), 1);
  fill_spaced(net.blob_by_name("b"), 2);
  double ref = 0;
  for (int i = 0; i < 12; ++i) {
    const double d = net.blob_by_name("a")->data()[i] - net.blob_by_name("b")->data()[i];
    ref += d * d;
  }
  EXPECT_NEAR(net.forward(), ref / 3 / 2, 1e-6);
  check_gradients(net);
}

TEST(CaffeGradient, LSTM) {
  const std::string text = "force_backward: true\n" + input("x", "3x2x4") + input("cont", "3x2") +
                           "layer { name: 'lstm' type: 'LSTM' bottom: 'x' bottom: 'cont' top: 'h' recurrent_param { num_output: 3 "
                           "weight_filler { type: 'uniform' min: -0.3 max: 0.3 } } }\n"
                           "layer { name: 'obj' type: 'TestObjective' bottom: 'h' top: 'loss' }\n";
  Net net(net_from_text(text), proto::TRAIN, test_registry());
  fill_spaced(net.blob_by_name("x"), 5);
  const float cont[6] = {0, 0, 1, 1, 1, 0};  // stream 1 restarts at step 2
  std::memcpy(net.blob_by_name("cont")->mutable_data(), cont, sizeof cont);
  EXPECT_EQ(net.blob_by_name("h")->shape(), (std::vector<int>{3, 2, 3}));
  GradientCheckOptions opt;
  opt.skip_blobs = {"cont"};
  check_gradients(net, opt);
}

// Caffe's optional third bottom x_static [N][S]: finite differences for x, x_static
// and all four parameter blobs (W_xc, b_c, W_xc_static, W_hc in Caffe's order).
TEST(CaffeGradient, LSTMWithStaticInput) {
  const std::string text = "force_backward: true\n" + input("x", "3x2x4") + input("cont", "3x2") + input("xs", "2x5") +
                           "layer { name: 'lstm' type: 'LSTM' bottom: 'x' bottom: 'cont' bottom: 'xs' top: 'h' "
                           "recurrent_param { num_output: 3 weight_filler { type: 'uniform' min: -0.3 max: 0.3 } } }\n"
                           "layer { name: 'obj' type: 'TestObjective' bottom: 'h' top: 'loss' }\n";
  Net net(net_from_text(text), proto::TRAIN, test_registry());
  const auto& blobs = net.layer_by_name("lstm")->blobs();
  ASSERT_EQ(blobs.size(), 4u);
  EXPECT_EQ(blobs[2]->shape(), (std::vector<int>{12, 5}));  // W_xc_static
  EXPECT_EQ(blobs[3]->shape(), (std::vector<int>{12, 3}));  // W_hc
  fill_spaced(net.blob_by_name("x"), 5);
  fill_spaced(net.blob_by_name("xs"), 9);
  const float cont[6] = {0, 0, 1, 1, 1, 0};
  std::memcpy(net.blob_by_name("cont")->mutable_data(), cont, sizeof cont);
  GradientCheckOptions opt;
  opt.skip_blobs = {"cont"};
  check_gradients(net, opt);
}

// The static term is W_xc_static x_static added to every step's gates: with the same
// other weights, x_static = 0 gives the plain LSTM's output and a non-zero one does not.
TEST(CaffeGradient, LSTMStaticInputEntersEveryStep) {
  const std::string lstm = "recurrent_param { num_output: 3 weight_filler { type: 'uniform' min: -0.3 max: 0.3 } } }\n";
  Net plain(net_from_text(input("x", "3x2x4") + input("cont", "3x2") +
                          "layer { name: 'lstm' type: 'LSTM' bottom: 'x' bottom: 'cont' top: 'h' " + lstm),
            proto::TRAIN);
  Net with(net_from_text(input("x", "3x2x4") + input("cont", "3x2") + input("xs", "2x5") +
                         "layer { name: 'lstm' type: 'LSTM' bottom: 'x' bottom: 'cont' bottom: 'xs' top: 'h' " + lstm),
           proto::TRAIN);
  const auto& pb = plain.layer_by_name("lstm")->blobs();
  const auto& wb = with.layer_by_name("lstm")->blobs();
  for (auto [from, to] : {std::pair{0, 0}, std::pair{1, 1}, std::pair{2, 3}}) {
    std::memcpy(wb[static_cast<std::size_t>(to)]->mutable_data(), pb[static_cast<std::size_t>(from)]->data(),
                sizeof(float) * static_cast<std::size_t>(pb[static_cast<std::size_t>(from)]->count()));
  }
  fill_spaced(wb[2].get(), 3, 0.5f);
  for (Net* n : {&plain, &with}) {
    fill_spaced(n->blob_by_name("x"), 5);
    n->blob_by_name("cont")->set_data(1.f);
  }
  with.blob_by_name("xs")->set_data(0.f);
  plain.forward();
  with.forward();
  const Blob* a = plain.blob_by_name("h");
  const Blob* b = with.blob_by_name("h");
  for (std::int64_t i = 0; i < a->count(); ++i) EXPECT_NEAR(a->data()[i], b->data()[i], 1e-6) << i;
  // A fresh net with x_static != 0 (the state carried between passes reset alike).
  Net with2(net_from_text(input("x", "3x2x4") + input("cont", "3x2") + input("xs", "2x5") +
                          "layer { name: 'lstm' type: 'LSTM' bottom: 'x' bottom: 'cont' bottom: 'xs' top: 'h' " + lstm),
            proto::TRAIN);
  for (std::size_t j = 0; j < 4; ++j) {
    std::memcpy(with2.layer_by_name("lstm")->blobs()[j]->mutable_data(), wb[j]->data(), sizeof(float) * static_cast<std::size_t>(wb[j]->count()));
  }
  fill_spaced(with2.blob_by_name("x"), 5);
  with2.blob_by_name("cont")->set_data(0.f);  // step 0 of every stream already differs
  fill_spaced(with2.blob_by_name("xs"), 9);
  with2.forward();
  // Every step (all of them restart: cont = 0) sees the static term: h differs from
  // the plain LSTM restarted the same way.
  plain.blob_by_name("cont")->set_data(0.f);
  plain.forward();
  const Blob* c = with2.blob_by_name("h");
  const std::int64_t per_step = c->count(1);
  for (int t = 0; t < 3; ++t) {
    double diff = 0;
    for (std::int64_t i = 0; i < per_step; ++i) diff += std::fabs(c->data()[t * per_step + i] - a->data()[t * per_step + i]);
    EXPECT_GT(diff, 1e-3) << "step " << t;
  }
}

}  // namespace
}  // namespace taihu::caffe::test
