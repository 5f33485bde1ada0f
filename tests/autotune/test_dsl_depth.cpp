// Deep and long DSL expressions: nesting beyond kMaxExprDepth is a file:line:column
// error (not a stack overflow in some recursive pass); a flat sum of 20,000 terms
// parses, binds, interprets and emits code (the parser balances long chains).
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "taihu/arch/error.hpp"
#include "taihu/autotune/cpp_emitter.hpp"
#include "taihu/autotune/interpreter.hpp"
#include "taihu/autotune/parser.hpp"
#include "taihu/autotune/problem.hpp"
#include "taihu/autotune/space.hpp"
#include "error_text.hpp"

namespace ta = taihu::autotune;

namespace {

const char* kHead =
    "operator deep\n"
    "dim N\n"
    "input A : f32[N]\n"
    "output O : f32[N]\n"
    "compute {\n"
    "  O[i] = ";

std::string error_of(const std::string& text) {
  return taihu_test::error_of([&] { ta::Problem p(ta::parse_spec(text, "t.tdsl"), {{"N", 4}}); });
}

std::string spec_with(const std::string& rhs) { return std::string(kHead) + rhs + "\n}\n"; }

std::string repeat(const std::string& s, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += s;
  return out;
}

int tree_depth(const ta::Expr& e) {
  int d = 0;
  for (const auto& a : e.args) d = std::max(d, tree_depth(*a));
  return d + 1;
}

}  // namespace

TEST(AutotuneDslDepth, TenThousandParenthesesIsAPositionedError) {
  const std::string text = spec_with(repeat("(", 10000) + "A[i]" + repeat(")", 10000));
  const std::string err = error_of(text);
  // Line 6; the 257th nested expression starts after 256 '(' at column 10 + 256.
  EXPECT_NE(err.find("t.tdsl:6:266: expression nested deeper than 256"), std::string::npos) << err;
}

TEST(AutotuneDslDepth, DeepUnaryMinusAndRightNestedSumsAreErrors) {
  EXPECT_NE(error_of(spec_with(repeat("-", 10000) + "A[i]")).find("t.tdsl:6:"), std::string::npos);
  EXPECT_NE(error_of(spec_with(repeat("-", 10000) + "A[i]")).find("expression nested deeper than 256"), std::string::npos);
  // A right-nested sum written with parentheses: 300 real levels of the tree.
  const std::string err = error_of(spec_with(repeat("A[i] + (", 300) + "A[i]" + repeat(")", 300)));
  EXPECT_NE(err.find("t.tdsl:6:"), std::string::npos) << err;
  EXPECT_NE(err.find("expression nested deeper than 256"), std::string::npos) << err;
  // Deep call and index nesting too.
  EXPECT_NE(error_of(spec_with(repeat("abs(", 5000) + "A[i]" + repeat(")", 5000))).find("nested deeper than 256"), std::string::npos);
}

TEST(AutotuneDslDepth, DeepestAllowedExpressionRunsThroughEveryPass) {
  // 254 right-nested additions over A[i] (an access and its index: two levels): depth
  // 256 exactly, accepted, and every pass handles it.
  const std::string text = spec_with(repeat("A[i] + (", 254) + "A[i]" + repeat(")", 254));
  ta::Problem p(ta::parse_spec(text, "t.tdsl"), {{"N", 4}});
  EXPECT_EQ(tree_depth(*p.stmts(0)[0].stmt->rhs), 256);
  ta::TensorMap in{{"A", {1.0f, 2.0f, -0.5f, 0.25f}}};
  const auto out = ta::interpret(p, 0, in);
  ASSERT_EQ(out.size(), 4u);
  for (int i = 0; i < 4; ++i) EXPECT_FLOAT_EQ(out[static_cast<std::size_t>(i)], 255.0f * in["A"][static_cast<std::size_t>(i)]);
  ta::Space space(p);
  EXPECT_FALSE(ta::emit_cpp(p, space.schedule(space.default_point()), "deep").empty());
}

