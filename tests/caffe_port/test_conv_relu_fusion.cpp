// The Net's Convolution + in-place ReLU fusion (Net::fuse_layers, dnn's ReLU post-op):
// which ReLUs fuse, that training with them fused repeats the unfused run's loss
// sequence (TAIHU_CAFFE_FUSE=0), and that a fused run still resumes bit for bit from a
// snapshot. The net has the shape of LeNet's / CIFAR-10 quick's convolutions (1 -> 20
// 5x5, 20 -> 32 5x5 pad 2 with its ReLU before pooling, as CIFAR-10 quick's conv2) on
// synthetic digits.
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>

#include "caffe_test_util.hpp"
#include "taihu/arch/threads.hpp"
#include "taihu/caffe/data_sources.hpp"
#include "taihu/caffe/proto.hpp"
#include "taihu/caffe/solver.hpp"

namespace taihu::caffe::test {
namespace {

std::string fusion_net(const TempDir& dir) {
  return R"(
    name: 'FusionNet'
    layer { name: 'data' type: 'FileData' top: 'data' top: 'label'
            transform_param { scale: 0.00390625 }
            file_data_param { source: ')" + (dir / "img.gz") + "' label_source: '" + (dir / "lab.gz") + R"(' batch_size: 32 shuffle: true } }
    layer { name: 'conv1' type: 'Convolution' bottom: 'data' top: 'conv1'
            convolution_param { num_output: 20 kernel_size: 5 weight_filler { type: 'xavier' } bias_filler { type: 'constant' value: 0.05 } } }
    layer { name: 'relu1' type: 'ReLU' bottom: 'conv1' top: 'conv1' }
    layer { name: 'pool1' type: 'Pooling' bottom: 'conv1' top: 'pool1' pooling_param { pool: MAX kernel_size: 2 stride: 2 } }
    layer { name: 'conv2' type: 'Convolution' bottom: 'pool1' top: 'conv2'
            convolution_param { num_output: 32 kernel_size: 5 pad: 2 weight_filler { type: 'xavier' } } }
    layer { name: 'relu2' type: 'ReLU' bottom: 'conv2' top: 'conv2' }
    layer { name: 'conv3' type: 'Convolution' bottom: 'conv2' top: 'conv3'
            convolution_param { num_output: 16 kernel_size: 3 pad: 1 weight_filler { type: 'xavier' } } }
    layer { name: 'relu3' type: 'ReLU' bottom: 'conv3' top: 'conv3' relu_param { negative_slope: 0.1 } }
    layer { name: 'pool2' type: 'Pooling' bottom: 'conv3' top: 'pool2' pooling_param { pool: AVE kernel_size: 3 stride: 2 } }
    layer { name: 'ip1' type: 'InnerProduct' bottom: 'pool2' top: 'ip1' inner_product_param { num_output: 10 weight_filler { type: 'xavier' } } }
    layer { name: 'loss' type: 'SoftmaxWithLoss' bottom: 'ip1' bottom: 'label' top: 'loss' }
  )";
}

// Sets (or unsets) an environment variable for a scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value)
      setenv(name, value, 1);
    else
      unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_)
      setenv(name_, old_->c_str(), 1);
    else
      unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

class ConvReluFusion : public ::testing::Test {
 protected:
  void SetUp() override {
    arch::set_num_threads(1);
    const ImageSet set = synthetic_digits(800, 11);
    write_idx_images(dir / "img.gz", set);
    write_idx_labels(dir / "lab.gz", set);
    std::ofstream(dir / "net.prototxt") << fusion_net(dir);
  }
  void TearDown() override { arch::set_num_threads(0); }
  proto::SolverParameter solver_param(const std::string& extra) {
    proto::SolverParameter sp;
    parse_text("net: '" + (dir / "net.prototxt") + "' base_lr: 0.02 momentum: 0.9 weight_decay: 0.0005 lr_policy: 'fixed' "
               "display: 0 random_seed: 5 solver_mode: CPU snapshot_prefix: '" + (dir / "snap") + "' " + extra,
               "<solver>", &sp);
    return sp;
  }
  static std::vector<bool> fused(Solver& s) {
    std::vector<bool> f;
    for (int i = 0; i < s.net().num_layers(); ++i) f.push_back(s.net().fused_into_previous(i));
    return f;
  }
  TempDir dir;
  LogCapture quiet;
};

