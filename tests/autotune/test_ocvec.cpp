// The derived `ocvec` algorithm (a convolution with output channels in vector lanes and
// packed weights): the space offers it for any window and refuses tiles that do not fit
// the registers, the templates start with it, the C++ emitter refuses it, and (with
// Halide) sampled schedule points -- 1x1, 3x3 and 5x5 windows, padding, batch 2, output
// channels not a multiple of the vector (fewer than one, a ragged last vector, a last
// register tile of fewer vectors), pixel tiles that do not divide the row or exceed it,
// input-channel blocks with a ragged last block, both loop orders -- match the
// reference interpreter over the whole output, including after a change of weights;
// so does ocvec l 1 (pixels in the lanes, dnn's pointwise tile) on 1x1 layers.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "taihu/arch/error.hpp"
#include "taihu/autotune/backend.hpp"
#include "taihu/autotune/cpp_emitter.hpp"
#include "taihu/autotune/interpreter.hpp"
#include "taihu/autotune/parser.hpp"
#include "taihu/autotune/space.hpp"

namespace ta = taihu::autotune;

namespace {

ta::Problem conv2d(const std::string& shape) {
  return ta::Problem(ta::parse_spec_file(std::string(TAIHU_DSL_DIR) + "/conv2d.tdsl"), ta::parse_shape(shape));
}

ta::Point ocvec_point(const ta::Space& space, const std::string& x, const std::string& k, const std::string& c,
                      const std::string& o) {
  auto m = space.to_map(space.default_point());
  m["algorithm"] = "ocvec";
  m["ocvec x"] = x;
  m["ocvec k"] = k;
  m["ocvec c"] = c;
  m["ocvec o"] = o;
  return space.from_map(m);
}

}  // namespace

TEST(AutotuneOcvec, SpaceOffersItForAnyWindowAndChecksRegisters) {
  ta::Problem p = conv2d("N=1,C=16,H=9,W=9,KO=64,R=1,S=1,P=0");
  int a = -1;
  for (int i = 0; i < p.algorithm_count(); ++i)
    if (p.is_ocvec(i)) a = i;
  ASSERT_GE(a, 0);
  EXPECT_EQ(p.conv_unsupported(a), "");  // 1x1: no Winograd, but ocvec runs
  ta::Space space(p);
  const ta::Point fits = ocvec_point(space, "4", "2", "0", "0");  // 8 + 2 + 1 registers
  EXPECT_TRUE(space.valid(fits)) << space.why_invalid(fits);
  // 4 vectors x 8 pixels: 32 accumulators + 4 weight vectors + 1, more than any ISA has.
  const ta::Point spills = ocvec_point(space, "8", "4", "0", "0");
  EXPECT_NE(space.why_invalid(spills).find("would spill"), std::string::npos) << space.why_invalid(spills);
  // Only the ocvec knobs reach the schedule; a pixel tile past the row is clamped.
  const ta::Schedule s = space.schedule(ocvec_point(space, "28", "1", "0", "1"));
  EXPECT_EQ(s.ocvec.x_tile, 9);
  EXPECT_EQ(s.ocvec.rows_outer, 1);
  EXPECT_TRUE(s.tile.empty());
  EXPECT_EQ(s.winograd.m, 0);
  // The templates measure ocvec tiles first on a 1x1 layer (no Winograd there).
  const auto templates = space.templates();
  ASSERT_FALSE(templates.empty());
  EXPECT_EQ(space.schedule(templates.front()).algorithm, a);
}

