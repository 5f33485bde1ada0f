// Small helpers of the spec syntax tree (see ast.hpp).
#include "taihu/autotune/ast.hpp"

namespace taihu::autotune {

std::string SourceLoc::str() const {
  return file + ":" + std::to_string(line) + ":" + std::to_string(column);
}

const char* elem_type_name(ElemType t) { return t == ElemType::f32 ? "f32" : "f64"; }

const char* reduce_op_text(ReduceOp op) {
  switch (op) {
    case ReduceOp::assign: return "=";
    case ReduceOp::add: return "+=";
    case ReduceOp::max: return "max=";
    case ReduceOp::min: return "min=";
  }
  return "?";
}

const TensorDecl* Spec::find_tensor(const std::string& n) const {
  for (const auto& t : tensors)
    if (t.name == n) return &t;
  return nullptr;
}
const DimDecl* Spec::find_dim(const std::string& n) const {
  for (const auto& d : dims)
    if (d.name == n) return &d;
  return nullptr;
}
const ParamDecl* Spec::find_param(const std::string& n) const {
  for (const auto& p : params)
    if (p.name == n) return &p;
  return nullptr;
}

}  // namespace taihu::autotune
