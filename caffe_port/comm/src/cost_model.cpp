// Alpha-beta-gamma predictions for each algorithm and the choice among them.
//   ring:         2(p-1) steps of (alpha + m*alpha_seg + n/p*beta) + (p-1)/p n gamma
//                 (segments overlap transfer with reduction on a network, but inside a
//                 node the same cores copy and reduce, so the model counts gamma in full)
//   recursive d.: log2(p') * (alpha + n*beta + n*gamma) + fold
//   Rabenseifner: 2 log2(p') alpha + 2 (p'-1)/p' n beta + (p'-1)/p' n gamma + fold
//   fold (p not a power of two): 2 (alpha + n beta) + n gamma
//   shm:          small: sync + n copy + (L-1) n gamma (everyone sums every slot);
//                 large: 2 sync + (2L-1)/L n copy + (L-1)/L n gamma (publish, store and
//                 gather copies; each rank reduces its 1/L block)
//   hierarchical: shm phases + per-tier ring RS/AG on shrinking blocks + top allreduce
#include "taihu/comm/cost_model.hpp"

#include <algorithm>
#include <cmath>

namespace taihu::comm {

namespace {
int floor_pow2(int p) {
  int q = 1;
  while (q * 2 <= p) q *= 2;
  return q;
}
int log2i(int p) {
  int k = 0;
  while ((1 << k) < p) ++k;
  return k;
}
}  // namespace

LinkCost CostParams::tier(std::size_t t) const {
  if (tiers.empty()) return node_p2p;
  return tiers[std::min(t, tiers.size() - 1)];
}

double CostModel::ring(int p, double n, const LinkCost& link, std::size_t segment_bytes) const {
  if (p <= 1) return 0;
  const double block = n / p;
  const double seg = std::max<double>(1.0, std::min<double>(static_cast<double>(segment_bytes), block));
  const double segments = std::ceil(block / seg);
  // Each extra segment costs a fraction of a message latency (it is pipelined).
  const double step = link.alpha + (segments - 1) * 0.25 * link.alpha + block * link.beta;
  return 2.0 * (p - 1) * step + (p - 1) * block * params_.gamma;
}

std::size_t CostModel::ring_segment(int p, double n, const LinkCost& link) const {
  if (p <= 1) return 1 << 16;
  // minimise (block/S) * 0.25 alpha + S * gamma  ->  S = sqrt(block * 0.25 alpha / gamma)
  const double block = n / p;
  double s = std::sqrt(block * 0.25 * link.alpha / std::max(params_.gamma, 1e-15));
  s = std::clamp(s, 8192.0, 4.0 * 1024 * 1024);
  return static_cast<std::size_t>(s);
}

double CostModel::recursive_doubling(int p, double n, const LinkCost& link) const {
  if (p <= 1) return 0;
  const int q = floor_pow2(p);
  double t = log2i(q) * (link.alpha + n * link.beta + n * params_.gamma);
  if (q != p) t += 2 * (link.alpha + n * link.beta) + n * params_.gamma;
  return t;
}

double CostModel::rabenseifner(int p, double n, const LinkCost& link) const {
  if (p <= 1) return 0;
  const int q = floor_pow2(p);
  const double frac = (q - 1.0) / q;
  double t = 2 * log2i(q) * link.alpha + 2 * frac * n * link.beta + frac * n * params_.gamma;
  if (q != p) t += 2 * (link.alpha + n * link.beta) + n * params_.gamma;
  return t;
}

double CostModel::shared_memory(int L, double n) const {
  if (L <= 1) return 0;
  if (n * L <= 32 * 1024) return params_.shm_sync + n * params_.shm_copy + (L - 1) * n * params_.gamma;
  return 2 * params_.shm_sync + (2.0 * L - 1) / L * n * params_.shm_copy + (L - 1.0) / L * n * params_.gamma;
}

Choice CostModel::best_flat(int p, double n, const LinkCost& link) const {
  const std::size_t seg = ring_segment(p, n, link);
  Choice best{Algorithm::ring, seg, ring(p, n, link, seg)};
  if (const double t = recursive_doubling(p, n, link); t < best.predicted_seconds)
    best = {Algorithm::recursive_doubling, seg, t};
  if (const double t = rabenseifner(p, n, link); t < best.predicted_seconds)
    best = {Algorithm::rabenseifner, seg, t};
  return best;
}

double CostModel::hierarchical(const RankLayout& layout, double n) const {
  const int L = layout.ranks_per_node.empty() ? 1 : layout.ranks_per_node.front();
  // The shm phases wrap a network step, so each node barrier also waits for the slowest
  // rail: a barrier costs at least one point-to-point latency here (measured: with
  // oversubscribed ranks the probe's back-to-back barrier is far too optimistic).
  double t = 2 * std::max(params_.shm_sync, params_.node_p2p.alpha) +
             (2.0 * L - 1) / std::max(L, 1) * n * params_.shm_copy + (L - 1.0) / std::max(L, 1) * n * params_.gamma;
  if (L <= 1) t = 0;
  if (layout.nodes() <= 1) return t;
  double block = n / std::max(L, 1);
  int remaining = layout.nodes();
  std::size_t tier = 0;
  if (layout.complete_tiers()) {
    for (int s : layout.tier_sizes) {
      if (remaining <= s) break;  // this tier spans every node: it is the top
      const LinkCost link = params_.tier(tier);
      // ring reduce-scatter + allgather inside groups of s
      t += 2.0 * (s - 1) * (link.alpha + block / s * link.beta) + (s - 1) * block / s * params_.gamma;
      block /= s;
      remaining /= s;
      ++tier;
    }
  } else {
    tier = layout.tier_sizes.size();  // flat across all nodes over the outermost link
  }
  return t + best_flat(remaining, block, params_.tier(tier)).predicted_seconds;
}

LinkCost CostModel::flat_link(const RankLayout& layout) const {
  if (layout.nodes() <= 1) return params_.node_p2p;
  std::size_t outer = 0;
  long long span = 1;
  for (int s : layout.tier_sizes) {
    if (span >= layout.nodes()) break;
    span *= s;
    ++outer;
  }
  if (span < layout.nodes()) ++outer;
  return params_.tier(outer == 0 ? 0 : outer - 1);
}

Choice CostModel::choose(const RankLayout& layout, std::size_t bytes) const {
  const double n = static_cast<double>(bytes);
  Choice best = best_flat(layout.world_size, n, flat_link(layout));
  const bool multi_rank_node =
      std::any_of(layout.ranks_per_node.begin(), layout.ranks_per_node.end(), [](int r) { return r > 1; });
  if (layout.nodes() == 1) {
    if (const double t = shared_memory(layout.world_size, n); t < best.predicted_seconds)
      best = {Algorithm::shared_memory, best.segment_bytes, t};
  } else if (multi_rank_node || !layout.tier_sizes.empty()) {
    if (const double t = hierarchical(layout, n); t < best.predicted_seconds)
      best = {Algorithm::hierarchical, best.segment_bytes, t};
  }
  return best;
}

}  // namespace taihu::comm