TEST(AutotuneOcvec, KnobErrorsAndTheCppEmitterRefuses) {
  const std::string base = std::string("operator conv\ndim N, C, H, W, KO, R, S, P\n") +
                           "dim OH = H + 2 * P - R + 1, OW = W + 2 * P - S + 1\n" + "input X : f32[N, C, H, W] boundary zero\n" +
                           "input Wt : f32[KO, C, R, S]\noutput Y : f32[N, KO, OH, OW]\n" +
                           "compute direct {\n  Y[n, k, oh, ow] += X[n, c, oh + r - P, ow + s - P] * Wt[k, c, r, s]\n}\n";
  auto problem_error = [&](const std::string& text) -> std::string {
    try {
      ta::Problem p(ta::parse_spec(text, "o.tdsl"), ta::parse_shape("N=1,C=4,H=5,W=5,KO=8,R=1,S=1,P=0"));
      ta::Space space(p);
    } catch (const taihu::Error& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_NE(problem_error(base + "compute o = ocvec(direct)\nspace {\n  ocvec z : 1\n}\n").find("ocvec knobs are x"), std::string::npos);
  EXPECT_NE(problem_error(base + "space {\n  ocvec x : 8\n}\n").find("need a 'compute NAME = ocvec(BASE)'"), std::string::npos);
  EXPECT_NE(problem_error(base + "compute o = ocvec(direct)\nspace {\n  ocvec k : 8\n}\n").find("out of range"), std::string::npos);
  EXPECT_EQ(problem_error(base + "compute o = ocvec(direct)\nspace {\n  ocvec x : 8\n  ocvec c : 0, 2\n}\n"), "");

  ta::Problem p = conv2d("N=1,C=4,H=6,W=6,KO=8,R=3,S=3,P=1");
  ta::Space space(p);
  try {
    (void)ta::emit_cpp(p, space.schedule(ocvec_point(space, "4", "1", "0", "0")), "f", 1);
    ADD_FAILURE() << "the C++ emitter accepted an ocvec schedule";
  } catch (const taihu::Error& e) {
    EXPECT_NE(std::string(e.what()).find("no ocvec lowering"), std::string::npos) << e.what();
  }
}

TEST(AutotuneOcvec, SampledSchedulePointsMatchTheReference) {
  if (!ta::halide_available()) GTEST_SKIP() << "built without Halide";
  struct Case {
    const char* shape;
    const char* x;
    const char* k;
    const char* c;
    const char* o;
  };
  // K = 20: a ragged last vector on AVX-512 (16 + 4) and AVX2 (8 + 8 + 4); K = 6: fewer
  // than one vector; K = 40 in tiles of 2 vectors: a last tile of fewer vectors (AVX-512:
  // 3 vectors of 16). W = 13: pixel tiles of 4 and 6 do not divide the row (the last
  // shifts inwards), 14 > 13. C = 40 in blocks of 32 (8 left over), 1x1 / 3x3 / 5x5.
  const Case cases[] = {{"N=1,C=16,H=9,W=13,KO=20,R=1,S=1,P=0", "6", "2", "0", "0"},
                        {"N=2,C=5,H=11,W=13,KO=6,R=3,S=3,P=1", "4", "1", "0", "1"},
                        {"N=1,C=40,H=9,W=10,KO=40,R=3,S=3,P=1", "6", "2", "32", "0"},
                        {"N=2,C=40,H=8,W=13,KO=20,R=1,S=1,P=0", "4", "1", "32", "1"},
                        {"N=1,C=33,H=14,W=9,KO=40,R=3,S=3,P=0", "14", "1", "0", "0"},
                        {"N=1,C=7,H=12,W=12,KO=50,R=5,S=5,P=2", "6", "2", "0", "1"},
                        {"N=1,C=24,H=7,W=7,KO=64,R=1,S=1,P=0", "6", "4", "0", "0"},
                        {"N=1,C=64,H=6,W=13,KO=24,R=3,S=3,P=1", "6", "2", "32", "1"}};
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.shape) + " x=" + c.x + " k=" + c.k + " c=" + c.c + " o=" + c.o);
    ta::Problem p = conv2d(c.shape);
    ta::Space space(p);
    const ta::Point pt = ocvec_point(space, c.x, c.k, c.c, c.o);
    if (!space.valid(pt)) {  // e.g. 4 x 6 accumulators on AVX2's 16 registers
      std::printf("  %s: %s (skipped on this ISA)\n", c.shape, space.why_invalid(pt).c_str());
      continue;
    }
    const ta::Schedule s = space.schedule(pt);
    auto kernel = ta::make_halide_kernel(p, s, 2);
    // The second run sees new weights (and image) at another address: both input sets
    // stay alive, as a kernel packs its weights once per weight pointer.
    const ta::TensorMap inputs[2] = {ta::random_inputs(p, 5), ta::random_inputs(p, 6)};
    for (const ta::TensorMap& in : inputs) {
      std::vector<const float*> ptrs;
      for (const auto& n : p.inputs()) ptrs.push_back(in.at(n).data());
      std::vector<float> out(static_cast<std::size_t>(p.tensor(p.output()).size()), std::nanf(""));
      kernel->run(ptrs, out.data());
      const auto want = ta::interpret(p, s.algorithm, in);
      const auto cmp = ta::compare_outputs(out, want, ta::default_tolerance(p, s.algorithm));
      EXPECT_TRUE(cmp.ok) << cmp.message;
    }
  }
}