// Fused, the ReLU's max(y, 0) is applied to the same float the unfused convolution
// stores (in the kernel's output tile, or a pass where the entry does not fuse), and the
// ReLU's backward reads the same values: the losses agree to float rounding; on this
// net they are bitwise equal (the test reports the largest difference it saw). Both runs
// use dnn's heuristic choice (TAIHU_CAFFE_CONV_TUNE=0), so they run the same entries.
TEST_F(ConvReluFusion, FusedTrainingRepeatsTheUnfusedLossSequence) {
  ScopedEnv no_tuning("TAIHU_CAFFE_CONV_TUNE", "0");
  constexpr int kIters = 40;
  std::vector<float> losses[2];
  std::vector<std::vector<float>> final_weights[2];
  for (int fuse = 0; fuse < 2; ++fuse) {
    ScopedEnv env("TAIHU_CAFFE_FUSE", fuse ? nullptr : "0");
    auto solver = create_solver(solver_param("max_iter: " + std::to_string(kIters) + " snapshot_after_train: false"));
    // Layers: data conv1 relu1 pool1 conv2 relu2 conv3 relu3 pool2 ip1 loss. relu3 has a
    // negative slope: never fused.
    const std::vector<bool> want = {false, false, fuse == 1, false, false, fuse == 1,
                                    false, false, false, false, false};
    EXPECT_EQ(fused(*solver), want) << "fuse " << fuse;
    solver->solve();
    losses[fuse] = solver->losses();
    for (const Blob* p : solver->net().learnable_params())
      final_weights[fuse].emplace_back(p->data(), p->data() + p->count());
  }
  ASSERT_EQ(losses[0].size(), static_cast<std::size_t>(kIters));
  ASSERT_EQ(losses[1].size(), losses[0].size());
  double max_rel = 0;
  for (std::size_t i = 0; i < losses[0].size(); ++i) {
    const double rel = std::abs(double(losses[1][i]) - losses[0][i]) / std::max(1e-30, std::abs(double(losses[0][i])));
    max_rel = std::max(max_rel, rel);
    EXPECT_LE(rel, 1e-6) << "iteration " << i << ": fused " << losses[1][i] << " unfused " << losses[0][i];
  }
  double max_w = 0;
  for (std::size_t p = 0; p < final_weights[0].size(); ++p)
    for (std::size_t k = 0; k < final_weights[0][p].size(); ++k)
      max_w = std::max(max_w, std::abs(double(final_weights[1][p][k]) - final_weights[0][p][k]));
  EXPECT_LE(max_w, 1e-5);
  EXPECT_LT(losses[0].back(), losses[0].front());  // it trained
  std::printf("[ fusion   ] %d iterations: largest relative loss difference fused vs unfused %.3g, "
              "largest weight difference %.3g\n",
              kIters, max_rel, max_w);
}

// A fused run (timed entry choice, saved in the snapshot) resumes bit for bit.
TEST_F(ConvReluFusion, FusedRunResumesFromASnapshotExactly) {
  auto full = create_solver(solver_param("max_iter: 30 snapshot: 15"));
  full->solve();
  ASSERT_EQ(full->losses().size(), 30u);
  auto resumed = create_solver(solver_param("max_iter: 30 snapshot: 15"));
  EXPECT_TRUE(resumed->net().fused_into_previous(2));
  resumed->solve(dir / "snap_iter_15.solverstate");
  ASSERT_EQ(resumed->losses().size(), 15u);
  for (std::size_t i = 0; i < 15; ++i) EXPECT_EQ(resumed->losses()[i], full->losses()[15 + i]) << "iteration " << 15 + i;
  for (std::size_t p = 0; p < full->net().learnable_params().size(); ++p) {
    const Blob* a = full->net().learnable_params()[p];
    const Blob* b = resumed->net().learnable_params()[p];
    for (std::int64_t k = 0; k < a->count(); ++k) ASSERT_EQ(a->data()[k], b->data()[k]);
  }
}

}  // namespace
}  // namespace taihu::caffe::test
