// A Problem is a parsed spec bound to concrete sizes (--shape M=..,N=..) and checked:
// every name resolves, every loop variable has a range, left-hand tensors are outputs
// or temps, accesses by a bare variable stay inside the tensor unless it declares a
// boundary. The interpreter, the schedule space and both code generators read it.
// Element type: specs may say f32 or f64; this version generates f32 code only and
// rejects f64 tensors with a clear error.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "taihu/autotune/ast.hpp"

namespace taihu::autotune {

struct LoopVar {
  std::string name;
  std::int64_t extent = 0;
};

// One statement with its loops: pure (the left-hand variables, outermost first) and
// reduction variables (in order of first appearance on the right).
struct BoundStmt {
  const Stmt* stmt = nullptr;
  std::vector<LoopVar> pure;
  std::vector<LoopVar> reduce;
  std::int64_t extent(const std::string& var) const;  // 0 if not a loop var here
  bool is_pure(const std::string& var) const;
};

struct BoundTensor {
  const TensorDecl* decl = nullptr;
  std::vector<std::int64_t> shape;
  std::int64_t size() const;
};

// A 2-D convolution recognized in a statement (what a derived `winograd` algorithm
// needs): Y[n, k, y, x] += X[n, c, y + r + off_y, x + s + off_x] * W[k, c, r, s]
// (stride 1, dilation 1; NCHW image, KCRS weights; the factors in either order).
struct ConvPattern {
  std::string image, weight;         // input tensor names
  std::int64_t n = 0, c = 0, h = 0, w = 0;
  std::int64_t k = 0, r = 0, s = 0;  // output channels, window
  std::int64_t oh = 0, ow = 0;       // output extents
  std::int64_t off_y = 0, off_x = 0; // image row = y + r + off_y (e.g. -P)
};

// Recognizes the pattern in an algorithm's single statement; returns "" and fills
// *out, or says why not (e.g. "the window is 7x7"). Shape-dependent: a spec may be a
// 3x3 convolution for one --shape and not for another. The window size is checked
// only for a `winograd` algorithm (3x3 or 5x5); an `ocvec` one takes any window.
std::string match_winograd_conv(const class Problem& p, int algorithm, ConvPattern* out);

class Problem {
 public:
  // dims: values for the dims without a definition (and overrides of defaults);
  // params: overrides of param defaults. Throws taihu::Error (with file:line:col
  // where a spec position is at fault).
  Problem(Spec spec, const std::map<std::string, std::int64_t>& dims,
          const std::map<std::string, double>& params = {});

  const Spec& spec() const { return *spec_; }
  std::int64_t dim(const std::string& name) const;
  const std::map<std::string, std::int64_t>& dims() const { return dims_; }
  double param(const std::string& name) const;
  const std::map<std::string, double>& params() const { return params_; }

  const BoundTensor& tensor(const std::string& name) const;
  const std::vector<std::string>& inputs() const { return inputs_; }  // declaration order
  const std::string& output() const { return output_; }
  int algorithm_count() const { return static_cast<int>(spec_->algorithms.size()); }
  bool is_winograd(int algorithm) const { return spec_->algorithms.at(static_cast<std::size_t>(algorithm)).method == "winograd"; }
  // A derived `ocvec` algorithm: the base's convolution with output channels in vector
  // lanes and packed weights (any window, stride 1; space.hpp OcvecSchedule).
  bool is_ocvec(int algorithm) const { return spec_->algorithms.at(static_cast<std::size_t>(algorithm)).method == "ocvec"; }
  // For any derived convolution algorithm (winograd, ocvec): "" when this shape can run
  // it (then conv_pattern() is the convolution), else why not.
  const std::string& conv_unsupported(int algorithm) const { return winograd_why_.at(static_cast<std::size_t>(algorithm)); }
  const ConvPattern& conv_pattern(int algorithm) const { return winograd_conv_.at(static_cast<std::size_t>(algorithm)); }
  // For a winograd algorithm: "" when this shape can run it (then winograd_conv() is
  // the convolution), else why not ("compute winograd: the window is 5x5 ...").
  const std::string& winograd_unsupported(int algorithm) const { return winograd_why_.at(static_cast<std::size_t>(algorithm)); }
  const ConvPattern& winograd_conv(int algorithm) const { return winograd_conv_.at(static_cast<std::size_t>(algorithm)); }
  const std::vector<BoundStmt>& stmts(int algorithm) const { return stmts_.at(algorithm); }
  std::int64_t steps() const { return steps_; }

  // "M=1024,N=1024,K=1024": the dims without a definition in the spec (the ones a
  // user binds), in declaration order. Keys records.
  std::string shape_key() const;
  // Floating-point operations of one run of an algorithm (for GFLOP/s).
  double flops(int algorithm) const;
  // Evaluates an integer expression over dims (and loop variables in `vars`).
  std::int64_t eval_int(const Expr& e, const std::map<std::string, std::int64_t>& vars = {}) const;

 private:
  std::shared_ptr<const Spec> spec_;
  std::map<std::string, std::int64_t> dims_;
  std::map<std::string, double> params_;
  std::map<std::string, BoundTensor> tensors_;
  std::vector<std::string> inputs_;
  std::string output_;
  std::vector<std::vector<BoundStmt>> stmts_;
  std::int64_t steps_ = 1;
  std::vector<std::string> winograd_why_;
  std::vector<ConvPattern> winograd_conv_;
  void check_stmt(BoundStmt& b);
};

// "M=1024,N=1024,K=1024" -> {M:1024, ...}; throws taihu::Error naming the bad item.
std::map<std::string, std::int64_t> parse_shape(const std::string& text);

}  // namespace taihu::autotune
