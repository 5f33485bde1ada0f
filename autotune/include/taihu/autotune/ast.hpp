// The syntax tree of a taihu-tune operator spec (the DSL is documented in
// autotune/README.md and in the grammar comment of src/dsl/parser.cpp).
// Contract: the parser builds a Spec whose every node carries its source position;
// later stages (analysis, interpreter, code generators) never modify it.
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace taihu::autotune {

struct SourceLoc {
  std::string file;
  int line = 0;
  int column = 0;
  std::string str() const;  // "file:line:column"
};

enum class ElemType { f32, f64 };
const char* elem_type_name(ElemType t);

struct Expr;
using ExprPtr = std::shared_ptr<const Expr>;

// The deepest expression tree (and parenthesis / unary-minus nesting) a spec may
// have. Every pass over expressions (analysis, interpreter, code generators, Halide's
// own compiler) recurses on the tree, so the parser and Problem reject deeper ones
// with "file:line:column: expression nested deeper than 256" instead of overflowing
// the stack. Long flat chains (a + b + ... or a * b * ...) stay far below it: the
// parser builds them as balanced trees (see parser.cpp).
inline constexpr int kMaxExprDepth = 256;

// An expression: numbers, names (loop variables, dims, params), tensor accesses
// T[i, j], unary minus, + - * /, and calls exp/log/sqrt/abs/max/min.
struct Expr {
  enum class Kind { number, name, access, neg, binary, call };
  Kind kind = Kind::number;
  double number = 0;
  std::string name;           // name / tensor / function
  char op = 0;                // binary: + - * /
  std::vector<ExprPtr> args;  // access indices, call arguments, binary operands
  SourceLoc loc;
};

enum class ReduceOp { assign, add, max, min };
const char* reduce_op_text(ReduceOp op);  // "=", "+=", "max=", "min="

// T[i, j, ...] op= rhs. Left indices are distinct bare loop variables (the pure
// variables); variables on the right that are not on the left are reduced over.
struct Stmt {
  std::string tensor;
  std::vector<std::string> vars;
  ReduceOp op = ReduceOp::assign;
  ExprPtr rhs;
  SourceLoc loc;
};

enum class TensorRole { input, output, temp };
enum class Boundary { none, zero, clamp };

struct TensorDecl {
  std::string name;
  TensorRole role = TensorRole::input;
  ElemType type = ElemType::f32;
  std::vector<ExprPtr> shape;  // integer expressions over dims
  Boundary boundary = Boundary::none;
  SourceLoc loc;
};

struct DimDecl {
  std::string name;
  ExprPtr value;  // default / definition; null: must be bound by --shape
  SourceLoc loc;
};

struct ParamDecl {
  std::string name;
  ElemType type = ElemType::f32;
  double value = 0;
  SourceLoc loc;
};

// One alternative implementation of the operator ("compute NAME { ... }"), or a
// derived one ("compute NAME = winograd(BASE)": BASE's statements, which must be a
// 3x3 stride-1 convolution, computed by Winograd minimal filtering; stmts is a copy
// of BASE's and is what the reference interpreter evaluates).
struct Algorithm {
  std::string name;
  std::vector<Stmt> stmts;
  std::string method;  // "" (the statements as written) | "winograd"
  std::string base;    // the algorithm a derived one is computed from
  SourceLoc loc;
};

// "steps T : v -> u": run the compute block T times, the output v of one step
// becoming the input u of the next.
struct StepsDecl {
  std::string count_dim;
  std::string from, to;
  SourceLoc loc;
};

// One line of the space section. kind: tile | vectorize | unroll | parallel | order |
// layout | timeblock | compute_at. target: the variable / tensor it applies to (may be
// empty). values: the alternatives (integers or names; order: space-separated lists).
struct KnobDecl {
  std::string kind;
  std::string target;
  std::vector<std::string> values;
  SourceLoc loc;
};

struct Spec {
  std::string name;
  std::string source_text;  // the file as read (its hash keys the records)
  SourceLoc loc;
  std::vector<DimDecl> dims;
  std::vector<ParamDecl> params;
  std::vector<TensorDecl> tensors;
  std::vector<Algorithm> algorithms;
  std::optional<StepsDecl> steps;
  std::vector<KnobDecl> knobs;

  const TensorDecl* find_tensor(const std::string& n) const;
  const DimDecl* find_dim(const std::string& n) const;
  const ParamDecl* find_param(const std::string& n) const;
};

}  // namespace taihu::autotune
