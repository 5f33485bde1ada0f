// Helpers for taihu::caffe's tests: building nets from prototxt snippets, a
// registry with a test objective layer, synthetic data on disk, captured logs, and
// Caffe's GradientChecker idea through the Net (central differences vs backward()).
#pragma once
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "taihu/arch/error.hpp"
#include "taihu/caffe/layer_registry.hpp"
#include "taihu/caffe/log.hpp"
#include "taihu/caffe/net.hpp"
#include "taihu/caffe/proto.hpp"
#include "error_text.hpp"

namespace taihu::caffe::test {

using taihu_test::error_of;

inline proto::NetParameter net_from_text(const std::string& text) {
  proto::NetParameter p;
  parse_text(text, "<test>", &p);
  return p;
}

// Objective for gradient checks: loss = sum_i w_i * y_i over all bottoms, with fixed
// pseudo-random weights w_i (so every output element matters differently).
class TestObjectiveLayer : public Layer {
 public:
  using Layer::Layer;
  const char* type() const override { return "TestObjective"; }
  int min_bottoms() const override { return 1; }
  int exact_tops() const override { return 1; }
  bool is_loss() const override { return true; }
  static float weight(std::int64_t i) { return static_cast<float>(std::sin(0.37 * static_cast<double>(i) + 0.1)); }
  void reshape(const BlobVec&, const BlobVec& top) override { top[0]->reshape({}); }
  void forward(const BlobVec& bottom, const BlobVec& top) override {
    double s = 0;
    for (Blob* b : bottom)
      for (std::int64_t i = 0; i < b->count(); ++i) s += static_cast<double>(weight(i)) * b->data()[i];
    top[0]->mutable_data()[0] = static_cast<float>(s);
  }
  void backward(const BlobVec& top, const std::vector<bool>& down, const BlobVec& bottom) override {
    for (std::size_t k = 0; k < bottom.size(); ++k) {
      if (!down[k]) continue;
      for (std::int64_t i = 0; i < bottom[k]->count(); ++i) bottom[k]->mutable_diff()[i] = weight(i) * top[0]->diff()[0];
    }
  }
};

inline const LayerRegistry& test_registry() {
  static const LayerRegistry r = [] {
    LayerRegistry reg = LayerRegistry::builtin();
    reg.add("TestObjective", [](const proto::LayerParameter& p) { return std::unique_ptr<Layer>(new TestObjectiveLayer(p)); });
    return reg;
  }();
  return r;
}

// Fills a blob with values spaced at least `gap` apart (no ties or kinks within a
// finite-difference step), shuffled, in [-1, 1] scaled by `scale`.
inline void fill_spaced(Blob* b, std::uint64_t seed, float scale = 1.f) {
  const auto n = static_cast<std::size_t>(b->count());
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) {
    v[i] = scale * (-1.f + 2.f * (static_cast<float>(i) + 0.5f) / static_cast<float>(n));
  }
  std::mt19937_64 rng(seed);
  std::shuffle(v.begin(), v.end(), rng);
  // Keep away from 0 (ReLU's kink).
  for (auto& x : v) if (std::fabs(x) < 0.02f * scale) x += 0.04f * scale;
  std::copy(v.begin(), v.end(), b->mutable_data());
}

struct GradientCheckOptions {
  float step = 1e-2f;
  float threshold = 1e-2f;  // relative to max(1, |analytic|, |numeric|)
  int max_checks_per_blob = 120;
  std::vector<std::string> skip_blobs;  // input blob names not to check (labels)
  std::function<void(Net&)> before_forward;  // e.g. reset a dropout stream
};

// Checks d(loss)/d(every input blob and every learnable parameter) of `net` against
// central differences of net.forward(). Inputs must come from Input layers.
inline void check_gradients(Net& net, const GradientCheckOptions& opt = {}) {
  auto run_forward = [&] {
    if (opt.before_forward) opt.before_forward(net);
    return static_cast<double>(net.forward());
  };
  net.clear_param_diffs();
  run_forward();
  net.backward();
  struct Target { Blob* blob; std::string name; std::vector<float> analytic; };
  std::vector<Target> targets;
  for (int i = 0; i < net.num_layers(); ++i) {
    if (std::string(net.layers()[static_cast<std::size_t>(i)]->type()) != "Input") continue;
    const auto& lp = net.layers()[static_cast<std::size_t>(i)]->param();
    for (int t = 0; t < lp.top_size(); ++t) {
      if (std::find(opt.skip_blobs.begin(), opt.skip_blobs.end(), lp.top(t)) != opt.skip_blobs.end()) continue;
      Blob* b = net.top_vecs()[static_cast<std::size_t>(i)][static_cast<std::size_t>(t)];
      targets.push_back({b, "input " + lp.top(t), std::vector<float>(b->diff(), b->diff() + b->count())});
    }
  }
  for (std::size_t p = 0; p < net.learnable_params().size(); ++p) {
    if (net.params_lr()[p] == 0.f) continue;
    Blob* b = net.learnable_params()[p];
    targets.push_back({b, "param " + std::to_string(p), std::vector<float>(b->diff(), b->diff() + b->count())});
  }
  ASSERT_FALSE(targets.empty());
  for (auto& t : targets) {
    const std::int64_t n = t.blob->count();
    const std::int64_t stride = std::max<std::int64_t>(1, n / opt.max_checks_per_blob);
    for (std::int64_t i = 0; i < n; i += stride) {
      float* x = t.blob->mutable_data() + i;
      const float saved = *x;
      *x = saved + opt.step;
      const double plus = run_forward();
      *x = saved - opt.step;
      const double minus = run_forward();
      *x = saved;
      const double numeric = (plus - minus) / (2.0 * opt.step);
      const double analytic = t.analytic[static_cast<std::size_t>(i)];
      const double scale = std::max({1.0, std::fabs(numeric), std::fabs(analytic)});
      ASSERT_NEAR(analytic, numeric, opt.threshold * scale) << t.name << " element " << i << " of " << n;
    }
  }
}

// A temporary directory removed at the end of the test.
class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/taihu_caffe_test_XXXXXX";
    path_ = ::mkdtemp(tmpl);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// Captures the log lines while alive (and keeps the test output quiet).
class LogCapture {
 public:
  LogCapture() { set_log_sink([this](const std::string& l) { lines.push_back(l); }); }
  ~LogCapture() { set_log_sink({}); }
  std::vector<std::string> lines;
};

inline std::string shared_data(const std::string& rel);
inline bool have_shared_data(const std::string& rel) { return std::filesystem::exists(shared_data(rel)); }
inline std::string shared_data(const std::string& rel) {
  const char* env = std::getenv("TAIHU_SHARED_DATA");
  return std::string(env ? env : "/work/shared/data") + "/" + rel;
}

}  // namespace taihu::caffe::test