TEST(AutotuneDslDepth, FlatSumOfTwentyThousandTermsWorks) {
  // O[i] = A[i] + 1 - 2 + 3 - 4 ... (20,000 terms). The alternating numbers sum to
  // -9999 (pairs (2k-1) - 2k = -1, 9999 pairs plus A's own term): exact in float.
  std::string rhs = "A[i]";
  for (int k = 1; k < 20000; ++k) rhs += (k % 2 ? " + " : " - ") + std::to_string(k);
  ta::Problem p(ta::parse_spec(spec_with(rhs), "t.tdsl"), {{"N", 3}});
  const ta::Expr& e = *p.stmts(0)[0].stmt->rhs;
  EXPECT_LE(tree_depth(e), 20);  // balanced: ceil(log2(20000)) + 1
  ta::TensorMap in{{"A", {0.5f, -3.0f, 1000.0f}}};
  const auto out = ta::interpret(p, 0, in);
  ASSERT_EQ(out.size(), 3u);
  const double odd = 10000.0 * 10000.0, even = 9999.0 * 10000.0;  // 1+3+...+19999, 2+4+...+19998
  for (std::size_t i = 0; i < 3; ++i) EXPECT_FLOAT_EQ(out[i], static_cast<float>(in["A"][i] + odd - even));
  // 19,999 additions/subtractions per element.
  EXPECT_DOUBLE_EQ(p.flops(0), 3.0 * 19999);
  ta::Space space(p);
  const std::string code = ta::emit_cpp(p, space.schedule(space.default_point()), "flat");
  EXPECT_NE(code.find("19999"), std::string::npos);
}

TEST(AutotuneDslDepth, FlatProductAndShortChainsKeepTheirMeaning) {
  // 40 factors of 2 (balanced) and a short chain a - b - c (left to right: a - (b - c) would differ).
  ta::Problem p(ta::parse_spec(spec_with("A[i]" + repeat(" * 2", 40) + " + (A[i] - 1 - 2) * 0"), "t.tdsl"), {{"N", 1}});
  ta::TensorMap in{{"A", {3.0f}}};
  EXPECT_FLOAT_EQ(ta::interpret(p, 0, in)[0], 3.0f * std::ldexp(1.0f, 40));
  ta::Problem q(ta::parse_spec(spec_with("A[i] - 1 - 2"), "t.tdsl"), {{"N", 1}});
  EXPECT_FLOAT_EQ(ta::interpret(q, 0, in)[0], 0.0f);
  // A long chain of divisions does not reassociate: it stays left-associated and deep.
  EXPECT_NE(error_of(spec_with("A[i]" + repeat(" / 1", 400))).find("expression nested deeper than 256"), std::string::npos);
}

TEST(AutotuneDslDepth, SpecBuiltInCodeIsCheckedWithoutRecursion) {
  ta::Spec s = ta::parse_spec(spec_with("A[i]"), "t.tdsl");
  // 100,000 nested negations built by hand: Problem rejects them before any pass recurses.
  ta::ExprPtr e = s.algorithms[0].stmts[0].rhs;
  std::vector<ta::ExprPtr> keep;  // destroyed iteratively below (the chain's destructor recurses)
  for (int i = 0; i < 100000; ++i) {
    ta::Expr n;
    n.kind = ta::Expr::Kind::neg;
    n.loc = {"code", 1, 1};
    n.args = {e};
    e = std::make_shared<const ta::Expr>(std::move(n));
    keep.push_back(e);
  }
  s.algorithms[0].stmts[0].rhs = e;
  e.reset();
  std::string err;
  try {
    ta::Problem p(std::move(s), {{"N", 4}});
  } catch (const taihu::Error& x) {
    err = x.what();
  }
  EXPECT_NE(err.find("code:1:1: expression nested deeper than 256"), std::string::npos) << err;
  while (!keep.empty()) keep.pop_back();  // outermost last: each release frees one node
}
