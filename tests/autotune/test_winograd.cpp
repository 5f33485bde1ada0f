// The derived `winograd` algorithm: the parser copies the base block, the convolution
// pattern is recognized (and refused with a reason for 5x5 windows, strides and
// dilations), the space skips it where it cannot run, the C++ emitter refuses it, and
// (with Halide) sampled Winograd schedule points -- F(2x2) and F(4x4), several GEMM
// register tiles, channel blocks, uneven tiles, padding 0 and 1 -- match the
// reference interpreter over the whole output, including after a change of weights.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>

#include "taihu/arch/error.hpp"
#include "taihu/arch/isa.hpp"
#include "taihu/autotune/backend.hpp"
#include "taihu/autotune/cpp_emitter.hpp"
#include "taihu/autotune/interpreter.hpp"
#include "taihu/autotune/parser.hpp"
#include "taihu/autotune/space.hpp"

namespace ta = taihu::autotune;

namespace {

std::string conv_spec(const std::string& image_rows, const std::string& image_cols) {
  return "operator conv\n"
         "dim N, C, H, W, KO, R, S, P\n"
         "dim OH = H + 2 * P - R + 1, OW = W + 2 * P - S + 1\n"
         "input X : f32[N, C, H, W] boundary zero\n"
         "input Wt : f32[KO, C, R, S]\n"
         "output Y : f32[N, KO, OH, OW]\n"
         "compute direct {\n"
         "  Y[n, k, oh, ow] += X[n, c, " + image_rows + ", " + image_cols + "] * Wt[k, c, r, s]\n"
         "}\n"
         "compute wino = winograd(direct)\n"
         "space {\n"
         "  tile k : 4\n"
         "  winograd m : 4, 2\n"
         "  winograd k : 8, 16\n"
         "}\n";
}

ta::Problem conv2d(const std::string& shape) {
  return ta::Problem(ta::parse_spec_file(std::string(TAIHU_DSL_DIR) + "/conv2d.tdsl"), ta::parse_shape(shape));
}

int winograd_index(const ta::Problem& p) {
  for (int a = 0; a < p.algorithm_count(); ++a)
    if (p.is_winograd(a)) return a;
  return -1;
}

std::string parse_error(const std::string& text) {
  try {
    ta::parse_spec(text, "w.tdsl");
  } catch (const taihu::Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(AutotuneWinograd, ParserCopiesTheBaseBlock) {
  ta::Spec s = ta::parse_spec(conv_spec("oh + r - P", "ow + s - P"), "w.tdsl");
  ASSERT_EQ(s.algorithms.size(), 2u);
  EXPECT_EQ(s.algorithms[1].name, "wino");
  EXPECT_EQ(s.algorithms[1].method, "winograd");
  EXPECT_EQ(s.algorithms[1].base, "direct");
  ASSERT_EQ(s.algorithms[1].stmts.size(), 1u);
  EXPECT_EQ(s.algorithms[1].stmts[0].tensor, "Y");
}

TEST(AutotuneWinograd, ParserErrorsNamePosition) {
  std::string text = conv_spec("oh + r - P", "ow + s - P");
  std::string bad = text;
  bad.replace(bad.find("winograd(direct)"), 16, "winograd(nope)");
  EXPECT_NE(parse_error(bad).find("w.tdsl:10:"), std::string::npos) << parse_error(bad);
  EXPECT_NE(parse_error(bad).find("'nope' is not a compute block"), std::string::npos);
  bad = text;
  bad.replace(bad.find("winograd(direct)"), 16, "fft(direct)");
  EXPECT_NE(parse_error(bad).find("unknown derived algorithm 'fft'"), std::string::npos) << parse_error(bad);
}

TEST(AutotuneWinograd, RecognizesThe3x3Convolution) {
  ta::Problem p = conv2d("N=1,C=8,H=10,W=12,KO=8,R=3,S=3,P=1");
  const int w = winograd_index(p);
  ASSERT_GE(w, 0);
  EXPECT_EQ(p.winograd_unsupported(w), "");
  const ta::ConvPattern& cv = p.winograd_conv(w);
  EXPECT_EQ(cv.image, "X");
  EXPECT_EQ(cv.weight, "Wt");
  EXPECT_EQ(cv.off_y, -1);
  EXPECT_EQ(cv.off_x, -1);
  EXPECT_EQ(cv.oh, 10);
  EXPECT_EQ(cv.ow, 12);
  // the same access written differently still matches
  ta::Problem q(ta::parse_spec(conv_spec("r + oh - 1", "s - P + ow"), "w.tdsl"), ta::parse_shape("N=1,C=2,H=6,W=6,KO=3,R=3,S=3,P=1"));
  EXPECT_EQ(q.winograd_unsupported(1), "");
}

TEST(AutotuneWinograd, RefusedWithAReasonWhereItCannotRun) {
  // 7x7 window: the space skips the winograd algorithm and says why.
  ta::Problem p = conv2d("N=1,C=8,H=10,W=12,KO=8,R=7,S=7,P=3");
  const int w = winograd_index(p);
  EXPECT_NE(p.winograd_unsupported(w).find("3x3 or 5x5 window; this shape has 7x7"), std::string::npos) << p.winograd_unsupported(w);
  ta::Space space(p);
  ta::Point pt = space.default_point();
  for (std::size_t i = 0; i < space.knobs().size(); ++i)
    if (space.knobs()[i].kind == "algorithm") pt[i] = w;
  EXPECT_EQ(space.why_invalid(pt), p.winograd_unsupported(w));
  for (const auto& t : space.templates()) EXPECT_NE(space.schedule(t).algorithm, w);
  // stride 2 and dilation 2 are not Winograd F(m, 3) convolutions
  const std::string stride = ta::Problem(ta::parse_spec(conv_spec("2 * oh + r", "2 * ow + s"), "w.tdsl"),
                                         ta::parse_shape("N=1,C=2,H=6,W=6,KO=3,R=3,S=3,P=0"))
                                 .winograd_unsupported(1);
  EXPECT_NE(stride.find("stride 1 and dilation 1"), std::string::npos) << stride;
  const std::string dil = ta::Problem(ta::parse_spec(conv_spec("oh + 2 * r - P", "ow + 2 * s - P"), "w.tdsl"),
                                      ta::parse_shape("N=1,C=2,H=9,W=9,KO=3,R=3,S=3,P=0"))
                              .winograd_unsupported(1);
  EXPECT_NE(dil.find("stride 1 and dilation 1"), std::string::npos) << dil;
  // winograd knobs without a winograd algorithm are a spec error
  std::string text = conv_spec("oh + r - P", "ow + s - P");
  text.replace(text.find("compute wino = winograd(direct)\n"), 32, "");
  EXPECT_THROW(ta::Space(ta::Problem(ta::parse_spec(text, "w.tdsl"), ta::parse_shape("N=1,C=2,H=6,W=6,KO=3,R=3,S=3,P=1"))),
               taihu::Error);
}

TEST(AutotuneWinograd, FiveByFiveWindowIsF2x2Only) {
  // F(2x2,5x5) is generated; F(4x4,5x5) is not (the space says why), and the templates
  // for a 5x5 window are all m = 2.
  ta::Problem p = conv2d("N=1,C=20,H=12,W=12,KO=50,R=5,S=5,P=0");
  const int w = winograd_index(p);
  EXPECT_EQ(p.winograd_unsupported(w), "");
  ta::Space space(p);
  auto m = space.to_map(space.default_point());
  m["algorithm"] = "winograd";
  m["winograd m"] = "4";
  EXPECT_NE(space.why_invalid(space.from_map(m)).find("F(2x2,5x5) only"), std::string::npos) << space.why_invalid(space.from_map(m));
  m["winograd m"] = "2";
  EXPECT_TRUE(space.valid(space.from_map(m))) << space.why_invalid(space.from_map(m));
  int winograd_templates = 0;
  for (const auto& t : space.templates())
    if (space.schedule(t).algorithm == w) {
      ++winograd_templates;
      EXPECT_EQ(space.schedule(t).winograd.m, 2);
    }
  EXPECT_GE(winograd_templates, 1);
}

TEST(AutotuneWinograd, OnlyWinogradKnobsReachItsSchedule) {
  ta::Problem p = conv2d("N=1,C=16,H=8,W=8,KO=16,R=3,S=3,P=1");
  ta::Space space(p);
  const int w = winograd_index(p);
  auto m = space.to_map(space.default_point());
  m["algorithm"] = "winograd";
  m["winograd m"] = "2";
  m["winograd k"] = "24";
  m["winograd c"] = "16";  // == C: the whole reduction
  ta::Point a = space.from_map(m);
  m["tile k"] = "16";  // a direct-loop knob: no effect on the Winograd schedule
  ta::Point b = space.from_map(m);
  const ta::Schedule sa = space.schedule(a), sb = space.schedule(b);
  EXPECT_EQ(sa.algorithm, w);
  EXPECT_EQ(sa.winograd.m, 2);
  EXPECT_EQ(sa.winograd.k_tile, 24);
  EXPECT_EQ(sa.winograd.c_block, 0);
  EXPECT_TRUE(sa.tile.empty());
  EXPECT_EQ(sa.tile, sb.tile);
  EXPECT_TRUE(space.valid(a));
  // the C++ emitter has no Winograd lowering and says so
  try {
    ta::emit_cpp(p, sa, "f");
    ADD_FAILURE() << "emit_cpp accepted a winograd schedule";
  } catch (const taihu::Error& e) {
    EXPECT_NE(std::string(e.what()).find("no Winograd lowering"), std::string::npos) << e.what();
  }
}

TEST(AutotuneWinograd, SampledSchedulePointsMatchTheReference) {
  if (!ta::halide_available()) GTEST_SKIP() << "built without Halide";
  struct Case {
    const char* shape;
    const char* m;
    const char* k;
    const char* t;
    const char* c;
    const char* r;
    const char* kb = "0";
  };
  // Uneven output (tiles past the edge), channels not a multiple of the k tile (12: a
  // last output block of 8 overlapping; 6: fewer than one vector), batch 2,
  // padding 0 and 1, both tile sizes, channel blocks; tile rows per parallel task: 2 of
  // 3 (the last block shifts inwards: 1 row), 4 of 5, 0 (per stage), 1 (7 tiles a row:
  // the t tile of 6 shifts inwards; 2 tiles a row, fewer than the t tile of 4); the
  // GEMM tiles run over a block's tiles flattened across rows: a t tile of 8 over 2 rows
  // of 7 tiles, and of 7 over one block of the whole 8 x 8-tile image with a last
  // partial column of tiles (W = 30).
  const Case cases[] = {{"N=2,C=5,H=11,W=13,KO=12,R=3,S=3,P=1", "4", "16", "6", "C", "2"},
                        {"N=1,C=40,H=9,W=10,KO=20,R=3,S=3,P=1", "2", "8", "3", "16", "4"},
                        {"N=1,C=33,H=14,W=9,KO=6,R=3,S=3,P=0", "4", "24", "4", "32", "0"},
                        {"N=1,C=16,H=28,W=28,KO=16,R=3,S=3,P=1", "4", "16", "6", "C", "1"},
                        {"N=1,C=8,H=9,W=7,KO=6,R=3,S=3,P=1", "4", "8", "4", "C", "1"},
                        {"N=1,C=16,H=28,W=28,KO=16,R=3,S=3,P=1", "4", "8", "8", "C", "2"},
                        {"N=1,C=8,H=32,W=30,KO=8,R=3,S=3,P=1", "4", "16", "7", "C", "8"},
                        // Output channels per task: with the input transform at root (r 0)
                        // and with row blocks (the whole image: 8 tile rows; 2 of 5); K = 20
                        // and 40 in blocks of 16 (the last shifts inwards), K = 6 in one
                        // block of 8 (fewer than a vector: guarded), C = 13 (the last
                        // channel block of 8 zero padded).
                        {"N=2,C=13,H=11,W=13,KO=20,R=3,S=3,P=1", "4", "16", "6", "C", "0", "16"},
                        {"N=1,C=16,H=32,W=28,KO=20,R=3,S=3,P=1", "4", "8", "4", "16", "8", "16"},
                        {"N=1,C=40,H=9,W=10,KO=40,R=3,S=3,P=1", "2", "16", "3", "C", "2", "16"},
                        {"N=1,C=8,H=9,W=7,KO=6,R=3,S=3,P=0", "4", "8", "4", "C", "0", "16"},
                        // F(2x2,5x5): padding 2 and 0 (LeNet conv2's shape), odd output
                        // (tiles past the edge), per stage, row blocks, channel blocks.
                        {"N=1,C=32,H=8,W=8,KO=64,R=5,S=5,P=2", "2", "16", "6", "C", "0"},
                        {"N=2,C=20,H=12,W=12,KO=50,R=5,S=5,P=0", "2", "16", "4", "16", "2"},
                        {"N=1,C=5,H=11,W=13,KO=40,R=5,S=5,P=2", "2", "8", "3", "C", "1", "16"},
                        // Wide tiles (16-lane vectors on AVX-512, U in panels of the k tile):
                        // dnn's 32 x 14 with K = 40 (two panels, the second mostly padding),
                        // three vectors of 48 over row blocks of 4 of 7 x 7 tiles (the t tile
                        // of 7 a row), 48 x 6 with K = 33 (one panel) in row blocks of 1, and
                        // F(2x2,5x5) at 32 x 14. Where a tile exceeds the ISA's registers
                        // (AVX2: 16) its t is lowered to the widest that fits.
                        {"N=1,C=19,H=13,W=15,KO=40,R=3,S=3,P=1", "4", "32", "14", "C", "0"},
                        {"N=1,C=24,H=14,W=14,KO=72,R=3,S=3,P=1", "2", "48", "7", "16", "4"},
                        {"N=2,C=10,H=9,W=11,KO=33,R=3,S=3,P=1", "4", "48", "6", "C", "1"},
                        {"N=1,C=32,H=8,W=8,KO=64,R=5,S=5,P=2", "2", "32", "14", "C", "0"},
                        // Channel blocks of 16 in the transforms (AVX-512, 16 divides C and
                        // K): tasks of 32 output channels over K = 48 (the last shifts
                        // inwards) with the input transform at root; row blocks x channel
                        // blocks with 2 channel blocks of 16 per GEMM step of C = 48.
                        {"N=1,C=32,H=10,W=12,KO=48,R=3,S=3,P=1", "4", "16", "6", "16", "0", "32"},
                        {"N=2,C=48,H=9,W=9,KO=64,R=3,S=3,P=0", "2", "32", "7", "32", "2", "32"},
                        // ResNet-50 res4's structure at 2 threads, small channels: 14 x 14
                        // (4 tile rows of F(4x4), OH not whole tiles) in row blocks of 2:
                        // the last block is guarded, not shifted to row 10 (inside a tile);
                        // and tasks of 64 of 128 output channels (kb 64) with V at root.
                        {"N=1,C=16,H=14,W=14,KO=32,R=3,S=3,P=1", "4", "32", "14", "C", "2"},
                        {"N=1,C=8,H=10,W=10,KO=128,R=3,S=3,P=1", "4", "16", "4", "C", "0", "64"}};
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.shape) + " m=" + c.m + " k=" + c.k + " t=" + c.t + " c=" + c.c + " r=" + c.r + " kb=" + c.kb);
    ta::Problem p = conv2d(c.shape);
    ta::Space space(p);
    auto m = space.to_map(space.default_point());
    m["algorithm"] = "winograd";
    m["winograd m"] = c.m;
    m["winograd k"] = c.k;
    m["winograd t"] = c.t;
    m["winograd c"] = c.c == std::string("C") ? std::to_string(p.dim("C")) : c.c;
    m["winograd r"] = c.r;
    m["winograd kb"] = c.kb;
    ta::Point pt = space.from_map(m);
    for (const char* t : {"12", "8", "7", "6", "4", "3", "2", "1"}) {
      if (space.why_invalid(pt).find("registers") == std::string::npos) break;
      if (std::stoi(t) >= std::stoi(m["winograd t"])) continue;
      m["winograd t"] = t;
      pt = space.from_map(m);
    }
    ASSERT_TRUE(space.valid(pt)) << space.why_invalid(pt);
    const ta::Schedule s = space.schedule(pt);
    EXPECT_LE(s.winograd.t_tile, std::stoi(c.t));
    EXPECT_EQ(s.winograd.rows, std::stoi(c.r));
    EXPECT_EQ(s.winograd.k_block > 0, std::stoi(c.kb) > 0);
    auto kernel = ta::make_halide_kernel(p, s, 2);
    // The second run sees new weights (and image) at another address: both input sets
    // stay alive, as a kernel transforms its weights once per weight pointer.
    const ta::TensorMap inputs[2] = {ta::random_inputs(p, 3), ta::random_inputs(p, 4)};
    for (const ta::TensorMap& in : inputs) {
      std::vector<const float*> ptrs;
      for (const auto& n : p.inputs()) ptrs.push_back(in.at(n).data());
      std::vector<float> out(static_cast<std::size_t>(p.tensor(p.output()).size()), std::nanf(""));
      kernel->run(ptrs, out.data());
      const auto want = ta::interpret(p, s.algorithm, in);
      const auto a = ta::compare_outputs(out, want, ta::default_tolerance(p, s.algorithm));
      EXPECT_TRUE(a.ok) << a.message;
      // Winograd's error is larger than the direct loops' but far from garbage.
      EXPECT_LT(a.max_error, 5e-4) << "max |err| / (1 + |ref|)";
      std::printf("  %s F(%sx%s,%lldx%lld): max |err|/(1+|ref|) = %.2e (bound %.2e)\n", c.shape, c.m, c.m,
                  static_cast<long long>(p.dim("R")), static_cast<long long>(p.dim("R")), a.max_error,
                  ta::default_tolerance(p, s.algorithm));
    }
  }
}

