// Recursive-descent parser of the taihu-tune DSL. The grammar (newlines are not
// significant; '#' starts a comment):
//
//   spec     := 'operator' IDENT decl*
//   decl     := 'dim' dimdef (',' dimdef)*            dimdef := IDENT ['=' expr]
//             | 'param' IDENT ':' type ['=' NUMBER]
//             | ('input' | 'output' | 'temp') IDENT ':' type '[' expr (',' expr)* ']'
//                   ['boundary' ('zero' | 'clamp')]
//             | 'steps' IDENT ':' IDENT '->' IDENT     # repeat; output feeds input
//             | 'compute' [IDENT] '{' stmt* '}'        # several = algorithm choice
//             | 'compute' IDENT '=' 'winograd' '(' IDENT ')'   # Winograd of a 3x3 conv block
//             | 'compute' IDENT '=' 'ocvec' '(' IDENT ')'      # a conv block, output channels in lanes
//             | 'space' '{' knob* '}'
//   type     := 'f32' | 'f64'
//   stmt     := IDENT '[' IDENT (',' IDENT)* ']' ('=' | '+=' | 'max' '=' | 'min' '=') expr
//   expr     := term (('+' | '-') term)*           # left-assoc; long +/- or * chains
//   term     := unary (('*' | '/') unary)*         #   are balanced (see chain())
//   unary    := '-' unary | primary
//   primary  := NUMBER | IDENT | IDENT '[' expr (',' expr)* ']'
//             | IDENT '(' expr (',' expr)* ')' | '(' expr ')'
//   knob     := ('tile' | 'block' | 'vectorize' | 'unroll') IDENT ':' value (',' value)*
//             | ('layout' | 'compute_at') IDENT ':' IDENT (',' IDENT)*
//             | 'parallel' ':' IDENT (',' IDENT)*
//             | 'timeblock' ':' NUMBER (',' NUMBER)*
//             | 'winograd' ('m' | 'k' | 't' | 'c' | 'r') ':' value (',' value)*   # Winograd knobs
//             | 'ocvec' ('x' | 'k' | 'c' | 'o') ':' value (',' value)*   # output-channel-vector knobs
//             | 'rfactor' IDENT ':' NUMBER (',' NUMBER)*  # a temp reduction's partial-sum lanes (1: none)
//             | 'order' ':' IDENT+ ('|' IDENT+)*          # a permutation ends at its line end
//   value    := NUMBER | IDENT                         # a dim name: the full extent
//
// Semantic checks (names declared, shapes, loop ranges) are done by analysis.cpp.
#include "taihu/autotune/parser.hpp"

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>
#include <unordered_map>
#include <utility>

#include "dsl/lexer.hpp"
#include "taihu/arch/error.hpp"

namespace taihu::autotune {
namespace {

using dsl::Tok;
using dsl::Token;

class Parser {
 public:
  Parser(std::vector<Token> toks) : toks_(std::move(toks)) {}

  Spec parse_all() {
    Spec spec;
    expect_keyword("operator");
    spec.loc = peek().loc;
    spec.name = expect_ident("the operator name");
    while (peek().kind != Tok::end) parse_decl(spec);
    if (spec.algorithms.empty()) fail(peek(), "the spec has no 'compute { ... }' block");
    return spec;
  }

 private:
  std::vector<Token> toks_;
  std::size_t pos_ = 0;

  const Token& peek(std::size_t ahead = 0) const {
    return toks_[std::min(pos_ + ahead, toks_.size() - 1)];
  }
  const Token& next() {
    const Token& t = peek();
    if (pos_ < toks_.size() - 1) ++pos_;
    return t;
  }
  [[noreturn]] static void fail(const Token& t, const std::string& msg) {
    throw Error(t.loc.str() + ": " + msg);
  }
  static std::string describe(const Token& t) {
    if (t.kind == Tok::end) return "end of file";
    return "'" + t.text + "'";
  }
  bool is_punct(const char* p) const { return peek().kind == Tok::punct && peek().text == p; }
  bool is_ident(const char* p) const { return peek().kind == Tok::ident && peek().text == p; }
  void expect_punct(const char* p) {
    if (!is_punct(p)) fail(peek(), std::string("expected '") + p + "' but found " + describe(peek()));
    next();
  }
  void expect_keyword(const char* k) {
    if (!is_ident(k)) fail(peek(), std::string("expected '") + k + "' but found " + describe(peek()));
    next();
  }
  std::string expect_ident(const std::string& what) {
    if (peek().kind != Tok::ident) fail(peek(), "expected " + what + " but found " + describe(peek()));
    return next().text;
  }
  double expect_number(const std::string& what) {
    bool neg = false;
    if (is_punct("-")) {
      next();
      neg = true;
    }
    if (peek().kind != Tok::number) fail(peek(), "expected " + what + " but found " + describe(peek()));
    const Token& t = next();
    try {
      std::size_t used = 0;
      double v = std::stod(t.text, &used);
      if (used != t.text.size()) throw std::invalid_argument("");
      return neg ? -v : v;
    } catch (const std::exception&) {
      fail(t, "malformed number '" + t.text + "'");
    }
  }
  ElemType parse_type() {
    const Token& t = peek();
    std::string n = expect_ident("an element type (f32 or f64)");
    if (n == "f32") return ElemType::f32;
    if (n == "f64") return ElemType::f64;
    fail(t, "unknown element type '" + n + "' (use f32 or f64)");
  }

