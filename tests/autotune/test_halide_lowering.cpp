// Halide lowering (built only with Halide): JIT kernels at a few schedule points of
// gemm and the 7-point stencil (with and without time blocking) match the reference
// interpreter over the whole output; AOT writes a static library and header.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include <atomic>
#include <thread>
#include <vector>

#include "codegen/task_pool.hpp"
#include "taihu/autotune/backend.hpp"
#include "taihu/autotune/interpreter.hpp"
#include "taihu/autotune/parser.hpp"

namespace ta = taihu::autotune;

namespace {
void check(const ta::Problem& p, const ta::Space& space, const std::map<std::string, std::string>& m) {
  ta::Point pt = space.from_map(m);
  ASSERT_TRUE(space.valid(pt)) << space.why_invalid(pt);
  SCOPED_TRACE(space.describe(pt));
  auto in = ta::random_inputs(p, 17);
  std::vector<const float*> ptrs;
  for (const auto& n : p.inputs()) ptrs.push_back(in[n].data());
  const ta::Schedule s = space.schedule(pt);
  auto k = ta::make_halide_kernel(p, s, 2);
  std::vector<float> out(static_cast<std::size_t>(p.tensor(p.output()).size()), -7.0f);
  k->run(ptrs, out.data());
  auto a = ta::compare_outputs(out, ta::interpret(p, s.algorithm, in), ta::default_tolerance(p, s.algorithm));
  EXPECT_TRUE(a.ok) << a.message;
}
}  // namespace

TEST(AutotuneHalide, GemmSchedulePoints) {
  ASSERT_TRUE(ta::halide_available());
  ta::Problem p(ta::parse_spec_file(std::string(TAIHU_DSL_DIR) + "/gemm.tdsl"), ta::parse_shape("M=40,N=72,K=33"));
  ta::Space space(p);
  const std::map<std::string, std::string> none = {{"block m", "256"}, {"block n", "256"}};
  auto with = [](std::map<std::string, std::string> a, const std::map<std::string, std::string>& b) {
    a.insert(b.begin(), b.end());
    return a;
  };
  check(p, space, with(none, {{"tile m", "8"}, {"tile n", "32"}, {"tile k", "64"}, {"order", "m k n"}, {"vectorize n", "8"},
                              {"unroll m", "2"}, {"parallel", "m"}, {"layout B", "direct"}}));
  check(p, space, with(none, {{"tile m", "16"}, {"tile n", "16"}, {"tile k", "64"}, {"order", "k m n"}, {"vectorize n", "16"},
                              {"unroll m", "4"}, {"parallel", "n"}, {"layout B", "staged"}}));
  // Two levels: register tiles inside cache blocks (edge blocks and tiles included).
  check(p, space, {{"block m", "24"}, {"block n", "64"}, {"tile m", "6"}, {"tile n", "32"}, {"tile k", "64"}, {"order", "k m n"},
                   {"vectorize n", "16"}, {"unroll m", "6"}, {"parallel", "m"}, {"layout B", "packed"}});
  // ... with the reduction blocked too (the accumulator covers a block).
  ta::Problem pk(ta::parse_spec_file(std::string(TAIHU_DSL_DIR) + "/gemm.tdsl"), ta::parse_shape("M=40,N=72,K=150"));
  ta::Space sk(pk);
  check(pk, sk, {{"block m", "24"}, {"block n", "64"}, {"tile m", "6"}, {"tile n", "32"}, {"tile k", "64"}, {"order", "k m n"},
                 {"vectorize n", "16"}, {"unroll m", "6"}, {"parallel", "n"}, {"layout B", "staged"}});
  // ... with tiles that do not divide the block (the last one guarded, nothing read past B)
  check(pk, sk, {{"block m", "256"}, {"block n", "64"}, {"tile m", "6"}, {"tile n", "32"}, {"tile k", "64"}, {"order", "k m n"},
                 {"vectorize n", "8"}, {"unroll m", "1"}, {"parallel", "m"}, {"layout B", "direct"}});
}