// ocvec l 1 (dnn's pointwise tile: pixels of the flattened plane in the lanes, weights
// broadcast; 3x3 / 5x5 unpadded windows over whole rows): refused on a padded window;
// against the reference on planes that
// are not a whole number of strips (ShiftInwards), a plane narrower than one strip
// (zero-extended reads), channel tiles that do not divide K, a ragged input-channel
// block, batch 2, both loop orders, and a change of weights (the AVX2 register file
// runs only the 4 x 2 tile).
TEST(AutotuneOcvec, PixelLanesMatchTheReference) {
  auto point = [](const ta::Space& space, const char* x, const char* k, const char* c, const char* o, const char* chunk = "0") {
    auto m = space.to_map(space.default_point());
    m["algorithm"] = "ocvec";
    m["ocvec x"] = x, m["ocvec k"] = k, m["ocvec c"] = c, m["ocvec o"] = o, m["ocvec l"] = "1", m["ocvec s"] = chunk;
    return space.from_map(m);
  };
  {
    ta::Problem p = conv2d("N=1,C=8,H=6,W=6,KO=8,R=3,S=3,P=1");
    ta::Space space(p);
    EXPECT_NE(space.why_invalid(point(space, "8", "2", "0", "1")).find("needs an unpadded window"), std::string::npos);
  }
  if (!ta::halide_available()) GTEST_SKIP() << "built without Halide";
  struct Case {
    const char* shape;
    const char* x;
    const char* k;
    const char* c;
    const char* o;
    const char* chunk;
  };
  // 15 pixels: narrower than one strip; 55: not a whole number of strips on AVX-512 (32)
  // or AVX2 (16); LeNet-like 5x5 over whole rows: 204 pixels, 7 / 13 strips in chunks
  // of 4 (a ragged last chunk); a 1x1 of 88 pixels in chunks of 4 one-vector strips (6 /
  // 11 strips: the input prefetch 2 strips on runs past the plane); K = 20 / 30 / 10 in tiles of
  // 8 / 7 / 4 channels; C = 40 in blocks of 32. (Five small JIT compiles: the CI budget.)
  const Case cases[] = {{"N=2,C=16,H=3,W=5,KO=20,R=1,S=1,P=0", "8", "2", "0", "1", "0"},
                        {"N=1,C=40,H=10,W=9,KO=30,R=1,S=1,P=0", "7", "3", "32", "1", "0"},
                        {"N=1,C=20,H=5,W=11,KO=10,R=1,S=1,P=0", "4", "2", "0", "0", "0"},
                        {"N=1,C=20,H=8,W=11,KO=10,R=1,S=1,P=0", "4", "1", "0", "0", "4"},
                        {"N=2,C=3,H=20,W=13,KO=10,R=5,S=5,P=0", "4", "2", "0", "0", "4"}};
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.shape) + " x=" + c.x + " k=" + c.k + " c=" + c.c + " o=" + c.o + " s=" + c.chunk);
    ta::Problem p = conv2d(c.shape);
    ta::Space space(p);
    const ta::Point pt = point(space, c.x, c.k, c.c, c.o, c.chunk);
    if (!space.valid(pt)) {  // e.g. 12 x 2 accumulators on AVX2's 16 registers
      std::printf("  %s: %s (skipped on this ISA)\n", c.shape, space.why_invalid(pt).c_str());
      continue;
    }
    const ta::Schedule s = space.schedule(pt);
    ASSERT_EQ(s.ocvec.pixel_lanes, 1);
    EXPECT_EQ(s.ocvec.chunk, std::atoi(c.chunk));
    auto kernel = ta::make_halide_kernel(p, s, 2);
    const ta::TensorMap inputs[2] = {ta::random_inputs(p, 7), ta::random_inputs(p, 8)};
    for (const ta::TensorMap& in : inputs) {
      std::vector<const float*> ptrs;
      for (const auto& n : p.inputs()) ptrs.push_back(in.at(n).data());
      std::vector<float> out(static_cast<std::size_t>(p.tensor(p.output()).size()), std::nanf(""));
      kernel->run(ptrs, out.data());
      const auto want = ta::interpret(p, s.algorithm, in);
      const auto cmp = ta::compare_outputs(out, want, ta::default_tolerance(p, s.algorithm));
      EXPECT_TRUE(cmp.ok) << cmp.message;
    }
  }
}

