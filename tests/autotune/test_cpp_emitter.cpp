// The standalone C++ generator: generated code is compiled with the system compiler in
// the test (make_cpp_kernel), run, and compared with the reference interpreter over the
// whole output, at sampled schedule points of several specs.
#include <gtest/gtest.h>

#include <filesystem>

#include "taihu/autotune/backend.hpp"
#include "taihu/autotune/cpp_emitter.hpp"
#include "taihu/autotune/interpreter.hpp"
#include "taihu/autotune/parser.hpp"

namespace ta = taihu::autotune;

namespace {

std::string workdir() { return (std::filesystem::temp_directory_path() / "taihu-autotune-test").string(); }

// Runs `count` seeded random valid points (the first is the default point) and checks them.
void check_points(const std::string& spec, const std::string& shape, int count, std::uint64_t seed,
                  const std::map<std::string, std::string>& force = {}) {
  ta::Problem p(ta::parse_spec_file(std::string(TAIHU_DSL_DIR) + "/" + spec + ".tdsl"), ta::parse_shape(shape));
  ta::Space space(p);
  auto in = ta::random_inputs(p, seed);
  std::vector<const float*> ptrs;
  for (const auto& n : p.inputs()) ptrs.push_back(in[n].data());
  ta::SplitMix64 rng(seed);
  for (int i = 0; i < count; ++i) {
    ta::Point pt = i == 0 && space.valid(space.default_point()) ? space.default_point() : space.random(rng);
    auto m = space.to_map(pt);
    for (const auto& [k, v] : force) m[k] = v;
    pt = space.from_map(m);
    if (!space.valid(pt)) {
      --i;
      continue;
    }
    SCOPED_TRACE(spec + ": " + space.describe(pt));
    const ta::Schedule s = space.schedule(pt);
    auto k = ta::make_cpp_kernel(p, s, 2, workdir());
    std::vector<float> out(static_cast<std::size_t>(p.tensor(p.output()).size()), -7.0f);
    k->run(ptrs, out.data());
    auto want = ta::interpret(p, s.algorithm, in);
    auto a = ta::compare_outputs(out, want, ta::default_tolerance(p, s.algorithm));
    EXPECT_TRUE(a.ok) << a.message;
  }
}

}  // namespace

TEST(AutotuneCppEmitter, GemmPoints) { check_points("gemm", "M=37,N=45,K=19", 2, 3); }
TEST(AutotuneCppEmitter, ConvBothAlgorithms) {
  check_points("conv2d", "N=1,C=5,H=9,W=11,KO=6,R=3,S=3,P=1", 1, 4, {{"algorithm", "direct"}});
  check_points("conv2d", "N=1,C=5,H=9,W=11,KO=6,R=3,S=3,P=1", 1, 5, {{"algorithm", "im2col"}});
}
TEST(AutotuneCppEmitter, CacheBlocksWithEdges) {
  // blocks that do not divide the loop, tiles inside them, the parallel loop blocked
  // (gemm: m) or tiled outside the blocks (conv: k over blocks of oh); each emitted
  // kernel compiled and checked in full
  check_points("gemm", "M=37,N=150,K=19", 1, 8,
               {{"block m", "24"}, {"block n", "64"}, {"tile m", "6"}, {"tile n", "16"}, {"tile k", "19"}, {"order", "k m n"},
                {"vectorize n", "16"}, {"unroll m", "6"}, {"parallel", "m"}, {"layout B", "direct"}});
  check_points("conv2d", "N=1,C=5,H=9,W=11,KO=6,R=3,S=3,P=1", 1, 10,
               {{"algorithm", "direct"}, {"block k", "6"}, {"block oh", "4"}, {"tile k", "2"}, {"tile oh", "2"}, {"tile ow", "8"},
                {"parallel", "k"}, {"vectorize ow", "8"}, {"unroll k", "2"}, {"unroll oh", "1"}, {"order", "n k oh c r s ow"}});
}
// The emitted source really contains the block loops.
TEST(AutotuneCppEmitter, BlockLoopsAreEmitted) {
  ta::Problem p(ta::parse_spec_file(std::string(TAIHU_DSL_DIR) + "/gemm.tdsl"), ta::parse_shape("M=96,N=64,K=64"));
  ta::Space space(p);
  auto m = space.to_map(space.default_point());
  m["block m"] = "48";
  m["tile m"] = "8";
  m["parallel"] = "m";
  const ta::Schedule s = space.schedule(space.from_map(m));
  ASSERT_EQ(s.block.count("m"), 1u);
  const std::string src = ta::emit_cpp(p, s, "f");
  const auto block = src.find("for (std::int64_t m_b = 0; m_b < 96; m_b += 48)");
  const auto tile = src.find("for (std::int64_t m_o = m_b; m_o < std::min<std::int64_t>(m_b + 48, 96); m_o += 8)");
  ASSERT_NE(block, std::string::npos) << src;
  ASSERT_NE(tile, std::string::npos) << src;
  EXPECT_LT(block, tile);
  EXPECT_NE(src.rfind("#pragma omp parallel for", block), std::string::npos);
}
TEST(AutotuneCppEmitter, StencilStepsAndSoftmax) {
  check_points("stencil7", "Z=6,Y=7,X=19,T=3", 1, 6);
  check_points("softmax", "ROWS=5,COLS=33", 1, 7);
}

TEST(AutotuneCppEmitter, SourceIsStandalone) {
  ta::Problem p(ta::parse_spec_file(std::string(TAIHU_DSL_DIR) + "/gemm.tdsl"), ta::parse_shape("M=8,N=8,K=8"));
  ta::Space space(p);
  const std::string src = ta::emit_cpp(p, space.schedule(space.default_point()), "my_gemm");
  EXPECT_NE(src.find("extern \"C\" void my_gemm(const float* A_in, const float* B_in, float* C_out)"), std::string::npos);
  EXPECT_NE(src.find("#pragma omp parallel for"), std::string::npos);
  EXPECT_NE(src.find("#pragma omp simd"), std::string::npos);
  EXPECT_EQ(src.find("taihu/"), std::string::npos) << "generated code must not need taihu headers";
  EXPECT_EQ(src.find("Halide"), std::string::npos);
}
