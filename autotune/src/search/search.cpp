// Random and evolutionary search guided by the cost model (see search.hpp).
#include "taihu/autotune/search.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "taihu/arch/error.hpp"

namespace taihu::autotune {

Strategy parse_strategy(const std::string& s) {
  if (s == "random") return Strategy::random;
  if (s == "evolutionary") return Strategy::evolutionary;
  throw Error("--strategy: unknown '" + s + "' (use random or evolutionary)");
}

Searcher::Searcher(const Space& space, Strategy strategy, std::uint64_t seed, bool use_cost_model)
    : space_(space), strategy_(strategy), rng_(seed), use_model_(use_cost_model) {
  if (strategy_ == Strategy::evolutionary) {
    templates_ = space_.templates();
    leading_ = std::min(space_.leading_templates(), templates_.size());
    seeds_end_ = leading_;
  }
}

void Searcher::observe(const Point& pt, double seconds) {
  history_.emplace_back(pt, seconds);
  seen_.insert(pt);
}

void Searcher::use_transfer(const Problem& p, int threads, std::vector<TransferSample> prior, std::vector<Point> carried) {
  problem_ = &p;
  transfer_ = std::make_unique<TransferFeatures>(p, space_, threads);
  prior_ = std::move(prior);
  carried_ = std::move(carried);
  fitted_at_ = -1;
}

std::vector<double> Searcher::features(const Point& pt) const {
  return transfer_ ? (*transfer_)(*problem_, space_, pt) : space_.features(pt);
}

void Searcher::refit() {
  if (!use_model_ || static_cast<int>(history_.size()) == fitted_at_) return;
  std::vector<std::vector<double>> x;
  std::vector<double> y, w;
  double best = std::numeric_limits<double>::infinity(), worst = 0;
  for (const auto& [p, s] : history_)
    if (std::isfinite(s)) worst = std::max(worst, s), best = std::min(best, s);
  for (const auto& smp : prior_) {
    x.push_back(smp.x);
    y.push_back(smp.y);
    w.push_back(smp.weight);
  }
  // With transfer the target is the time relative to the shape's best (as the other
  // shapes' samples have it); without, the log time itself.
  const double scale = transfer_ ? (std::isfinite(best) ? best : 0.0) : 1.0;
  if (scale > 0)
    for (const auto& [p, s] : history_) {
      x.push_back(features(p));
      // Failed points teach the model "slow": twice the slowest success.
      y.push_back(std::log((std::isfinite(s) ? s : (worst > 0 ? 2 * worst : 1.0)) / scale));
      w.push_back(1.0);
    }
  if (x.size() < 8) return;
  model_.fit(x, y, w);
  fitted_at_ = static_cast<int>(history_.size());
}

double Searcher::predict(const Point& pt) const {
  if (!model_.trained()) return std::numeric_limits<double>::quiet_NaN();
  const double v = std::exp(model_.predict(features(pt)));
  if (!transfer_) return v;
  double best = std::numeric_limits<double>::infinity();  // relative -> seconds
  for (const auto& [p, s] : history_) best = std::min(best, s);
  return std::isfinite(best) ? v * best : std::numeric_limits<double>::quiet_NaN();
}

Point Searcher::mutate(Point p) {
  const int n = static_cast<int>(p.size());
  if (n == 0) return p;
  bool changed = false;
  for (int i = 0; i < n; ++i) {
    const int card = static_cast<int>(space_.knobs()[static_cast<std::size_t>(i)].labels.size());
    if (card > 1 && rng_.uniform() < 1.0 / n) {
      p[static_cast<std::size_t>(i)] = rng_.below(card);
      changed = true;
    }
  }
  if (!changed) {
    const int i = rng_.below(n);
    const int card = static_cast<int>(space_.knobs()[static_cast<std::size_t>(i)].labels.size());
    p[static_cast<std::size_t>(i)] = rng_.below(card);
  }
  return p;
}

Point Searcher::crossover(const Point& a, const Point& b) {
  Point c = a;
  for (std::size_t i = 0; i < c.size(); ++i)
    if (rng_.below(2)) c[i] = b[i];
  return c;
}

std::vector<Point> Searcher::pool(int size) {
  std::vector<std::pair<Point, double>> ok;
  for (const auto& h : history_)
    if (std::isfinite(h.second)) ok.push_back(h);
  std::stable_sort(ok.begin(), ok.end(), [](const auto& x, const auto& y) { return x.second < y.second; });
  if (ok.size() > 16) ok.resize(16);
  std::vector<Point> out;
  std::set<Point> in_pool;
  const int attempts = size * 20;
  for (int a = 0; a < attempts && static_cast<int>(out.size()) < size; ++a) {
    Point c;
    if (strategy_ == Strategy::evolutionary && ok.size() >= 2 && rng_.uniform() < 0.85) {
      auto pick = [&]() -> const Point& {  // tournament of two
        const auto& x = ok[static_cast<std::size_t>(rng_.below(static_cast<int>(ok.size())))];
        const auto& y = ok[static_cast<std::size_t>(rng_.below(static_cast<int>(ok.size())))];
        return x.second <= y.second ? x.first : y.first;
      };
      c = rng_.uniform() < 0.5 ? mutate(crossover(pick(), pick())) : mutate(pick());
    } else {
      c = space_.random(rng_);
    }
    if (seen_.count(c) || in_pool.count(c) || !space_.valid(c)) continue;
    in_pool.insert(c);
    out.push_back(std::move(c));
  }
  return out;
}

void Searcher::seed_first(const std::vector<Point>& pts) {
  std::vector<Point> first;
  for (const Point& p : pts)
    if (space_.valid(p) && std::find(first.begin(), first.end(), p) == first.end()) first.push_back(p);
  // After the leading templates (Space::leading_templates) still to come, else next.
  const std::size_t at = std::max(next_template_, leading_);
  templates_.insert(templates_.begin() + static_cast<std::ptrdiff_t>(at), first.begin(), first.end());
  seeds_end_ = at + first.size();
}

std::vector<Point> Searcher::propose(int n) {
  std::vector<Point> out;
  // A model trained on other shapes ranks from the start: after the leading templates
  // and the seeds, the templates compete in the ranked pool instead of being measured
  // in order.
  refit();
  const bool transfer_ranked = !prior_.empty() && model_.trained();
  if (!transfer_ranked && history_.empty() && !seen_.count(space_.default_point()) && space_.valid(space_.default_point())) {
    out.push_back(space_.default_point());
    seen_.insert(out.back());
  }
  while (static_cast<int>(out.size()) < n && next_template_ < templates_.size() && !(transfer_ranked && next_template_ >= seeds_end_)) {
    const Point& t = templates_[next_template_++];
    if (seen_.count(t)) continue;
    out.push_back(t);
    seen_.insert(t);
  }
  if (static_cast<int>(out.size()) >= n) return out;
  const bool ranked = use_model_ && model_.trained();
  std::vector<Point> cands = pool(ranked ? std::max(64, 16 * n) : n - static_cast<int>(out.size()));
  if (transfer_ranked) {
    std::set<Point> in(cands.begin(), cands.end());
    auto offer = [&](const Point& p) {
      if (!seen_.count(p) && space_.valid(p) && in.insert(p).second) cands.push_back(p);
    };
    for (std::size_t i = next_template_; i < templates_.size(); ++i) offer(templates_[i]);
    for (const Point& p : carried_) offer(p);
  }
  if (ranked) {
    std::vector<std::pair<double, std::size_t>> score;
    for (std::size_t i = 0; i < cands.size(); ++i) score.emplace_back(model_.predict(features(cands[i])), i);
    std::stable_sort(score.begin(), score.end());
    // Mostly the best predicted; every fourth pick explores a random pool member.
    std::vector<bool> taken(cands.size(), false);
    std::size_t next_best = 0;
    int explore_tries = 0;
    while (static_cast<int>(out.size()) < n && next_best < score.size()) {
      std::size_t pick;
      if (out.size() % 4 == 3 && explore_tries < 8) {
        ++explore_tries;
        pick = static_cast<std::size_t>(rng_.below(static_cast<int>(cands.size())));
        if (taken[pick]) continue;
        explore_tries = 0;
      } else {
        explore_tries = 0;
        pick = score[next_best++].second;
        if (taken[pick]) continue;
      }
      taken[pick] = true;
      out.push_back(cands[pick]);
    }
  } else {
    for (auto& c : cands) {
      if (static_cast<int>(out.size()) >= n) break;
      out.push_back(c);
    }
  }
  for (const auto& p : out) seen_.insert(p);
  return out;
}

}  // namespace taihu::autotune
