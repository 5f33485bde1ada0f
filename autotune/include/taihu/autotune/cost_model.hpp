// The learned cost model that decides which candidates are worth measuring: gradient
// boosted regression trees (squared loss, shallow trees, shrinkage) on schedule
// features, predicting log(run time) (or, when tuning transfers across shapes, the log
// of the time relative to the shape's best: see transfer.hpp). Samples may carry
// weights (records of other shapes count less than the shape's own). Splits are
// searched over at most 64 candidate thresholds per feature (every midpoint between
// distinct values when a feature has at most 64 of them, else quantiles), so a fit
// on a log of thousands of records stays cheap enough to redo every batch.
// Deterministic: same data, same model.
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

  // x: one feature row per sample (equal lengths); y: targets; w: weights (> 0; empty:
  // all 1). Throws taihu::Error on mismatched lengths or a weight that is not > 0.
  void fit(const std::vector<std::vector<double>>& x, const std::vector<double>& y, const std::vector<double>& w = {});
  double predict(const std::vector<double>& x) const;
  bool trained() const { return trained_; }

 private:
  struct Node {
    int feature = -1;  // -1: leaf
    double threshold = 0, value = 0;
    int left = -1, right = -1;
  };
  using Tree = std::vector<Node>;
  struct Binned;  // the samples' features as bin indices (cost_model.cpp)
  Options opt_;
  double base_ = 0;
  std::vector<Tree> trees_;
  bool trained_ = false;
  int grow(Tree& t, const Binned& b, const std::vector<double>& r, const std::vector<double>& w, std::vector<int>& idx, int lo, int hi,
           int depth);
  static double eval(const Tree& t, const std::vector<double>& x);
};

}  // namespace taihu::autotune
