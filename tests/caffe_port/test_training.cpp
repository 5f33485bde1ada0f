// End to end on synthetic data: IDX and CIFAR readers, LMDB conversion and the Data
// layer (transformations, prefetch order), a short training run whose loss falls,
// exact resume from a snapshot, atomic writes, corrupt files rejected, the PNG curve.
#include <fstream>

#include "caffe_test_util.hpp"
#include "taihu/arch/error.hpp"
#include "taihu/arch/threads.hpp"
#include "taihu/caffe/data_sources.hpp"
#include "taihu/caffe/proto.hpp"
#include "taihu/arch/isa.hpp"
#include "taihu/dnn/tuning_records.hpp"
#include "taihu/caffe/solver.hpp"

namespace taihu::caffe::test {
namespace {

// A small LeNet-like net on FileData (IDX) reading `dir`'s synthetic digits.
std::string small_net(const TempDir& dir, int train_count = 1600) {
  return R"(
    name: 'SmallNet'
    layer { name: 'data' type: 'FileData' top: 'data' top: 'label' include { phase: TRAIN }
            transform_param { scale: 0.00390625 }
            file_data_param { source: ')" + (dir / "img.gz") + "' label_source: '" + (dir / "lab.gz") + "' batch_size: 32 count: " +
         std::to_string(train_count) + R"( shuffle: true } }
    layer { name: 'data' type: 'FileData' top: 'data' top: 'label' include { phase: TEST }
            transform_param { scale: 0.00390625 }
            file_data_param { source: ')" + (dir / "img.gz") + "' label_source: '" + (dir / "lab.gz") + "' batch_size: 50 first: " +
         std::to_string(train_count) + R"( } }
    layer { name: 'conv1' type: 'Convolution' bottom: 'data' top: 'conv1' param { lr_mult: 1 } param { lr_mult: 2 }
            convolution_param { num_output: 8 kernel_size: 5 weight_filler { type: 'xavier' } } }
    layer { name: 'pool1' type: 'Pooling' bottom: 'conv1' top: 'pool1' pooling_param { pool: MAX kernel_size: 2 stride: 2 } }
    layer { name: 'ip1' type: 'InnerProduct' bottom: 'pool1' top: 'ip1' inner_product_param { num_output: 32 weight_filler { type: 'xavier' } } }
    layer { name: 'relu1' type: 'ReLU' bottom: 'ip1' top: 'ip1' }
    layer { name: 'drop' type: 'Dropout' bottom: 'ip1' top: 'ip1' dropout_param { dropout_ratio: 0.2 } }
    layer { name: 'ip2' type: 'InnerProduct' bottom: 'ip1' top: 'ip2' inner_product_param { num_output: 10 weight_filler { type: 'xavier' } } }
    layer { name: 'accuracy' type: 'Accuracy' bottom: 'ip2' bottom: 'label' top: 'accuracy' include { phase: TEST } }
    layer { name: 'loss' type: 'SoftmaxWithLoss' bottom: 'ip2' bottom: 'label' top: 'loss' }
  )";
}

class CaffeTraining : public ::testing::Test {
 protected:
  // One thread: fast on a shared 2-core machine, and two solvers live in one process
  // here (the CLI test checks an exact resume with 2 threads across processes).
  void TearDown() override { arch::set_num_threads(0); }
  void SetUp() override {
    arch::set_num_threads(1);
    const ImageSet set = synthetic_digits(2000, 7);
    write_idx_images(dir / "img.gz", set);
    write_idx_labels(dir / "lab.gz", set);
    std::ofstream(dir / "net.prototxt") << small_net(dir);
  }
  proto::SolverParameter solver_param(const std::string& extra) {
    proto::SolverParameter sp;
    parse_text("net: '" + (dir / "net.prototxt") + "' base_lr: 0.05 momentum: 0.9 weight_decay: 0.0005 lr_policy: 'inv' "
               "gamma: 0.0001 power: 0.75 display: 10 test_iter: 8 test_interval: 30 random_seed: 42 solver_mode: CPU "
               "snapshot_prefix: '" + (dir / "snap") + "' " + extra, "<solver>", &sp);
    return sp;
  }
  TempDir dir;
};

TEST_F(CaffeTraining, IdxRoundTripAndErrors) {
  const ImageSet back = read_idx(dir / "img.gz", dir / "lab.gz");
  const ImageSet orig = synthetic_digits(2000, 7);
  EXPECT_EQ(back.pixels, orig.pixels);
  EXPECT_EQ(back.labels, orig.labels);
  std::ofstream(dir / "short.idx", std::ios::binary) << std::string("\x00\x00\x08\x03\x00\x00\x00\x05", 8);
  EXPECT_NE(error_of([&] { read_idx(dir / "short.idx", ""); }).find("truncated"), std::string::npos);
  EXPECT_NE(error_of([&] { read_idx(dir / "lab.gz", ""); }).find("not an IDX image file"), std::string::npos);
}

TEST_F(CaffeTraining, Cifar10Reader) {
  std::string bytes;
  for (int r = 0; r < 3; ++r) {
    bytes += static_cast<char>(r * 4);
    for (int i = 0; i < 3072; ++i) bytes += static_cast<char>((i + r) % 251);
  }
  std::ofstream(dir / "c.bin", std::ios::binary) << bytes;
  const ImageSet s = read_cifar10(dir / "c.bin");
  ASSERT_EQ(s.count(), 3u);
  EXPECT_EQ(s.labels, (std::vector<int>{0, 4, 8}));
  EXPECT_EQ(s.pixels[3072 + 5], 6);
  std::ofstream(dir / "bad.bin", std::ios::binary) << bytes.substr(0, 5000);
  EXPECT_NE(error_of([&] { read_cifar10(dir / "bad.bin"); }).find("not a whole number"), std::string::npos);
}

TEST_F(CaffeTraining, LmdbDataLayerOrderCropMirrorMean) {
  LogCapture quiet;
  const ImageSet set = read_idx(dir / "img.gz", dir / "lab.gz");
  write_lmdb(set, 100, 40, dir / "db");
  EXPECT_THROW(write_lmdb(set, 0, 1, dir / "db"), Error);  // exists
  const std::string text = "layer { name: 'd' type: 'Data' top: 'data' top: 'label' transform_param { scale: 0.5 mean_value: 10 crop_size: 20 } "
                           "data_param { source: '" + (dir / "db") + "' batch_size: 16 backend: LMDB } }";
  Net net(net_from_text(text), proto::TEST);
  for (int batch = 0; batch < 3; ++batch) {  // wraps around after 40 records
    net.forward();
    for (int j = 0; j < 16; ++j) {
      const int rec = 100 + (batch * 16 + j) % 40;
      ASSERT_EQ(net.blob_by_name("label")->data()[j], set.labels[static_cast<std::size_t>(rec)]);
      // TEST phase: centre crop at offset 4.
      const float got = net.blob_by_name("data")->data()[j * 400 + 3 * 20 + 7];
      const float want = (set.pixels[static_cast<std::size_t>(rec) * 784 + (4 + 3) * 28 + (4 + 7)] - 10.f) * 0.5f;
      ASSERT_FLOAT_EQ(got, want) << "batch " << batch << " item " << j;
    }
  }
  EXPECT_EQ(net.blob_by_name("data")->shape(), (std::vector<int>{16, 1, 20, 20}));
  const std::string e = error_of([&] {
    Net bad(net_from_text("layer { name: 'd' type: 'Data' top: 'data' data_param { source: '/nonexistent/db' batch_size: 4 backend: LMDB } }"),
            proto::TRAIN);
  });
  EXPECT_NE(e.find("/nonexistent/db"), std::string::npos) << e;
}

TEST_F(CaffeTraining, TrainPhaseRandomCropMirrorWithMeanFile) {
  LogCapture quiet;
  const ImageSet set = read_idx(dir / "img.gz", dir / "lab.gz");
  write_lmdb(set, 0, 16, dir / "db16");
  proto::BlobProto mean;
  for (int d : {1, 1, 28, 28}) mean.mutable_shape()->add_dim(d);
  for (int i = 0; i < 784; ++i) mean.add_data(static_cast<float>(i % 7));
  write_binary_atomic(dir / "mean.binaryproto", mean);
  const std::string text = "layer { name: 'd' type: 'Data' top: 'data' top: 'label' transform_param { mirror: true crop_size: 20 "
                           "mean_file: '" + (dir / "mean.binaryproto") + "' } data_param { source: '" + (dir / "db16") +
                           "' batch_size: 16 backend: LMDB } }";
  Net net(net_from_text(text), proto::TRAIN);
  net.forward();
  const float* out = net.blob_by_name("data")->data();
  int mirrored = 0, plain = 0;
  for (int j = 0; j < 16; ++j) {
    const std::uint8_t* img = set.pixels.data() + j * 784;
    bool found = false;
    for (int ho = 0; ho <= 8 && !found; ++ho)
      for (int wo = 0; wo <= 8 && !found; ++wo)
        for (int m = 0; m < 2 && !found; ++m) {
          bool ok = true;
          for (int y = 0; y < 20 && ok; ++y)
            for (int x = 0; x < 20 && ok; ++x) {
              const int src = (y + ho) * 28 + (m ? 19 - x : x) + wo;
              ok = out[j * 400 + y * 20 + x] == static_cast<float>(img[src]) - static_cast<float>(src % 7);
            }
          if (ok) {
            found = true;
            (m ? mirrored : plain)++;
          }
        }
    EXPECT_TRUE(found) << "item " << j << " is no crop/mirror of its record minus the mean";
  }
  EXPECT_GT(mirrored, 0);
  EXPECT_GT(plain, 0);
}

TEST_F(CaffeTraining, LossFallsAndAccuracyRises) {
  LogCapture logs;
  auto solver = create_solver(solver_param("max_iter: 90 snapshot_after_train: false"));
  solver->solve();
  const auto& l = solver->losses();
  ASSERT_EQ(l.size(), 90u);
  double first = 0, last = 0;
  for (int i = 0; i < 10; ++i) first += l[static_cast<std::size_t>(i)], last += l[l.size() - 1 - static_cast<std::size_t>(i)];
  EXPECT_LT(last, 0.5 * first) << "loss did not fall: " << first / 10 << " -> " << last / 10;
  EXPECT_EQ(logs.lines.back().substr(logs.lines.back().find("] ") + 2), "Optimization Done.");
  const auto scores = solver->test_all();
  ASSERT_EQ(scores.size(), 1u);
  EXPECT_GT(scores[0][0], 0.6f) << "test accuracy";
}

TEST_F(CaffeTraining, SnapshotResumeRepeatsTheLossSequenceExactly) {
  LogCapture quiet;
  auto full = create_solver(solver_param("max_iter: 40 snapshot: 20"));
  full->solve();
  ASSERT_EQ(full->losses().size(), 40u);
  const std::string state = dir / "snap_iter_20.solverstate";
  ASSERT_TRUE(std::filesystem::exists(state));
  ASSERT_TRUE(std::filesystem::exists(dir / "snap_iter_20.caffemodel"));
  ASSERT_TRUE(std::filesystem::exists(dir / "snap_iter_40.caffemodel"));
  ASSERT_TRUE(std::filesystem::exists(dir / "snap_curve.png"));
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) {
    EXPECT_EQ(e.path().string().find(".tmp."), std::string::npos) << "temporary left: " << e.path();
  }
  auto resumed = create_solver(solver_param("max_iter: 40 snapshot: 20"));
  resumed->solve(state);
  ASSERT_EQ(resumed->losses().size(), 20u);
  for (std::size_t i = 0; i < 20; ++i) {
    EXPECT_EQ(resumed->losses()[i], full->losses()[20 + i]) << "iteration " << 20 + i;
  }
  // Final weights identical too.
  for (std::size_t p = 0; p < full->net().learnable_params().size(); ++p) {
    const Blob* a = full->net().learnable_params()[p];
    const Blob* b = resumed->net().learnable_params()[p];
    for (std::int64_t k = 0; k < a->count(); ++k) ASSERT_EQ(a->data()[k], b->data()[k]);
  }
}

// Convolution's saved choice (dnn's Convolution::choice()) and the form snapshots held
// before the choice moved into dnn ("batch,explicit_gemm,direct": forward, backward-data,
// backward-weights, "batch" the minibatch path, "direct" the direct kernel of the shape)
// resume the same entries: both repeat the same losses bit for bit.
TEST_F(CaffeTraining, OldConvolutionStateInSnapshotsResumesTheSameEntries) {
  LogCapture quiet;
  auto full = create_solver(solver_param("max_iter: 10 snapshot: 5"));
  full->solve();
  const std::string state_path = dir / "snap_iter_5.solverstate";
  proto::SolverState state;
  read_binary(state_path, "solverstate", &state);
  auto resume_with = [&](const std::string& conv_state) {
    proto::SolverState edited = state;
    int conv_states = 0;
    for (auto& ls : *edited.mutable_layer_state())
      if (ls.state().rfind("forward=", 0) == 0) {
        ls.set_state(conv_state);
        ++conv_states;
      }
    EXPECT_EQ(conv_states, 2) << "conv1 of the TRAIN and the TEST net";
    const std::string path = dir / "edited.solverstate";
    write_binary_atomic(path, edited);
    auto s = create_solver(solver_param("max_iter: 10"));
    s->solve(path);
    std::string saved;
    for (int i = 0; i < s->net().num_layers(); ++i)
      if (s->net().layer_names()[static_cast<std::size_t>(i)] == "conv1") saved = s->net().layer(i).save_state();
    EXPECT_EQ(saved, "forward=minibatch,backward_data=explicit_gemm,backward_weights=direct") << conv_state;
    return s->losses();
  };
  const auto old_form = resume_with("batch,explicit_gemm,direct");
  const auto new_form = resume_with("forward=minibatch,backward_data=explicit_gemm,backward_weights=direct");
  ASSERT_EQ(old_form.size(), 5u);
  EXPECT_EQ(old_form, new_form);
  // A state naming an entry that cannot run the layer is an error naming it.
  EXPECT_THROW(resume_with("forward=pointwise,backward_data=direct,backward_weights=direct"), Error);
}

// TAIHU_CAFFE_CONV_RECORDS: the layer's measured times land in dnn's tuning-record
// format, and the choice it made is the fastest record of each direction.
TEST_F(CaffeTraining, ConvolutionTimingsAreDnnTuningRecords) {
  LogCapture quiet;
  const std::string path = dir / "conv_records.jsonl";
  setenv("TAIHU_CAFFE_CONV_RECORDS", path.c_str(), 1);
  auto s = create_solver(solver_param("max_iter: 1"));
  s->solve();
  unsetenv("TAIHU_CAFFE_CONV_RECORDS");
  const auto records = dnn::TuningRecords::load(path);
  std::string choice;
  for (int i = 0; i < s->net().num_layers(); ++i)
    if (s->net().layer_names()[static_cast<std::size_t>(i)] == "conv1") choice = s->net().layer(i).save_state();
  const std::string key = "mb32ic1ih28oc8oh24kh5";
  for (const char* dir_name : {"forward", "backward_data", "backward_weights"}) {
    const auto best = records.best("conv2d", key, dir_name, arch::isa_name(arch::active_isa()), 1);
    ASSERT_TRUE(best) << dir_name << " in " << path;
    EXPECT_NE(choice.find(std::string(dir_name) + "=" + best->algo), std::string::npos) << choice;
  }
}

TEST_F(CaffeTraining, FineTuneFromWeightsAndCorruptFiles) {
  LogCapture quiet;
  auto s = create_solver(solver_param("max_iter: 5 snapshot: 5"));
  s->solve();
  const std::string model = dir / "snap_iter_5.caffemodel";
  auto t = create_solver(solver_param("max_iter: 5"));
  t->net().copy_trained_layers_from(model);
  for (std::size_t p = 0; p < s->net().learnable_params().size(); ++p) {
    EXPECT_EQ(s->net().learnable_params()[p]->data()[3], t->net().learnable_params()[p]->data()[3]);
  }
  const std::string bytes = read_file(model);
  std::ofstream(dir / "trunc.caffemodel", std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  std::string e = error_of([&] { t->net().copy_trained_layers_from(dir / "trunc.caffemodel"); });
  EXPECT_NE(e.find("trunc.caffemodel"), std::string::npos) << e;
  EXPECT_NE(e.find("corrupt or truncated"), std::string::npos) << e;
  std::ofstream(dir / "junk.solverstate", std::ios::binary) << std::string(100, '\xff');
  e = error_of([&] { t->restore(dir / "junk.solverstate"); });
  EXPECT_NE(e.find("junk.solverstate"), std::string::npos) << e;
  const std::string st = read_file(dir / "snap_iter_5.solverstate");
  std::ofstream(dir / "cut.solverstate", std::ios::binary) << st.substr(0, st.size() - 7);
  e = error_of([&] { t->restore(dir / "cut.solverstate"); });
  EXPECT_NE(e.find("cut.solverstate"), std::string::npos) << e;
  // A model cut exactly after its first layer still parses: restore must notice.
  proto::NetParameter full_model, first_layer_only;
  read_binary(model, "caffemodel", &full_model);
  first_layer_only.set_name(full_model.name());
  for (const auto& l : full_model.layer()) {
    if (l.blobs_size() > 0) {
      first_layer_only.add_layer()->CopyFrom(l);
      break;
    }
  }
  write_binary_atomic(model, first_layer_only);
  e = error_of([&] { t->restore(dir / "snap_iter_5.solverstate"); });
  EXPECT_NE(e.find("no weights for layer ip1"), std::string::npos) << e;
}

TEST(CaffeAtomicWrite, ReplacesWholeFileAndLeavesNoTemporary) {
  TempDir dir;
  const std::string path = dir / "f.bin";
  write_file_atomic(path, "first version");
  write_file_atomic(path, "v2");
  EXPECT_EQ(read_file(path), "v2");
  int files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) ++files, (void)e;
  EXPECT_EQ(files, 1);
  EXPECT_THROW(write_file_atomic(dir / "no/such/dir/f.bin", "x"), Error);
}

}  // namespace
}  // namespace taihu::caffe::test
