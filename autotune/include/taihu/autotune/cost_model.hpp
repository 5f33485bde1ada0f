// The learned cost model that decides which candidates are worth measuring: gradient
// boosted regression trees (squared loss, shallow trees, shrinkage) on schedule
// features, predicting log(run time). Deterministic: same data, same model.
#pragma once
#include <vector>

namespace taihu::autotune {

class CostModel {
 public:
  struct Options {
    int trees = 80;
    int depth = 3;
    double learning_rate = 0.15;
    int min_leaf = 2;
  };
  CostModel() = default;
  explicit CostModel(Options o) : opt_(o) {}

  // x: one feature row per sample (equal lengths); y: targets. Throws on mismatch.
  void fit(const std::vector<std::vector<double>>& x, const std::vector<double>& y);
  double predict(const std::vector<double>& x) const;
  bool trained() const { return trained_; }

 private:
  struct Node {
    int feature = -1;  // -1: leaf
    double threshold = 0, value = 0;
    int left = -1, right = -1;
  };
  using Tree = std::vector<Node>;
  Options opt_;
  double base_ = 0;
  std::vector<Tree> trees_;
  bool trained_ = false;
  int grow(Tree& t, const std::vector<std::vector<double>>& x, const std::vector<double>& r,
           std::vector<int>& idx, int lo, int hi, int depth);
  static double eval(const Tree& t, const std::vector<double>& x);
};

}  // namespace taihu::autotune
