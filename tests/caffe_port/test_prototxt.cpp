// Prototxt parsing: BVLC's files load unmodified, errors carry file:line:column and
// name the unknown field or layer type, include/exclude rules filter by phase/stage.
#include <fstream>

#include "caffe_test_util.hpp"
#include "taihu/arch/error.hpp"

namespace taihu::caffe::test {
namespace {

TEST(CaffePrototxt, UnknownFieldNamesItWithLineAndColumn) {
  proto::NetParameter p;
  const std::string text = "name: 'x'\nlayer {\n  name: 'a'\n  type: 'ReLU'\n  bogus_field: 3\n}\n";
  const std::string e = error_of([&] { parse_text(text, "net.prototxt", &p); });
  EXPECT_NE(e.find("net.prototxt:5:"), std::string::npos) << e;
  EXPECT_NE(e.find("bogus_field"), std::string::npos) << e;
}

TEST(CaffePrototxt, SyntaxErrorPosition) {
  proto::SolverParameter p;
  const std::string e = error_of([&] { parse_text("base_lr: 0.1\nmax_iter: ten\n", "s.prototxt", &p); });
  EXPECT_NE(e.find("s.prototxt:2:11:"), std::string::npos) << e;
}

TEST(CaffePrototxt, FileErrorsNameTheFile) {
  TempDir dir;
  const std::string path = dir / "bad.prototxt";
  std::ofstream(path) << "layer {\n  name: 'a'\n  type: 'Convolution'\n  convolution_param { num_output: -3 }\n}\n";
  const std::string e = error_of([&] { read_net_param(path); });
  EXPECT_NE(e.find(path + ":4:"), std::string::npos) << e;
  EXPECT_NE(error_of([&] { read_net_param(dir / "missing.prototxt"); }).find("missing.prototxt"), std::string::npos);
}

TEST(CaffePrototxt, UnknownLayerTypeIsNamed) {
  LogCapture quiet;
  const std::string e = error_of([] {
    Net net(net_from_text("layer { name: 'w' type: 'Wibble' top: 'y' }"), proto::TRAIN);
  });
  EXPECT_NE(e.find("unknown layer type \"Wibble\""), std::string::npos) << e;
  EXPECT_NE(e.find("layer w"), std::string::npos) << e;
}

TEST(CaffePrototxt, MissingBottomIsNamed) {
  LogCapture quiet;
  const std::string e = error_of([] {
    Net net(net_from_text("layer { name: 'r' type: 'ReLU' bottom: 'nothing' top: 'y' }"), proto::TRAIN);
  });
  EXPECT_NE(e.find("\"nothing\""), std::string::npos) << e;
}

TEST(CaffePrototxt, PhaseLevelAndStageRules) {
  proto::NetParameter p = net_from_text(R"(
    layer { name: 'train_only' type: 'ReLU' include { phase: TRAIN } }
    layer { name: 'test_only' type: 'ReLU' include { phase: TEST } }
    layer { name: 'not_test' type: 'ReLU' exclude { phase: TEST } }
    layer { name: 'deep' type: 'ReLU' include { min_level: 2 } }
    layer { name: 'staged' type: 'ReLU' include { stage: 'a' stage: 'b' } }
    layer { name: 'not_b' type: 'ReLU' include { not_stage: 'b' } }
    layer { name: 'always' type: 'ReLU' }
  )");
  auto names = [&](proto::Phase phase, int level, std::vector<std::string> stages) {
    proto::NetState s;
    s.set_phase(phase);
    s.set_level(level);
    for (auto& st : stages) s.add_stage(st);
    std::vector<std::string> out;
    const proto::NetParameter kept = Net::filter(p, s);
    for (const auto& l : kept.layer()) out.push_back(l.name());
    return out;
  };
  using V = std::vector<std::string>;
  EXPECT_EQ(names(proto::TRAIN, 0, {}), (V{"train_only", "not_test", "not_b", "always"}));
  EXPECT_EQ(names(proto::TEST, 0, {}), (V{"test_only", "not_b", "always"}));
  EXPECT_EQ(names(proto::TEST, 3, {"a", "b"}), (V{"test_only", "deep", "staged", "always"}));
  EXPECT_EQ(names(proto::TEST, 0, {"a"}), (V{"test_only", "not_b", "always"}));
}

TEST(CaffePrototxt, BvlcFilesParseUnmodified) {
  for (const char* f : {"caffe/lenet_train_test.prototxt", "caffe/lenet.prototxt", "caffe/cifar10_quick_train_test.prototxt",
                        "caffe/cifar10_quick.prototxt", "caffe/bvlc_alexnet_deploy.prototxt"}) {
    if (!have_shared_data(f)) GTEST_SKIP() << "no " << shared_data(f) << " (../shared/data absent)";
    SCOPED_TRACE(f);
    const proto::NetParameter p = read_net_param(shared_data(f));
    EXPECT_GT(p.layer_size(), 5);
  }
  for (const char* f : {"caffe/lenet_solver.prototxt", "caffe/cifar10_quick_solver.prototxt"}) {
    const proto::SolverParameter s = read_solver_param(shared_data(f));
    EXPECT_GT(s.max_iter(), 0);
    EXPECT_EQ(s.solver_mode(), proto::SolverParameter::GPU);
  }
}

TEST(CaffePrototxt, BvlcDeployNetsBuild) {
  if (!have_shared_data("caffe/lenet.prototxt")) GTEST_SKIP() << "../shared/data absent";
  LogCapture quiet;
  Net lenet(read_net_param(shared_data("caffe/lenet.prototxt")), proto::TEST);
  EXPECT_EQ(lenet.blob_by_name("prob")->shape(), (std::vector<int>{64, 10}));
  Net cifar(read_net_param(shared_data("caffe/cifar10_quick.prototxt")), proto::TEST);
  EXPECT_EQ(cifar.blob_by_name("prob")->shape(), (std::vector<int>{1, 10}));
  // AlexNet deploy: groups, LRN, dropout; 60.9 M parameters.
  Net alex(read_net_param(shared_data("caffe/bvlc_alexnet_deploy.prototxt")), proto::TEST);
  std::int64_t params = 0;
  for (const Blob* b : alex.learnable_params()) params += b->count();
  EXPECT_EQ(params, 60965224);
  EXPECT_EQ(alex.blob_by_name("prob")->shape(), (std::vector<int>{10, 1000}));
}

}  // namespace
}  // namespace taihu::caffe::test
