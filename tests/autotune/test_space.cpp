// The schedule space: knobs from the spec, enumeration, validity rules, mapping.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <utility>

#include "taihu/arch/error.hpp"
#include "taihu/arch/isa.hpp"
#include "taihu/arch/threads.hpp"
#include "taihu/autotune/parser.hpp"
#include "taihu/autotune/space.hpp"

namespace ta = taihu::autotune;

namespace {
ta::Problem load(const std::string& name, const std::string& shape) {
  return ta::Problem(ta::parse_spec_file(std::string(TAIHU_DSL_DIR) + "/" + name + ".tdsl"), ta::parse_shape(shape));
}
}  // namespace

TEST(AutotuneSpace, GemmKnobsAndCardinality) {
  ta::Problem p = load("gemm", "M=64,N=64,K=64");
  ta::Space s(p);
  ASSERT_EQ(s.knobs().size(), 10u);
  EXPECT_EQ(s.knobs()[0].name(), "block m");
  EXPECT_EQ(s.knobs()[0].labels.back(), "256");  // "M" = 64 is already listed: not repeated
  double card = 1;
  for (const auto& k : s.knobs()) card *= static_cast<double>(k.labels.size());
  EXPECT_DOUBLE_EQ(s.cardinality(), card);
  // decode enumerates every point exactly once
  std::set<ta::Point> all;
  for (double i = 0; i < card; ++i) all.insert(s.decode(i));
  EXPECT_EQ(static_cast<double>(all.size()), card);
}

TEST(AutotuneSpace, AlgorithmKnobAndDimValues) {
  ta::Problem p = load("conv2d", "N=1,C=8,H=10,W=12,KO=4,R=3,S=3,P=1");
  ta::Space s(p);
  EXPECT_EQ(s.knobs()[0].name(), "algorithm");
  EXPECT_EQ(s.knobs()[0].labels, (std::vector<std::string>{"direct", "im2col", "winograd", "ocvec"}));
  const ta::Knob* ow = nullptr;
  for (const auto& k : s.knobs())
    if (k.name() == "tile ow") ow = &k;
  ASSERT_NE(ow, nullptr);
  EXPECT_EQ(ow->labels[3], "12");  // "OW" resolved to the bound extent (then the ISA's vectors)
}

TEST(AutotuneSpace, ValidityRules) {
  ta::Problem p = load("gemm", "M=64,N=64,K=64");
  ta::Space s(p);
  std::map<std::string, std::string> m = {{"block m", "64"},        {"block n", "64"},
                                          {"tile m", "8"},         {"tile n", "16"},     {"tile k", "64"},
                                          {"order", "m k n"},      {"vectorize n", "16"}, {"unroll m", "1"},
                                          {"parallel", "m"},       {"layout B", "direct"}};
  ta::Point pt = s.from_map(m);
  EXPECT_TRUE(s.valid(pt)) << s.why_invalid(pt);
  EXPECT_EQ(s.to_map(pt), m);
  m["tile n"] = "32";
  m["vectorize n"] = "16";
  EXPECT_TRUE(s.valid(s.from_map(m)));
  m["tile n"] = "16";
  m["vectorize n"] = "16";
  m["unroll m"] = "4";
  m["tile m"] = "4";
  EXPECT_TRUE(s.valid(s.from_map(m)));
  // vector wider than its tile
  ta::Problem small = load("gemm", "M=64,N=8,K=64");
  ta::Space s2(small);
  m["vectorize n"] = "16";
  EXPECT_NE(s2.why_invalid(s2.from_map(m)).find("wider than its loop"), std::string::npos);
  // a block must hold whole tiles
  ta::Problem big = load("gemm", "M=256,N=256,K=64");
  ta::Space s3(big);
  m["vectorize n"] = "16";
  m["block m"] = "48";
  m["tile m"] = "32";
  EXPECT_NE(s3.why_invalid(s3.from_map(m)).find("not a multiple of its tile"), std::string::npos);
  m["tile m"] = "6";
  m["unroll m"] = "6";
  EXPECT_TRUE(s3.valid(s3.from_map(m))) << s3.why_invalid(s3.from_map(m));
  EXPECT_EQ(s3.schedule(s3.from_map(m)).block.at("m"), 48);
  EXPECT_EQ(s3.schedule(s3.from_map(m)).block.at("n"), 64);
  // unknown value
  m["tile m"] = "5";
  EXPECT_THROW(s.from_map(m), taihu::Error);
}