TEST(AutotuneHalide, SoftmaxRowReductionsInVectorLanes) {
  // rfactor: the row max and sum in 8/16 partial lanes (combined per row), temps per
  // tile or at root; and the stated accuracy of fast_exp (the shipped spec's exp):
  // relative error per element < 1e-5 against the double reference.
  ta::Problem p(ta::parse_spec_file(std::string(TAIHU_DSL_DIR) + "/softmax.tdsl"), ta::parse_shape("ROWS=37,COLS=256"));
  ta::Space space(p);
  auto m = space.to_map(space.default_point());
  m["tile r"] = "4";
  m["vectorize c"] = "16";
  m["compute_at e"] = "tile";
  m["compute_at mx"] = "tile";
  m["compute_at sm"] = "tile";
  m["rfactor mx"] = "16";
  m["rfactor sm"] = "8";
  check(p, space, m);
  m["compute_at e"] = "inline";
  m["compute_at mx"] = "root";
  m["compute_at sm"] = "root";
  m["rfactor mx"] = "32";
  check(p, space, m);
  // accuracy: inputs spread over [-20, 20] so exp's argument spans [-40, 0]
  auto in = ta::random_inputs(p, 5);
  for (auto& x : in["X"]) x *= 20.0f;
  const ta::Schedule s = space.schedule(space.from_map(m));
  auto k = ta::make_halide_kernel(p, s, 2);
  std::vector<float> out(static_cast<std::size_t>(p.tensor("Y").size()));
  k->run({in["X"].data()}, out.data());
  const auto want = ta::interpret(p, 0, in);
  double worst = 0;
  for (std::size_t i = 0; i < out.size(); ++i)
    if (want[i] > 1e-30f) worst = std::max(worst, std::abs(static_cast<double>(out[i]) - want[i]) / want[i]);
  EXPECT_LT(worst, 1e-5);
  EXPECT_GT(worst, 0.0);  // (float results: not bit-identical to the double reference)
}

TEST(AutotuneHalide, TaskPoolRunsEveryTaskOnce) {
  // The Winograd kernels' parallel loops: every index exactly once, loop after loop
  // (helpers spinning or asleep in between), a failing task's code returned, nested
  // loops run serially inside a task.
  namespace th = taihu::autotune::halide;
  for (int round = 0; round < 200; ++round) {
    const int extent = 1 + round % 37;
    std::vector<std::atomic<int>> hits(static_cast<std::size_t>(extent));
    ASSERT_EQ(th::pool_run(2 + round % 3, extent, [&](int i) {
                hits[static_cast<std::size_t>(i)].fetch_add(1);
                return 0;
              }),
              0);
    for (int i = 0; i < extent; ++i) ASSERT_EQ(hits[static_cast<std::size_t>(i)].load(), 1) << "round " << round << " task " << i;
    if (round % 50 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(2));  // helpers fall asleep
  }
  EXPECT_EQ(th::pool_run(2, 10, [](int i) { return i == 7 ? 3 : 0; }), 3);
  std::atomic<int> inner{0};
  EXPECT_EQ(th::pool_run(2, 4, [&](int) { return th::pool_run(2, 5, [&](int) { return inner.fetch_add(1), 0; }); }), 0);
  EXPECT_EQ(inner.load(), 20);
}

