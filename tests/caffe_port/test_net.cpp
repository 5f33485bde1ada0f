// Net wiring: in-place layers, automatic splits, outputs, loss weights, parameter
// sharing, lr/decay multipliers, which layers run backward, and the gradient hook.
#include "caffe_test_util.hpp"
#include "taihu/arch/error.hpp"

namespace taihu::caffe::test {
namespace {

const char* kNet = R"(
  name: 'wiring'
  layer { name: 'in' type: 'Input' top: 'x' top: 'label' input_param { shape { dim: 4 dim: 6 } shape { dim: 4 } } }
  layer { name: 'ip1' type: 'InnerProduct' bottom: 'x' top: 'h'
          param { name: 'shared_w' lr_mult: 1 decay_mult: 0.5 } param { lr_mult: 2 decay_mult: 0 }
          inner_product_param { num_output: 6 weight_filler { type: 'gaussian' std: 0.1 } } }
  layer { name: 'relu' type: 'ReLU' bottom: 'h' top: 'h' }
  layer { name: 'ip2' type: 'InnerProduct' bottom: 'h' top: 'h2' param { name: 'shared_w' }
          inner_product_param { num_output: 6 bias_term: false } }
  layer { name: 'ip3' type: 'InnerProduct' bottom: 'h2' top: 'score' inner_product_param { num_output: 3 } }
  layer { name: 'loss' type: 'SoftmaxWithLoss' bottom: 'score' bottom: 'label' top: 'loss' loss_weight: 0.5 }
  layer { name: 'acc' type: 'Accuracy' bottom: 'score' bottom: 'label' top: 'accuracy' }
)";

TEST(CaffeNet, WiringSplitsOutputsAndLossWeights) {
  LogCapture quiet;
  Net net(net_from_text(kNet), proto::TRAIN);
  // 'label' and 'score' feed two layers each: one Split each.
  int splits = 0;
  for (const auto& l : net.layers()) splits += std::string(l->type()) == "Split";
  EXPECT_EQ(splits, 2);
  // In place: relu's top is ip1's top blob.
  const int relu = static_cast<int>(std::find(net.layer_names().begin(), net.layer_names().end(), "relu") - net.layer_names().begin());
  EXPECT_EQ(net.bottom_vecs()[static_cast<std::size_t>(relu)][0], net.top_vecs()[static_cast<std::size_t>(relu)][0]);
  ASSERT_EQ(net.output_blobs().size(), 2u);
  EXPECT_EQ(net.blob_names()[static_cast<std::size_t>(net.output_blob_indices()[0])], "loss");
  EXPECT_EQ(net.blob_names()[static_cast<std::size_t>(net.output_blob_indices()[1])], "accuracy");
  EXPECT_FLOAT_EQ(net.output_loss_weight(0), 0.5f);
  EXPECT_FLOAT_EQ(net.output_loss_weight(1), 0.f);
  // The accuracy layer contributes to no loss: no backward for it.
  const int acc = static_cast<int>(std::find(net.layer_names().begin(), net.layer_names().end(), "acc") - net.layer_names().begin());
  EXPECT_FALSE(net.layer_needs_backward(acc));
  EXPECT_TRUE(net.layer_needs_backward(relu));
  // Loss = 0.5 * softmax loss.
  const float loss = net.forward();
  EXPECT_NEAR(loss, 0.5f * net.blob_by_name("loss")->data()[0], 1e-6);
}

TEST(CaffeNet, ParameterSharingAndMultipliers) {
  LogCapture quiet;
  Net net(net_from_text(kNet), proto::TRAIN);
  // ip1 weight (owner), ip1 bias, ip3 weight, ip3 bias: ip2's weight is shared.
  ASSERT_EQ(net.learnable_params().size(), 4u);
  EXPECT_EQ(net.params_lr(), (std::vector<float>{1, 2, 1, 1}));
  EXPECT_EQ(net.params_weight_decay(), (std::vector<float>{0.5f, 0, 1, 1}));
  Layer* ip1 = net.layer_by_name("ip1");
  Layer* ip2 = net.layer_by_name("ip2");
  EXPECT_EQ(ip1->blobs()[0]->data(), ip2->blobs()[0]->data());
  EXPECT_EQ(ip1->blobs()[0]->diff(), ip2->blobs()[0]->diff());
  // The shared weight's gradient is the sum of both uses: check by differences.
  for (int i = 0; i < 24; ++i) net.blob_by_name("x")->mutable_data()[i] = static_cast<float>(std::sin(i * 0.7));
  for (int i = 0; i < 4; ++i) net.blob_by_name("label")->mutable_data()[i] = static_cast<float>(i % 3);
  GradientCheckOptions opt;
  opt.skip_blobs = {"label"};
  check_gradients(net, opt);
}

TEST(CaffeNet, SharedShapeMismatchIsAnError) {
  LogCapture quiet;
  EXPECT_THROW(Net(net_from_text(R"(
    layer { name: 'in' type: 'Input' top: 'x' input_param { shape { dim: 2 dim: 3 } } }
    layer { name: 'a' type: 'InnerProduct' bottom: 'x' top: 'y' param { name: 'w' } inner_product_param { num_output: 4 } }
    layer { name: 'b' type: 'InnerProduct' bottom: 'x' top: 'z' param { name: 'w' } inner_product_param { num_output: 5 } }
  )"), proto::TRAIN), Error);
}

struct RecordingListener : GradientListener {
  std::vector<std::pair<int, std::vector<int>>> calls;
  int done = 0;
  void gradients_ready(int layer, const std::vector<int>& ids) override { calls.emplace_back(layer, ids); }
  void backward_done() override { ++done; }
};

TEST(CaffeNet, GradientHookReportsParamsInBackwardOrder) {
  LogCapture quiet;
  Net net(net_from_text(kNet), proto::TRAIN);
  RecordingListener l;
  net.set_gradient_listener(&l);
  net.forward();
  net.backward();
  EXPECT_EQ(l.done, 1);
  // ip3 (params 2, 3) first; the shared weight only after ip1, its first user.
  ASSERT_EQ(l.calls.size(), 2u);
  EXPECT_EQ(l.calls[0].second, (std::vector<int>{2, 3}));
  EXPECT_EQ(l.calls[1].second, (std::vector<int>{0, 1}));
  EXPECT_GT(l.calls[0].first, l.calls[1].first);
}

TEST(CaffeNet, TrainedWeightsRoundTripAndMismatchErrors) {
  LogCapture quiet;
  Net a(net_from_text(kNet), proto::TRAIN);
  proto::NetParameter saved;
  a.to_proto(&saved);
  Net b(net_from_text(kNet), proto::TEST);
  b.copy_trained_layers_from(saved);
  for (std::size_t i = 0; i < a.learnable_params().size(); ++i) {
    const Blob* pa = a.learnable_params()[i];
    const Blob* pb = b.learnable_params()[i];
    ASSERT_EQ(pa->count(), pb->count());
    for (std::int64_t k = 0; k < pa->count(); ++k) ASSERT_EQ(pa->data()[k], pb->data()[k]);
  }
  saved.mutable_layer(1)->mutable_blobs(0)->mutable_shape()->set_dim(0, 7);
  try {
    b.copy_trained_layers_from(saved);
    FAIL() << "expected a shape error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("layer ip1"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace taihu::caffe::test