TEST(AutotuneWinograd, AotWritesWeightsAndMainLibraries) {
  if (!ta::halide_available()) GTEST_SKIP() << "built without Halide";
  ta::Problem p = conv2d("N=1,C=8,H=10,W=12,KO=8,R=3,S=3,P=1");
  ta::Space space(p);
  auto m = space.to_map(space.default_point());
  m["algorithm"] = "winograd";
  const auto dir = std::filesystem::temp_directory_path() / "taihu-autotune-wino-aot-test";
  std::filesystem::create_directories(dir);
  const auto files = ta::emit_halide_aot(p, space.schedule(space.from_map(m)), dir.string(), "wino");
  ASSERT_EQ(files.size(), 4u);
  for (const auto& f : files) EXPECT_GT(std::filesystem::file_size(f), 0u) << f;
  std::filesystem::remove_all(dir);
}

TEST(AutotuneWinograd, NoGemmTileExceedsTheRegisters) {
  // Every k x t GEMM tile conv2d.tdsl offers is valid exactly when its accumulators
  // (k / lanes per image tile, 16 lanes on AVX-512 where 16 divides k, else 8), its U
  // vectors and a broadcast fit the ISA's vector registers (32 / 16); 32 x 14 (dnn's
  // AVX-512 tile: 31) fits on AVX-512, not on AVX2.
  if (taihu::arch::active_isa() == taihu::arch::Isa::generic) GTEST_SKIP() << "no register rule on generic";
  ta::Problem p = conv2d("N=1,C=64,H=28,W=28,KO=64,R=3,S=3,P=1");
  ta::Space space(p);
  const int regs = ta::vector_registers();
  int checked = 0;
  for (int k : {8, 16, 24, 32, 48, 64})
    for (int t : {1, 2, 3, 4, 6, 7, 8, 12, 14}) {
      auto m = space.to_map(space.default_point());
      m["algorithm"] = "winograd";
      m["winograd k"] = std::to_string(k);
      m["winograd t"] = std::to_string(t);
      const ta::Point pt = space.from_map(m);
      const int lanes = ta::vector_lanes() == 16 && k % 16 == 0 ? 16 : 8;
      const int need = k / lanes * t + k / lanes + 1;
      EXPECT_EQ(ta::winograd_registers_needed(k, t), need) << k << " x " << t;
      EXPECT_EQ(space.valid(pt), need <= regs) << k << " x " << t << ": " << space.why_invalid(pt);
      ++checked;
    }
  EXPECT_EQ(checked, 54);
  auto m = space.to_map(space.default_point());
  m["algorithm"] = "winograd";
  m["winograd k"] = "32";
  m["winograd t"] = "14";
  EXPECT_EQ(space.valid(space.from_map(m)), ta::vector_lanes() == 16);
}
