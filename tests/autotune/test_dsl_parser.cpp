// The DSL front end: every shipped spec parses and binds; bad input fails with the
// right file:line:column and a message naming the problem.
#include <gtest/gtest.h>

#include <string>

#include "taihu/arch/error.hpp"
#include "taihu/autotune/parser.hpp"
#include "taihu/autotune/problem.hpp"
#include "error_text.hpp"

namespace ta = taihu::autotune;

namespace {

std::string error_of(const std::string& text, const std::map<std::string, std::int64_t>& dims = {}) {
  return taihu_test::error_of([&] { ta::Problem p(ta::parse_spec(text, "t.tdsl"), dims); });
}

const char* kGemm =
    "operator gemm\n"
    "dim M, N, K\n"
    "input A : f32[M, K]\n"
    "input B : f32[K, N]\n"
    "output C : f32[M, N]\n"
    "compute {\n"
    "  C[m, n] += A[m, k] * B[k, n]\n"
    "}\n";

}  // namespace

TEST(AutotuneParser, GemmStructure) {
  ta::Spec s = ta::parse_spec(kGemm, "g.tdsl");
  EXPECT_EQ(s.name, "gemm");
  ASSERT_EQ(s.dims.size(), 3u);
  ASSERT_EQ(s.tensors.size(), 3u);
  EXPECT_EQ(s.tensors[2].role, ta::TensorRole::output);
  ASSERT_EQ(s.algorithms.size(), 1u);
  const ta::Stmt& st = s.algorithms[0].stmts[0];
  EXPECT_EQ(st.tensor, "C");
  EXPECT_EQ(st.op, ta::ReduceOp::add);
  EXPECT_EQ(st.loc.line, 7);
  EXPECT_EQ(st.loc.column, 3);
  ta::Problem p(s, {{"M", 5}, {"N", 6}, {"K", 7}});
  const auto& b = p.stmts(0)[0];
  ASSERT_EQ(b.pure.size(), 2u);
  ASSERT_EQ(b.reduce.size(), 1u);
  EXPECT_EQ(b.reduce[0].name, "k");
  EXPECT_EQ(b.reduce[0].extent, 7);
  EXPECT_EQ(p.shape_key(), "M=5,N=6,K=7");
  EXPECT_DOUBLE_EQ(p.flops(0), 2.0 * 5 * 6 * 7);
}

TEST(AutotuneParser, ShippedSpecsParseAndBind) {
  struct Case {
    const char* file;
    const char* shape;
  } cases[] = {{"gemm", "M=8,N=16,K=4"},
               {"batched_matmul", "BATCH=2,M=4,N=8,K=3"},
               {"conv2d", "N=1,C=2,H=5,W=6,KO=3,R=3,S=3,P=1"},
               {"depthwise_conv", "N=1,C=2,H=5,W=6,R=3,S=3,P=1"},
               {"softmax", "ROWS=3,COLS=7"},
               {"stencil7", "Z=4,Y=5,X=6,T=2"},
               {"stencil25", "Z=9,Y=9,X=9,T=1"}};
  for (const auto& c : cases) {
    SCOPED_TRACE(c.file);
    ta::Spec s = ta::parse_spec_file(std::string(TAIHU_DSL_DIR) + "/" + c.file + ".tdsl");
    ta::Problem p(std::move(s), ta::parse_shape(c.shape));
    EXPECT_GT(p.flops(0), 0);
    EXPECT_FALSE(p.spec().knobs.empty());
  }
}

TEST(AutotuneParser, DerivedDimsAndAlgorithms) {
  ta::Spec s = ta::parse_spec_file(std::string(TAIHU_DSL_DIR) + "/conv2d.tdsl");
  ta::Problem p(std::move(s), ta::parse_shape("N=1,C=2,H=5,W=6,KO=3,R=3,S=3,P=1"));
  EXPECT_EQ(p.dim("OH"), 5);
  EXPECT_EQ(p.dim("OW"), 6);
  EXPECT_EQ(p.algorithm_count(), 4);
  EXPECT_EQ(p.spec().algorithms[1].name, "im2col");
  EXPECT_EQ(p.stmts(1).size(), 2u);
  EXPECT_EQ(p.spec().algorithms[2].name, "winograd");  // = winograd(direct): direct's statement
  EXPECT_TRUE(p.is_winograd(2));
  EXPECT_EQ(p.stmts(2).size(), 1u);
}

