// Gradient-boosted regression trees (see cost_model.hpp). Exact greedy splits: the
// sample counts here are the trials of one tuning run (tens to a few thousand).
#include "taihu/autotune/cost_model.hpp"

#include <algorithm>
#include <numeric>

#include "taihu/arch/error.hpp"

namespace taihu::autotune {

void CostModel::fit(const std::vector<std::vector<double>>& x, const std::vector<double>& y) {
  if (x.size() != y.size() || x.empty()) throw Error("cost model: need as many feature rows as targets (and at least one)");
  for (const auto& row : x)
    if (row.size() != x.front().size()) throw Error("cost model: feature rows differ in length");
  base_ = std::accumulate(y.begin(), y.end(), 0.0) / static_cast<double>(y.size());
  std::vector<double> pred(y.size(), base_), resid(y.size());
  trees_.clear();
  for (int t = 0; t < opt_.trees; ++t) {
    for (std::size_t i = 0; i < y.size(); ++i) resid[i] = y[i] - pred[i];
    Tree tree;
    std::vector<int> idx(y.size());
    std::iota(idx.begin(), idx.end(), 0);
    grow(tree, x, resid, idx, 0, static_cast<int>(idx.size()), 0);
    for (std::size_t i = 0; i < y.size(); ++i) pred[i] += opt_.learning_rate * eval(tree, x[i]);
    trees_.push_back(std::move(tree));
  }
  trained_ = true;
}

int CostModel::grow(Tree& t, const std::vector<std::vector<double>>& x, const std::vector<double>& r,
                    std::vector<int>& idx, int lo, int hi, int depth) {
  const int me = static_cast<int>(t.size());
  t.push_back(Node{});
  double sum = 0;
  for (int i = lo; i < hi; ++i) sum += r[static_cast<std::size_t>(idx[static_cast<std::size_t>(i)])];
  const int n = hi - lo;
  t[static_cast<std::size_t>(me)].value = sum / n;
  if (depth >= opt_.depth || n < 2 * opt_.min_leaf) return me;
  double best_gain = 1e-12;
  int best_f = -1;
  double best_thr = 0;
  const std::size_t nf = x.front().size();
  std::vector<std::pair<double, double>> col(static_cast<std::size_t>(n));
  for (std::size_t f = 0; f < nf; ++f) {
    for (int i = 0; i < n; ++i) {
      const auto s = static_cast<std::size_t>(idx[static_cast<std::size_t>(lo + i)]);
      col[static_cast<std::size_t>(i)] = {x[s][f], r[s]};
    }
    std::sort(col.begin(), col.end());
    double left = 0;
    for (int i = 0; i + 1 < n; ++i) {
      left += col[static_cast<std::size_t>(i)].second;
      const int nl = i + 1, nr = n - nl;
      if (col[static_cast<std::size_t>(i)].first == col[static_cast<std::size_t>(i + 1)].first) continue;
      if (nl < opt_.min_leaf || nr < opt_.min_leaf) continue;
      const double right = sum - left;
      const double gain = left * left / nl + right * right / nr - sum * sum / n;
      if (gain > best_gain) {
        best_gain = gain;
        best_f = static_cast<int>(f);
        best_thr = 0.5 * (col[static_cast<std::size_t>(i)].first + col[static_cast<std::size_t>(i + 1)].first);
      }
    }
  }
  if (best_f < 0) return me;
  auto mid = std::partition(idx.begin() + lo, idx.begin() + hi,
                            [&](int s) { return x[static_cast<std::size_t>(s)][static_cast<std::size_t>(best_f)] < best_thr; });
  const int m = static_cast<int>(mid - idx.begin());
  t[static_cast<std::size_t>(me)].feature = best_f;
  t[static_cast<std::size_t>(me)].threshold = best_thr;
  const int l = grow(t, x, r, idx, lo, m, depth + 1);
  const int rr = grow(t, x, r, idx, m, hi, depth + 1);
  t[static_cast<std::size_t>(me)].left = l;
  t[static_cast<std::size_t>(me)].right = rr;
  return me;
}

double CostModel::eval(const Tree& t, const std::vector<double>& x) {
  int i = 0;
  while (t[static_cast<std::size_t>(i)].feature >= 0) {
    const Node& nd = t[static_cast<std::size_t>(i)];
    i = x[static_cast<std::size_t>(nd.feature)] < nd.threshold ? nd.left : nd.right;
  }
  return t[static_cast<std::size_t>(i)].value;
}

double CostModel::predict(const std::vector<double>& x) const {
  double v = base_;
  for (const auto& t : trees_) v += opt_.learning_rate * eval(t, x);
  return v;
}

}  // namespace taihu::autotune