  void parse_decl(Spec& spec) {
    const Token& kw = peek();
    if (kw.kind != Tok::ident) fail(kw, "expected a declaration (dim, param, input, output, temp, steps, compute, space) but found " + describe(kw));
    std::string k = kw.text;
    next();
    if (k == "dim") {
      do {
        DimDecl d;
        d.loc = peek().loc;
        d.name = expect_ident("a dim name");
        if (is_punct("=")) {
          next();
          d.value = parse_expr();
        }
        spec.dims.push_back(std::move(d));
      } while (is_punct(",") && (next(), true));
    } else if (k == "param") {
      ParamDecl p;
      p.loc = peek().loc;
      p.name = expect_ident("a param name");
      expect_punct(":");
      p.type = parse_type();
      if (is_punct("=")) {
        next();
        p.value = expect_number("the param's default value");
      }
      spec.params.push_back(std::move(p));
    } else if (k == "input" || k == "output" || k == "temp") {
      TensorDecl t;
      t.role = k == "input" ? TensorRole::input : k == "output" ? TensorRole::output : TensorRole::temp;
      t.loc = peek().loc;
      t.name = expect_ident("a tensor name");
      expect_punct(":");
      t.type = parse_type();
      expect_punct("[");
      t.shape.push_back(parse_expr());
      while (is_punct(",")) {
        next();
        t.shape.push_back(parse_expr());
      }
      expect_punct("]");
      if (is_ident("boundary")) {
        next();
        const Token& b = peek();
        std::string bn = expect_ident("a boundary kind (zero or clamp)");
        if (bn == "zero") t.boundary = Boundary::zero;
        else if (bn == "clamp") t.boundary = Boundary::clamp;
        else fail(b, "unknown boundary '" + bn + "' (use zero or clamp)");
      }
      spec.tensors.push_back(std::move(t));
    } else if (k == "steps") {
      StepsDecl s;
      s.loc = kw.loc;
      s.count_dim = expect_ident("the dim counting the steps");
      expect_punct(":");
      s.from = expect_ident("the tensor each step writes");
      expect_punct("->");
      s.to = expect_ident("the tensor the next step reads");
      if (spec.steps) fail(kw, "'steps' declared twice");
      spec.steps = s;
    } else if (k == "compute") {
      Algorithm a;
      a.loc = kw.loc;
      a.name = peek().kind == Tok::ident ? next().text : "default";
      if (is_punct("=")) {
        next();
        const Token& how = peek();
        a.method = expect_ident("a derived algorithm (winograd or ocvec)");
        if (a.method != "winograd" && a.method != "ocvec")
          fail(how, "unknown derived algorithm '" + a.method + "' (expected winograd or ocvec)");
        expect_punct("(");
        const Token& base = peek();
        a.base = expect_ident("the compute block it is derived from");
        expect_punct(")");
        const Algorithm* from = nullptr;
        for (const auto& other : spec.algorithms)
          if (other.name == a.base) from = &other;
        if (!from) fail(base, "'" + a.base + "' is not a compute block declared before this one");
        if (!from->method.empty()) fail(base, "'" + a.base + "' is itself derived; name a block of statements");
        a.stmts = from->stmts;
        for (const auto& other : spec.algorithms)
          if (other.name == a.name) fail(kw, "compute block '" + a.name + "' declared twice");
        spec.algorithms.push_back(std::move(a));
        return;
      }
      expect_punct("{");
      while (!is_punct("}")) {
        if (peek().kind == Tok::end) fail(peek(), "unterminated 'compute' block (missing '}')");
        a.stmts.push_back(parse_stmt());
      }
      next();
      if (a.stmts.empty()) fail(kw, "empty 'compute' block");
      for (const auto& other : spec.algorithms)
        if (other.name == a.name) fail(kw, "compute block '" + a.name + "' declared twice");
      spec.algorithms.push_back(std::move(a));
    } else if (k == "space") {
      expect_punct("{");
      while (!is_punct("}")) {
        if (peek().kind == Tok::end) fail(peek(), "unterminated 'space' block (missing '}')");
        spec.knobs.push_back(parse_knob());
      }
      next();
    } else {
      fail(kw, "unknown declaration '" + k + "' (expected dim, param, input, output, temp, steps, compute or space)");
    }
  }