TEST(AutotuneHalide, DepthwiseWindowInsideVectorLoop) {
  // the unrolled 3x3 window runs inside the vectorized loop, input staged per block
  ta::Problem p(ta::parse_spec_file(std::string(TAIHU_DSL_DIR) + "/depthwise_conv.tdsl"), ta::parse_shape("N=1,C=6,H=13,W=21,R=3,S=3,P=1"));
  ta::Space space(p);
  check(p, space, {{"block c", "2"}, {"block oh", "8"}, {"tile c", "1"}, {"tile oh", "4"}, {"tile ow", "16"}, {"order", "n c oh r s ow"},
                   {"vectorize ow", "8"}, {"unroll oh", "1"}, {"unroll r", "3"}, {"unroll s", "3"}, {"parallel", "c"}, {"layout X", "staged"}});
  // rows of accumulators: 4 output rows unrolled over a plane per block (13 rows: the
  // last tile overlaps the one before)
  check(p, space, {{"block c", "1"}, {"block oh", "13"}, {"tile c", "1"}, {"tile oh", "4"}, {"tile ow", "8"}, {"order", "n c oh r s ow"},
                   {"vectorize ow", "8"}, {"unroll oh", "4"}, {"unroll r", "3"}, {"unroll s", "3"}, {"parallel", "c"}, {"layout X", "staged"}});
  check(p, space, {{"block c", "6"}, {"block oh", "13"}, {"tile c", "2"}, {"tile oh", "13"}, {"tile ow", "21"}, {"order", "n c r s oh ow"},
                   {"vectorize ow", "16"}, {"unroll oh", "1"}, {"unroll r", "3"}, {"unroll s", "1"}, {"parallel", "oh"}, {"layout X", "packed"}});
}

TEST(AutotuneHalide, StencilTimeBlocking) {
  ta::Problem p(ta::parse_spec_file(std::string(TAIHU_DSL_DIR) + "/stencil7.tdsl"), ta::parse_shape("Z=6,Y=10,X=40,T=2"));
  ta::Space space(p);
  for (const char* layout : {"direct", "staged"}) {
    // staged: the zero-padded copy of u is made per tile of the step that reads it
    // (step 0's own tiles with timeblock 1, the fused group's tiles with timeblock 2)
    check(p, space, {{"tile z", "2"}, {"tile y", "4"}, {"tile x", "32"}, {"vectorize x", "8"}, {"parallel", "z"}, {"timeblock", "1"}, {"layout u", layout}});
    check(p, space, {{"tile z", "1"}, {"tile y", "8"}, {"tile x", "40"}, {"vectorize x", "8"}, {"parallel", "y"}, {"timeblock", "2"}, {"layout u", layout}});
  }
  ta::Problem p3(ta::parse_spec_file(std::string(TAIHU_DSL_DIR) + "/stencil7.tdsl"), ta::parse_shape("Z=6,Y=10,X=40,T=3"));
  ta::Space space3(p3);
  for (const char* tb : {"1", "2"})
    check(p3, space3, {{"tile z", "2"}, {"tile y", "8"}, {"tile x", "40"}, {"vectorize x", "8"}, {"parallel", "z"}, {"timeblock", tb}, {"layout u", "staged"}});
  // Radius 4 (halo of 8 planes / rows for two fused steps, wider than a tile): the
  // fused intermediate step is materialized zero-padded per tile, the last step reads
  // it without boundary tests; 3 steps with timeblock 2: step 0 whole, steps 1-2 fused.
  for (const char* steps : {"2", "3"}) {
    ta::Problem p25(ta::parse_spec_file(std::string(TAIHU_DSL_DIR) + "/stencil25.tdsl"), ta::parse_shape(std::string("Z=10,Y=12,X=24,T=") + steps));
    ta::Space space25(p25);
    for (const char* layout : {"direct", "staged"})
      check(p25, space25, {{"tile z", "4"}, {"tile y", "8"}, {"tile x", "24"}, {"vectorize x", "8"}, {"parallel", "z"}, {"timeblock", "2"}, {"layout u", layout}});
  }
}

TEST(AutotuneHalide, AotWritesLibraryAndHeader) {
  ta::Problem p(ta::parse_spec_file(std::string(TAIHU_DSL_DIR) + "/gemm.tdsl"), ta::parse_shape("M=16,N=16,K=16"));
  ta::Space space(p);
  const auto dir = std::filesystem::temp_directory_path() / "taihu-autotune-aot-test";
  std::filesystem::create_directories(dir);
  auto files = ta::emit_halide_aot(p, space.schedule(space.default_point()), dir.string(), "tuned_gemm");
  ASSERT_EQ(files.size(), 2u);
  for (const auto& f : files) EXPECT_GT(std::filesystem::file_size(f), 0u) << f;
  std::filesystem::remove_all(dir);
}