TEST(AutotuneSpace, ScheduleClampsAndDropsForeignLoops) {
  ta::Problem p = load("gemm", "M=16,N=64,K=64");
  ta::Space s(p);
  ta::Point pt = s.from_map({{"block m", "256"}, {"block n", "64"}, {"tile m", "64"}, {"tile n", "32"}, {"tile k", "256"}, {"order", "k m n"},
                             {"vectorize n", "8"}, {"unroll m", "2"}, {"parallel", "n"}, {"layout B", "staged"}});
  ta::Schedule sc = s.schedule(pt);
  EXPECT_EQ(sc.tile.at("m"), 16);  // clamped to the extent
  EXPECT_TRUE(sc.block.empty());   // blocks as large as their loop are no blocks
  EXPECT_EQ(sc.tile.at("k"), 64);
  EXPECT_EQ(sc.order, (std::vector<std::string>{"k", "m", "n"}));
  EXPECT_EQ(sc.vectorize.at("n"), 8);
  EXPECT_EQ(sc.unroll.at("m"), 2);
  EXPECT_EQ(sc.parallel, "n");
  EXPECT_EQ(sc.layout.at("B"), "staged");
}

TEST(AutotuneSpace, BadSpaceEntriesName) {
  auto err = [](const std::string& space) -> std::string {
    const std::string text = "operator x\ndim M\ninput A : f32[M]\noutput B : f32[M]\ncompute {\n  B[i] = A[i]\n}\nspace {\n" + space + "\n}\n";
    ta::Problem p(ta::parse_spec(text, "s.tdsl"), {{"M", 8}});
    try {
      ta::Space s(p);
    } catch (const taihu::Error& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_EQ(err("  tile q : 4"), "s.tdsl:9:3: 'q' is not a loop variable of the statement writing the output");
  EXPECT_EQ(err("  tile i : zero"), "s.tdsl:9:3: tile i: 'zero' is neither an integer nor a dim");
  EXPECT_EQ(err("  order : i i"), "s.tdsl:9:3: order 'i i' must name each loop variable of the output statement exactly once");
  EXPECT_EQ(err("  timeblock : 2"), "s.tdsl:9:3: timeblock needs a 'steps' declaration");
  EXPECT_EQ(err("  layout B : direct"), "s.tdsl:9:3: layout: 'B' is not an input tensor");
  EXPECT_EQ(err("  tile i : 4\n  tile i : 8"), "s.tdsl:10:3: space entry 'tile i' appears twice");
}

TEST(AutotuneSpace, SoftmaxComputeAtRules) {
  ta::Problem p = load("softmax", "ROWS=16,COLS=64");
  ta::Space s(p);
  auto base = s.to_map(s.default_point());
  base["compute_at mx"] = "tile";
  base["compute_at e"] = "root";  // e consumes mx but runs whole: mx cannot be per tile
  EXPECT_NE(s.why_invalid(s.from_map(base)).find("consumer e is computed at root"), std::string::npos);
  base["compute_at e"] = "inline";  // e inlined into sm (root): still whole
  base["compute_at sm"] = "root";
  EXPECT_NE(s.why_invalid(s.from_map(base)).find("consumer sm is computed at root"), std::string::npos);
  base["compute_at sm"] = "tile";
  EXPECT_TRUE(s.valid(s.from_map(base))) << s.why_invalid(s.from_map(base));
}

TEST(AutotuneSpace, RfactorRules) {
  ta::Problem p = load("softmax", "ROWS=16,COLS=40");
  ta::Space s(p);
  auto m = s.to_map(s.default_point());
  m["rfactor mx"] = "16";  // 16 does not divide the 40 columns
  EXPECT_NE(s.why_invalid(s.from_map(m)).find("does not divide its innermost reduction loop c (40)"), std::string::npos);
  m["rfactor mx"] = "8";
  m["rfactor sm"] = "1";  // 1: no partial lanes, so not in the Schedule
  const ta::Schedule sc = s.schedule(s.from_map(m));
  EXPECT_TRUE(s.valid(s.from_map(m))) << s.why_invalid(s.from_map(m));
  EXPECT_EQ(sc.rfactor.at("mx"), 8);
  EXPECT_EQ(sc.rfactor.count("sm"), 0u);
  // rfactor names a temp written by a reduction
  auto bad = [](const std::string& knob) {
    const std::string src = "operator t\ndim N, M\ninput A : f32[N, M]\ntemp s : f32[N]\ntemp e : f32[N, M]\noutput B : f32[N, M]\n"
                            "compute {\n  s[i] += A[i, j]\n  e[i, j] = A[i, j] * 2\n  B[i, j] = e[i, j] / s[i]\n}\nspace {\n  " +
                            knob + "\n}\n";
    ta::Problem q(ta::parse_spec(src, "t.tdsl"), ta::parse_shape("N=4,M=8"));
    try {
      ta::Space sp(q);
    } catch (const taihu::Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(bad("rfactor e : 1, 8").find("t.tdsl:13:3: rfactor: 'e' is not written by a reduction"), std::string::npos) << bad("rfactor e : 1, 8");
  EXPECT_NE(bad("rfactor A : 1, 8").find("t.tdsl:13:3: rfactor: 'A' is not a temp tensor"), std::string::npos) << bad("rfactor A : 1, 8");
  EXPECT_TRUE(bad("rfactor s : 1, 8").empty());
}

// The vectorized loop's vectorize and tile knobs offer 1-4 vectors of the dispatch ISA
// (16, 32, 48, 64 lanes on AVX-512) on top of the spec's values, within the loop.
TEST(AutotuneSpace, VectorKnobsOfferTheDispatchIsaWidth) {
  const int L = ta::vector_lanes();
  EXPECT_EQ(L, taihu::arch::active_isa() == taihu::arch::Isa::avx512 ? 16 : taihu::arch::active_isa() == taihu::arch::Isa::avx2 ? 8 : 4);
  ta::Problem g = load("gemm", "M=512,N=512,K=512");
  ta::Space gs(g);
  for (const auto& k : gs.knobs()) {
    if ((k.kind != "vectorize" && k.kind != "tile") || k.target != "n") continue;
    for (int n = L; n <= 4 * L; n += L) EXPECT_NE(std::find(k.ints.begin(), k.ints.end(), n), k.ints.end()) << k.name() << " lacks " << n;
  }
  // not beyond the loop: softmax with 24 columns offers no 32-lane vector
  ta::Problem sm = load("softmax", "ROWS=8,COLS=24");
  ta::Space ss(sm);
  for (const auto& k : ss.knobs()) {
    if (k.kind != "vectorize") continue;
    for (auto n : k.ints) EXPECT_LE(n, 24);  // (the spec lists 8 and 16)
  }
}

TEST(AutotuneSpace, TemplatesAreValidDistinctAndStructured) {
  // contraction: a register tile (vector lanes x unrolled rows, reductions outside)
  ta::Problem g = load("gemm", "M=512,N=512,K=512");
  ta::Space gs(g);
  const auto tg = gs.templates();
  ASSERT_FALSE(tg.empty());
  EXPECT_LE(tg.size(), 12u);
  EXPECT_EQ(std::set<ta::Point>(tg.begin(), tg.end()).size(), tg.size());
  for (const auto& t : tg) EXPECT_TRUE(gs.valid(t)) << gs.why_invalid(t);
  const ta::Schedule s = gs.schedule(tg.front());
  ASSERT_EQ(s.vectorize.count("n"), 1u);
  ASSERT_EQ(s.unroll.count("m"), 1u);
  const int lanes = s.vectorize.at("n"), rows = s.unroll.at("m");
  // whole vectors of the dispatch ISA; 8..12 accumulators of AVX2's 16 registers,
  // 16..24 of AVX-512's 32
  const int L = ta::vector_lanes(), regs = lanes / L * rows;
  EXPECT_EQ(lanes % L, 0) << lanes;
  EXPECT_GE(regs, ta::vector_registers() / 2);
  EXPECT_LE(regs, ta::vector_registers() * 3 / 4);
  EXPECT_EQ(s.tile.at("n"), lanes);
  EXPECT_EQ(s.tile.at("m"), rows);
  EXPECT_EQ(s.order, (std::vector<std::string>{"k", "m", "n"}));
  // window: the unit-stride loop vectorized, the 3x3 window unrolled whole
  ta::Problem d = load("depthwise_conv", "N=1,C=16,H=20,W=20,R=3,S=3,P=1");
  ta::Space ds(d);
  const auto td = ds.templates();
  ASSERT_FALSE(td.empty());
  const ta::Schedule w = ds.schedule(td.front());
  EXPECT_EQ(w.unroll.at("r"), 3);
  EXPECT_EQ(w.unroll.at("s"), 3);
  EXPECT_EQ(w.vectorize.count("ow"), 1u);
  EXPECT_EQ(w.layout.at("X"), "staged");
  EXPECT_EQ(w.unroll.at("oh"), 4);  // 4 rows of accumulators over a whole plane per block
  EXPECT_EQ(w.tile.at("oh"), 4);
  EXPECT_EQ(w.block.count("oh"), 0u);
  EXPECT_EQ(w.block.at("c"), 1);
  // reduction temps (softmax): the first template computes every temp per tile of rows
  // and splits the row reductions into vector lanes
  ta::Problem sm = load("softmax", "ROWS=64,COLS=256");
  ta::Space ss(sm);
  const auto ts = ss.templates();
  ASSERT_FALSE(ts.empty());
  const ta::Schedule f = ss.schedule(ts.front());
  EXPECT_EQ(f.compute_at.at("mx"), "tile");
  EXPECT_EQ(f.compute_at.at("sm"), "tile");
  EXPECT_EQ(f.rfactor.at("mx"), 16);
  EXPECT_EQ(f.rfactor.at("sm"), 16);
  // stencil with steps: slabs of half the planes x the whole plane x the whole row first,
  // parallel over planes, the steps fused per tile; later the same tiles unfused, and
  // Mullapudi2016's choice (16-plane slabs, whole planes, fused, 8 lanes)
  ta::Problem st = load("stencil7", "Z=64,Y=64,X=64,T=2");
  ta::Space sts(st);
  const auto tst = sts.templates();
  ASSERT_GE(tst.size(), 4u);
  const ta::Schedule s0 = sts.schedule(tst[0]);
  EXPECT_EQ(s0.timeblock, 2);
  EXPECT_EQ(s0.tile.at("z"), 32);
  EXPECT_EQ(s0.tile.count("y") ? s0.tile.at("y") : 64, 64);
  EXPECT_EQ(s0.tile.count("x") ? s0.tile.at("x") : 64, 64);
  EXPECT_EQ(s0.vectorize.at("x"), 16);
  EXPECT_EQ(s0.parallel, "z");
  bool unfused_same = false, mullapudi = false;
  for (std::size_t i = 1; i < tst.size(); ++i) {
    const ta::Schedule si = sts.schedule(tst[i]);
    if (si.timeblock <= 1 && si.tile == s0.tile && si.vectorize == s0.vectorize) unfused_same = true;
    if (si.timeblock == 2 && si.tile.count("z") && si.tile.at("z") == 16 && si.vectorize.at("x") == 8 &&
        (!si.tile.count("y") || si.tile.at("y") >= 64))
      mullapudi = true;
  }
  EXPECT_TRUE(unfused_same);
  EXPECT_TRUE(mullapudi);
}

TEST(AutotuneSpace, WinogradTemplatesStartWithEvenSplitsAndIncludeDnnBlocks) {
  // C=K=64, 28x28 on 2 threads: F(4x4) has 7 tile rows. First the whole image per task
  // with the output channels split per thread (32 each) -- on AVX-512 with dnn's 32 x 14
  // GEMM tile (two zmm x 14 tiles), else the 16 x 4 one; among the templates, dnn's
  // structure with its tile (32 x 14 on AVX-512, 16 x 6 on AVX2): blocks of half the
  // tile rows (4) and the whole image (7; the spec offers 8, clamped to the 7 rows), the
  // input transform at root with the channels per thread, and per stage.
  taihu::arch::set_num_threads(2);
  ta::Problem p = load("conv2d", "N=1,C=64,H=28,W=28,KO=64,R=3,S=3,P=1");
  ta::Space sp(p);
  const auto ts = sp.templates();
  taihu::arch::set_num_threads(0);
  ASSERT_FALSE(ts.empty());
  const bool zmm = ta::vector_lanes() == 16;
  const int dnn_k = zmm ? 32 : 16, dnn_t = zmm ? 14 : 6;
  const ta::Schedule f = sp.schedule(ts.front());
  EXPECT_EQ(f.winograd.m, 4);
  EXPECT_EQ(f.winograd.k_tile, zmm ? 32 : 16);
  EXPECT_EQ(f.winograd.t_tile, zmm ? 14 : 4);
  EXPECT_EQ(f.winograd.rows, 7);
  EXPECT_EQ(f.winograd.k_block, 32);
  std::set<std::pair<int, int>> structures;  // (rows, k_block) of the templates with dnn's tile
  for (const auto& t : ts) {
    const ta::Schedule s = sp.schedule(t);
    if (ta::vector_lanes() >= 8) {  // the register rule (generic SSE2 has no rule: 8-lane vectors are two registers)
      EXPECT_LE(ta::winograd_registers_needed(s.winograd.k_tile, s.winograd.t_tile), ta::vector_registers()) << sp.describe(t);
    }
    if (s.winograd.m == 4 && s.winograd.k_tile == dnn_k && s.winograd.t_tile == dnn_t) structures.insert({s.winograd.rows, s.winograd.k_block});
  }
  EXPECT_EQ(structures, (std::set<std::pair<int, int>>{{0, 0}, {0, 32}, {4, 0}, {7, 0}, {7, 32}}));
}