  Stmt parse_stmt() {
    Stmt s;
    s.loc = peek().loc;
    s.tensor = expect_ident("a statement 'T[i, ...] = expr'");
    expect_punct("[");
    std::set<std::string> seen;
    do {
      const Token& v = peek();
      std::string name = expect_ident("a loop variable (left-hand indices are plain variables)");
      if (!seen.insert(name).second) fail(v, "loop variable '" + name + "' repeated on the left-hand side");
      s.vars.push_back(name);
    } while (is_punct(",") && (next(), true));
    expect_punct("]");
    if (is_punct("=")) {
      s.op = ReduceOp::assign;
    } else if (is_punct("+=")) {
      s.op = ReduceOp::add;
    } else if ((is_ident("max") || is_ident("min")) && peek(1).kind == Tok::punct && peek(1).text == "=") {
      s.op = peek().text == "max" ? ReduceOp::max : ReduceOp::min;
      next();
    } else {
      fail(peek(), "expected '=', '+=', 'max=' or 'min=' but found " + describe(peek()));
    }
    next();
    s.rhs = parse_expr();
    return s;
  }

  KnobDecl parse_knob() {
    KnobDecl k;
    k.loc = peek().loc;
    const Token& kw = peek();
    k.kind = expect_ident("a space entry (tile, block, vectorize, unroll, parallel, order, layout, timeblock, compute_at, rfactor)");
    static const std::set<std::string> with_target = {"tile", "block", "vectorize", "unroll", "layout", "compute_at", "winograd", "ocvec", "rfactor"};
    static const std::set<std::string> without = {"parallel", "order", "timeblock"};
    if (with_target.count(k.kind)) {
      k.target = expect_ident("the variable or tensor '" + k.kind + "' applies to");
    } else if (!without.count(k.kind)) {
      fail(kw, "unknown space entry '" + k.kind + "' (expected tile, block, vectorize, unroll, parallel, order, layout, timeblock, compute_at, rfactor, winograd or ocvec)");
    }
    expect_punct(":");
    if (k.kind == "order") {
      do {
        std::string perm;
        int line = toks_[pos_ - 1].loc.line;  // a permutation ends with its line
        while (peek().kind == Tok::ident && peek().loc.line == line) {
          line = peek().loc.line;
          perm += (perm.empty() ? "" : " ") + next().text;
        }
        if (perm.empty()) fail(peek(), "expected a loop order (variable names) but found " + describe(peek()));
        k.values.push_back(perm);
      } while (is_punct("|") && (next(), true));
      return k;
    }
    do {
      const Token& v = peek();
      if (v.kind != Tok::ident && v.kind != Tok::number) fail(v, "expected a value but found " + describe(v));
      k.values.push_back(next().text);
    } while (is_punct(",") && (next(), true));
    return k;
  }

  // Every node is made here, so the tree's depth is known at each node: a node deeper
  // than kMaxExprDepth is an error at its position (later passes recurse on the tree).
  std::unordered_map<const Expr*, int> depth_;
  int nesting_ = 0;  // parse_expr / unary-minus recursion of the parser itself

  int depth_of(const ExprPtr& e) const {
    auto it = depth_.find(e.get());
    return it == depth_.end() ? 1 : it->second;
  }
  ExprPtr make(Expr e) {
    int d = 1;
    for (const auto& a : e.args) d = std::max(d, depth_of(a) + 1);
    if (d > kMaxExprDepth) throw Error(e.loc.str() + ": expression nested deeper than " + std::to_string(kMaxExprDepth));
    ExprPtr p = std::make_shared<const Expr>(std::move(e));
    depth_[p.get()] = d;
    return p;
  }
  // Bounds the parser's own recursion ('(' and unary '-' nesting) at token t.
  struct Nest {
    Parser& p;
    Nest(Parser& parser, const Token& t) : p(parser) {
      if (++p.nesting_ > kMaxExprDepth) fail(t, "expression nested deeper than " + std::to_string(kMaxExprDepth));
    }
    ~Nest() { --p.nesting_; }
    Nest(const Nest&) = delete;
    Nest& operator=(const Nest&) = delete;
  };
  ExprPtr binary(char op, const SourceLoc& loc, ExprPtr a, ExprPtr b) {
    Expr e;
    e.kind = Expr::Kind::binary;
    e.loc = loc;
    e.op = op;
    e.args = {std::move(a), std::move(b)};
    return make(std::move(e));
  }