TEST(AutotuneParser, LexicalAndSyntaxErrorsHavePositions) {
  EXPECT_EQ(error_of("operator x\ndim M\ninput A : f32[M] $"), "t.tdsl:3:18: unexpected character '$'");
  EXPECT_EQ(error_of("operator x\ninput A : f32[M, K\noutput B : f32[M]"),
            "t.tdsl:3:1: expected ']' but found 'output'");
  EXPECT_EQ(error_of("operator x\ninput A : f16[M]"), "t.tdsl:2:11: unknown element type 'f16' (use f32 or f64)");
  EXPECT_EQ(error_of("operator x\nfoo"),
            "t.tdsl:2:1: unknown declaration 'foo' (expected dim, param, input, output, temp, steps, compute or space)");
  EXPECT_EQ(error_of("operator x\ndim M\ninput A : f32[M]\noutput B : f32[M]\ncompute {\n  B[i] = sin(A[i])\n}"),
            "t.tdsl:6:10: unknown function 'sin' (known: exp, fast_exp, log, sqrt, abs, max, min)");
  EXPECT_EQ(error_of("operator x\ndim M\ninput A : f32[M]\noutput B : f32[M, M]\ncompute {\n  B[i, i] = A[i]\n}"),
            "t.tdsl:6:8: loop variable 'i' repeated on the left-hand side");
  EXPECT_EQ(error_of("operator x\ncompute {\n  B[i] = A[i]\n"), "t.tdsl:4:1: unterminated 'compute' block (missing '}')");
  EXPECT_EQ(error_of("operator x\ndim M\ninput A : f32[M]\noutput B : f32[M]\ncompute {\n  B[i] = A[i]\n}\nspace {\n  tile i 4\n}"),
            "t.tdsl:9:10: expected ':' but found '4'");
}

TEST(AutotuneParser, SemanticErrorsHavePositions) {
  const std::string head = "operator x\ndim M, K\ninput A : f32[M, K]\noutput B : f32[M]\n";
  EXPECT_EQ(error_of(head + "compute {\n  B[m] += Q[m, k]\n}", {{"M", 4}, {"K", 3}}), "t.tdsl:6:11: unknown tensor 'Q'");
  EXPECT_EQ(error_of(head + "compute {\n  B[m] = A[m, k]\n}", {{"M", 4}, {"K", 3}}),
            "t.tdsl:6:3: '=' with reduction variable 'k': use '+=', 'max=' or 'min=' to reduce");
  EXPECT_EQ(error_of(head + "compute {\n  B[m] += A[m, k + 1]\n}", {{"M", 4}, {"K", 3}}).substr(0, 63),
            "t.tdsl:6:3: cannot infer the range of reduction variable 'k': u");
  EXPECT_EQ(error_of(head + "compute {\n  B[m] += A[m]\n}", {{"M", 4}, {"K", 3}}),
            "t.tdsl:6:11: 'A' has 2 dimensions but is indexed with 1");
  EXPECT_EQ(error_of(head + "compute {\n  B[m] += A[m, k]\n}", {{"M", 4}}),
            "t.tdsl:2:8: dim 'K' has no value: bind it with --shape K=<n>");
  EXPECT_EQ(error_of(head + "compute {\n  A[m, k] = A[m, k]\n}", {{"M", 4}, {"K", 3}}),
            "t.tdsl:6:3: 'A' is an input and cannot be written");
  // B[m] indexed with a loop over M+1 would run out of bounds (no boundary declared).
  const std::string oob = "operator x\ndim M\ninput A : f32[M]\noutput B : f32[M]\ntemp T : f32[M]\ncompute {\n  B[i] = A[i]\n}\n";
  EXPECT_EQ(error_of("operator x\ndim M\ninput A : f32[M]\noutput B : f32[M]\ncompute {\n  B[i] = C[i]\n}", {{"M", 2}}),
            "t.tdsl:6:10: unknown tensor 'C'");
  EXPECT_EQ(error_of(oob + "space {\n  tile q : 4\n}", {{"M", 2}}), "");  // the space is checked by Space
  EXPECT_EQ(error_of("operator x\ndim M\ninput A : f32[M]\noutput B : f32[M]\ncompute {\n  B[i] = A[i]\n}", {{"Q", 2}}),
            "--shape: 'Q' is not a dim of operator 'x'");
}
