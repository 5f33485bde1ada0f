// Gradient-boosted regression trees (see cost_model.hpp): weighted squared loss, splits
// chosen from per-feature histograms over at most kMaxBins bins.
#include "taihu/autotune/cost_model.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "taihu/arch/error.hpp"

namespace taihu::autotune {
namespace {
constexpr std::size_t kMaxBins = 64;
}  // namespace

// cuts[f]: ascending thresholds; bin[i][f] = how many cuts are <= x[i][f], so
// x < cuts[f][j] exactly when bin <= j.
struct CostModel::Binned {
  std::vector<std::vector<double>> cuts;
  std::vector<std::vector<std::uint8_t>> bin;
};

void CostModel::fit(const std::vector<std::vector<double>>& x, const std::vector<double>& y, const std::vector<double>& w_in) {
  if (x.size() != y.size() || x.empty()) throw Error("cost model: need as many feature rows as targets (and at least one)");
  if (!w_in.empty() && w_in.size() != y.size()) throw Error("cost model: need as many weights as targets");
  for (const auto& row : x)
    if (row.size() != x.front().size()) throw Error("cost model: feature rows differ in length");
  std::vector<double> w = w_in.empty() ? std::vector<double>(y.size(), 1.0) : w_in;
  for (double v : w)
    if (!(v > 0) || !std::isfinite(v)) throw Error("cost model: a sample weight is not a positive number");
  const std::size_t n = y.size(), nf = x.front().size();
  Binned b;
  b.cuts.resize(nf);
  b.bin.assign(n, std::vector<std::uint8_t>(nf, 0));
  std::vector<double> col;
  for (std::size_t f = 0; f < nf; ++f) {
    col.resize(n);  // (the previous feature's unique values shrank it)
    for (std::size_t i = 0; i < n; ++i) col[i] = x[i][f];
    std::sort(col.begin(), col.end());
    col.erase(std::unique(col.begin(), col.end()), col.end());
    std::vector<double>& c = b.cuts[f];
    if (col.size() <= kMaxBins) {
      for (std::size_t i = 0; i + 1 < col.size(); ++i) c.push_back(0.5 * (col[i] + col[i + 1]));
    } else {
      for (std::size_t q = 1; q < kMaxBins; ++q) {
        const std::size_t i = q * col.size() / kMaxBins;
        const double cut = 0.5 * (col[i - 1] + col[i]);
        if (c.empty() || cut > c.back()) c.push_back(cut);
      }
    }
    for (std::size_t i = 0; i < n; ++i)
      b.bin[i][f] = static_cast<std::uint8_t>(std::upper_bound(c.begin(), c.end(), x[i][f]) - c.begin());
  }
  double sw = 0, swy = 0;
  for (std::size_t i = 0; i < n; ++i) sw += w[i], swy += w[i] * y[i];
  base_ = swy / sw;
  std::vector<double> pred(n, base_), resid(n);
  std::vector<int> idx(n);
  trees_.clear();
  for (int t = 0; t < opt_.trees; ++t) {
    for (std::size_t i = 0; i < n; ++i) resid[i] = y[i] - pred[i];
    Tree tree;
    for (std::size_t i = 0; i < n; ++i) idx[i] = static_cast<int>(i);
    grow(tree, b, resid, w, idx, 0, static_cast<int>(n), 0);
    for (std::size_t i = 0; i < n; ++i) pred[i] += opt_.learning_rate * eval(tree, x[i]);
    trees_.push_back(std::move(tree));
  }
  trained_ = true;
}

int CostModel::grow(Tree& t, const Binned& b, const std::vector<double>& r, const std::vector<double>& w, std::vector<int>& idx, int lo,
                    int hi, int depth) {
  const int me = static_cast<int>(t.size());
  t.push_back(Node{});
  auto at = [&](int i) { return static_cast<std::size_t>(idx[static_cast<std::size_t>(i)]); };
  double sum = 0, wsum = 0;
  for (int i = lo; i < hi; ++i) sum += w[at(i)] * r[at(i)], wsum += w[at(i)];
  const int n = hi - lo;
  t[static_cast<std::size_t>(me)].value = sum / wsum;
  if (depth >= opt_.depth || n < 2 * opt_.min_leaf) return me;
  double best_gain = 1e-12 * wsum;
  int best_f = -1;
  std::size_t best_cut = 0;
  const std::size_t nf = b.cuts.size();
  std::vector<double> hs(kMaxBins), hw(kMaxBins);
  std::vector<int> hc(kMaxBins);
  for (std::size_t f = 0; f < nf; ++f) {
    const std::size_t cuts = b.cuts[f].size();
    if (cuts == 0) continue;
    std::fill(hs.begin(), hs.begin() + static_cast<std::ptrdiff_t>(cuts + 1), 0.0);
    std::fill(hw.begin(), hw.begin() + static_cast<std::ptrdiff_t>(cuts + 1), 0.0);
    std::fill(hc.begin(), hc.begin() + static_cast<std::ptrdiff_t>(cuts + 1), 0);
    for (int i = lo; i < hi; ++i) {
      const std::size_t s = at(i), k = b.bin[s][f];
      hs[k] += w[s] * r[s];
      hw[k] += w[s];
      ++hc[k];
    }
    double left = 0, wl = 0;
    int nl = 0;
    for (std::size_t j = 0; j < cuts; ++j) {
      left += hs[j], wl += hw[j], nl += hc[j];
      const int nr = n - nl;
      if (hc[j] == 0 || nl < opt_.min_leaf) continue;
      if (nr < opt_.min_leaf) break;
      const double right = sum - left, wr = wsum - wl;
      const double gain = left * left / wl + right * right / wr - sum * sum / wsum;
      if (gain > best_gain) {
        best_gain = gain;
        best_f = static_cast<int>(f);
        best_cut = j;
      }
    }
  }
  if (best_f < 0) return me;
  const auto bf = static_cast<std::size_t>(best_f);
  auto mid = std::partition(idx.begin() + lo, idx.begin() + hi, [&](int s) { return b.bin[static_cast<std::size_t>(s)][bf] <= best_cut; });
  const int m = static_cast<int>(mid - idx.begin());
  t[static_cast<std::size_t>(me)].feature = best_f;
  t[static_cast<std::size_t>(me)].threshold = b.cuts[bf][best_cut];
  const int l = grow(t, b, r, w, idx, lo, m, depth + 1);
  const int rr = grow(t, b, r, w, idx, m, hi, depth + 1);
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