  // A chain "t0 op1 t1 op2 t2 ..." of one precedence level. Up to kLeftChain operands
  // it is the left-associated tree as written ((t0 op1 t1) op2 t2 ...), evaluated
  // strictly left to right. A longer chain of only + and - (or only *) is built as a
  // balanced tree instead (pairwise summation: depth log2(n), so a generated sum of
  // 20,000 terms works in every pass); only the rounding order differs, and signs are
  // kept exact (a - b is a + (-b) in IEEE arithmetic). A long chain with '/' stays
  // left-associated (division does not reassociate) and meets the depth limit.
  static constexpr std::size_t kLeftChain = 32;
  struct Operand {
    ExprPtr e;
    char op;  // the operator before it ('+' for the first)
    SourceLoc loc;
  };
  ExprPtr chain(std::vector<Operand>& v) {
    bool reassociable = v.size() > kLeftChain;
    for (std::size_t i = 1; i < v.size() && reassociable; ++i) reassociable = v[i].op != '/' && (v[i].op == '*') == (v[1].op == '*');
    if (!reassociable) {
      ExprPtr lhs = v[0].e;
      for (std::size_t i = 1; i < v.size(); ++i) lhs = binary(v[i].op, v[i].loc, lhs, v[i].e);
      return lhs;
    }
    return balanced(v, 0, v.size()).first;
  }
  // Operands [lo, hi) as a tree E and a flag `neg`: their signed sum (or product) is
  // neg ? -E : E. Operand lo == 0 is positive, so the whole chain never needs a '-'.
  std::pair<ExprPtr, bool> balanced(const std::vector<Operand>& v, std::size_t lo, std::size_t hi) {
    if (hi - lo == 1) return {v[lo].e, lo > 0 && v[lo].op == '-'};
    const std::size_t mid = lo + (hi - lo) / 2;
    auto [l, nl] = balanced(v, lo, mid);  // recursion depth log2(n)
    auto [r, nr] = balanced(v, mid, hi);
    const SourceLoc& at = v[mid].loc;
    if (v[mid].op == '*') return {binary('*', at, l, r), false};
    if (nl == nr) return {binary('+', at, l, r), nl};
    return nl ? std::pair{binary('-', at, r, l), false} : std::pair{binary('-', at, l, r), false};
  }

  ExprPtr parse_expr() {
    Nest guard(*this, peek());
    std::vector<Operand> v{{parse_term(), '+', {}}};
    while (is_punct("+") || is_punct("-")) {
      const Token& t = next();
      v.push_back({nullptr, t.text[0], t.loc});
      v.back().e = parse_term();
    }
    return chain(v);
  }
  ExprPtr parse_term() {
    std::vector<Operand> v{{parse_unary(), '*', {}}};
    while (is_punct("*") || is_punct("/")) {
      const Token& t = next();
      v.push_back({nullptr, t.text[0], t.loc});
      v.back().e = parse_unary();
    }
    return chain(v);
  }
  ExprPtr parse_unary() {
    if (is_punct("-")) {
      Nest guard(*this, peek());
      Expr e;
      e.kind = Expr::Kind::neg;
      e.loc = next().loc;
      e.args = {parse_unary()};
      return make(std::move(e));
    }
    return parse_primary();
  }
  ExprPtr parse_primary() {
    const Token& t = peek();
    Expr e;
    e.loc = t.loc;
    if (t.kind == Tok::number) {
      e.kind = Expr::Kind::number;
      e.number = expect_number("a number");
      return make(std::move(e));
    }
    if (is_punct("(")) {
      next();
      ExprPtr inner = parse_expr();
      expect_punct(")");
      return inner;
    }
    if (t.kind != Tok::ident) fail(t, "expected an expression but found " + describe(t));
    e.name = next().text;
    if (is_punct("[") || is_punct("(")) {
      const bool access = is_punct("[");
      e.kind = access ? Expr::Kind::access : Expr::Kind::call;
      next();
      e.args.push_back(parse_expr());
      while (is_punct(",")) {
        next();
        e.args.push_back(parse_expr());
      }
      expect_punct(access ? "]" : ")");
      if (!access) {
        static const std::set<std::string> fns = {"exp", "fast_exp", "log", "sqrt", "abs", "max", "min"};
        if (!fns.count(e.name)) fail(t, "unknown function '" + e.name + "' (known: exp, fast_exp, log, sqrt, abs, max, min)");
        const std::size_t want = (e.name == "max" || e.name == "min") ? 2 : 1;
        if (e.args.size() != want) fail(t, "'" + e.name + "' takes " + std::to_string(want) + " argument(s)");
      }
      return make(std::move(e));
    }
    e.kind = Expr::Kind::name;
    return make(std::move(e));
  }
};

}  // namespace

Spec parse_spec(const std::string& text, const std::string& file) {
  Parser p(dsl::tokenize(text, file));
  Spec s = p.parse_all();
  s.source_text = text;
  return s;
}

Spec parse_spec_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error("cannot read spec file '" + path + "'");
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_spec(ss.str(), path);
}

}  // namespace taihu::autotune