// ocvec l 2 (output-row strips in the lanes, stored straight into Y): against the
// reference on LeNet conv1's form (1 input channel, 5x5 unpadded, a row of 3 x 8 lanes on
// AVX-512 / AVX2, 2 strips of 3 x 4 generic; K = 20 in tiles of 4), a padded 3x3
// whose 13-pixel rows are not a whole number of 2-vector strips (the last shifts inwards),
// batch 2, strips outside the channel tiles, K = 10 in tiles of 4 (a ragged last tile); a
// row narrower than one strip (guarded stores); and a change of weights. The space clamps k to the row's vectors and drops
// c and s. (Three small JIT compiles: the CI budget.)
TEST(AutotuneOcvec, RowLanesMatchTheReference) {
  auto point = [](const ta::Space& space, const char* x, const char* k, const char* o) {
    auto m = space.to_map(space.default_point());
    m["algorithm"] = "ocvec";
    m["ocvec x"] = x, m["ocvec k"] = k, m["ocvec c"] = "32", m["ocvec o"] = o, m["ocvec l"] = "2", m["ocvec s"] = "4";
    return space.from_map(m);
  };
  {
    ta::Problem p = conv2d("N=1,C=1,H=28,W=28,KO=20,R=5,S=5,P=0");
    ta::Space space(p);
    const ta::Schedule s = space.schedule(point(space, "4", "4", "0"));
    EXPECT_EQ(ta::ocvec_row_lanes(24), ta::vector_lanes() == 4 ? 4 : 8);
    EXPECT_EQ(s.ocvec.k_vectors, std::min(4, 24 / ta::ocvec_row_lanes(24)));  // at most a whole row (3 vectors of 8)
    EXPECT_EQ(s.ocvec.c_block, 0);
    EXPECT_EQ(s.ocvec.chunk, 0);
    // The first-layer templates include a whole-row strip.
    bool found = false;
    for (const ta::Point& t : space.templates()) found = found || space.schedule(t).ocvec.pixel_lanes == 2;
    EXPECT_TRUE(found);
  }
  if (!ta::halide_available()) GTEST_SKIP() << "built without Halide";
  struct Case {
    const char* shape;
    const char* x;
    const char* k;
    const char* o;
  };
  const Case cases[] = {{"N=1,C=1,H=16,W=28,KO=20,R=5,S=5,P=0", "4", "3", "0"},
                        {"N=2,C=3,H=7,W=13,KO=10,R=3,S=3,P=1", "4", "2", "1"},
                        {"N=1,C=2,H=6,W=5,KO=6,R=3,S=3,P=0", "6", "2", "0"}};
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.shape) + " x=" + c.x + " k=" + c.k + " o=" + c.o);
    ta::Problem p = conv2d(c.shape);
    ta::Space space(p);
    const ta::Point pt = point(space, c.x, c.k, c.o);
    ASSERT_TRUE(space.valid(pt)) << space.why_invalid(pt);  // (at most 16 registers: every ISA)
    const ta::Schedule s = space.schedule(pt);
    ASSERT_EQ(s.ocvec.pixel_lanes, 2);
    auto kernel = ta::make_halide_kernel(p, s, 2);
    const ta::TensorMap inputs[2] = {ta::random_inputs(p, 9), ta::random_inputs(p, 10)};
    for (const ta::TensorMap& in : inputs) {
      std::vector<const float*> ptrs;
      for (const auto& n : p.inputs()) ptrs.push_back(in.at(n).data());
      std::vector<float> out(static_cast<std::size_t>(p.tensor(p.output()).size()), std::nanf(""));
      kernel->run(ptrs, out.data());
      const auto want = ta::interpret(p, s.algorithm, in);
      const auto cmp = ta::compare_outputs(out, want, ta::default_tolerance(p, s.algorithm));
      EXPECT_TRUE(cmp.ok) << cmp.message;
    }
  }
}

TEST(AutotuneOcvec, AotWritesWeightsAndMainLibraries) {
  if (!ta::halide_available()) GTEST_SKIP() << "built without Halide";
  ta::Problem p = conv2d("N=1,C=8,H=10,W=12,KO=20,R=1,S=1,P=0");
  ta::Space space(p);
  const auto dir = std::filesystem::temp_directory_path() / "taihu-autotune-ocvec-aot-test";
  std::filesystem::create_directories(dir);
  const auto files = ta::emit_halide_aot(p, space.schedule(ocvec_point(space, "6", "1", "0", "0")), dir.string(), "ocv");
  ASSERT_EQ(files.size(), 4u);
  for (const auto& f : files) EXPECT_GT(std::filesystem::file_size(f), 0u) << f;
  std::filesystem::remove_all(dir);
}
