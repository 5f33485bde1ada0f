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
//   hierarchical: shm phases + per-tier RS/AG on shrinking blocks (halving/doubling in
//                 power-of-two groups: 2 log2(s) alpha, else the ring's 2(s-1) alpha) + top
//                 allreduce; when the top joins two groups, k pipelined chunks (k = 1, 2,
//                 4, ... 512, the cheapest): one chunk's inner phases and top exchange plus,
//                 per further chunk, the slower of the two (they overlap). Only chunks
//                 whose per-rank message across the top fits the MPI library's eager
//                 limit are candidates when any such chunk is >= kMinPipelineChunk: a
//                 rendezvous message waits a round trip across the slow link before its
//                 data (priced as 2 extra alpha), and measured worse than that (4 MiB on
//                 the namespace cluster: 64 KiB per rank 494 ms, 32 KiB 374 ms).
// Across tiers (uniform nodes, complete tiers) the flat recursive doubling and
// Rabenseifner run over the ranks in topology order with the distance ascending, so each
// step is priced on the tier it crosses (step_link). Every rank of a group crosses in the
// same step, so the flows share the bottleneck: a node's link (its L ranks), or, where a
// tier's measured per-flow bandwidth is >= 2x slower than the tier below (a shared,
// oversubscribed uplink, as a lone flow measures it), all ranks of the group below.
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

namespace {
bool in_order_layout(const RankLayout& l) { return l.nodes() > 1 && l.uniform_nodes() && l.complete_tiers(); }
}  // namespace

StepLink CostModel::step_link(const RankLayout& layout, long long distance) const {
  if (!in_order_layout(layout)) return {flat_link(layout), 1.0};
  const int L = layout.ranks_per_node.front();
  // units[k]: ranks in one group of level k (0 = node); link crossing into level k.
  std::vector<long long> units{L};
  for (int s : layout.tier_sizes) units.push_back(units.back() * s);
  auto link_of = [&](std::size_t k) { return k == 0 ? params_.node_p2p : params_.tier(k - 1); };
  std::size_t k = 0;
  while (k < units.size() && units[k] % (2 * distance) != 0) ++k;
  if (k == 0) return {params_.node_p2p, 1.0};
  const LinkCost link = link_of(k);
  double sharing = L;  // the node's ranks share its link
  if (k >= 2 && link.beta >= 2 * link_of(k - 1).beta) sharing = static_cast<double>(units[k - 1]);
  return {link, sharing};
}

double CostModel::recursive_doubling_in_order(const RankLayout& layout, double n) const {
  const int p = layout.world_size;
  if (p <= 1) return 0;
  if (!in_order_layout(layout)) return recursive_doubling(p, n, flat_link(layout));
  const int q = floor_pow2(p);
  double t = 0;
  for (long long d = 1; d < q; d *= 2) {
    const StepLink s = step_link(layout, d);
    t += s.link.alpha + n * s.link.beta * s.sharing + n * params_.gamma;
  }
  if (q != p) t += 2 * (flat_link(layout).alpha + n * flat_link(layout).beta) + n * params_.gamma;
  return t;
}

double CostModel::rabenseifner_in_order(const RankLayout& layout, double n) const {
  const int p = layout.world_size;
  if (p <= 1) return 0;
  if (!in_order_layout(layout)) return rabenseifner(p, n, flat_link(layout));
  const int q = floor_pow2(p);
  double t = (q - 1.0) / q * n * params_.gamma, piece = n;
  for (long long d = 1; d < q; d *= 2) {  // halving (and, mirrored, doubling) at distance d
    piece /= 2;
    const StepLink s = step_link(layout, d);
    t += 2 * (s.link.alpha + piece * s.link.beta * s.sharing);
  }
  if (q != p) t += 2 * (flat_link(layout).alpha + n * flat_link(layout).beta) + n * params_.gamma;
  return t;
}

double CostModel::group_phases(int s, double block, const LinkCost& link, double sharing) const {
  if (s <= 1) return 0;
  const double moved = (s - 1.0) / s * block;  // sent (and reduced) per rank, each way
  const bool halving = (s & (s - 1)) == 0;
  const double steps = halving ? 2.0 * log2i(s) : 2.0 * (s - 1);
  return steps * link.alpha + 2 * moved * link.beta * sharing + moved * params_.gamma;
}

HierarchicalPlan CostModel::hierarchical_plan(const RankLayout& layout, double n) const {
  const int L = layout.ranks_per_node.empty() ? 1 : layout.ranks_per_node.front();
  // The shm phases wrap a network step, so each node barrier also waits for the slowest
  // rail: a barrier costs at least one point-to-point latency here (measured: with
  // oversubscribed ranks the probe's back-to-back barrier is far too optimistic).
  double t = 2 * std::max(params_.shm_sync, params_.node_p2p.alpha) +
             (2.0 * L - 1) / std::max(L, 1) * n * params_.shm_copy + (L - 1.0) / std::max(L, 1) * n * params_.gamma;
  if (L <= 1) t = 0;
  if (layout.nodes() <= 1) return {t, 0};
  double block = n / std::max(L, 1);
  int remaining = layout.nodes();
  std::size_t tier = 0;
  double last_rs_ag = 0;  // the inner tier's phases, for the pipelined top
  int last_size = 1;
  LinkCost last_link;
  long long group_ranks = L;  // ranks in one group of the current tier
  double inner_beta = 0;      // per-flow beta of the last inner tier
  if (layout.complete_tiers()) {
    for (int s : layout.tier_sizes) {
      if (remaining <= s) break;  // this tier spans every node: it is the top
      const LinkCost link = params_.tier(tier);
      // reduce-scatter + allgather inside groups of s, L rails per node link
      last_rs_ag = group_phases(s, block, link, L);
      t += last_rs_ag;
      last_size = s;
      last_link = link;
      block /= s;
      remaining /= s;
      group_ranks *= s;
      inner_beta = link.beta;  // compared with the top link below
      ++tier;
    }
  } else {
    tier = layout.tier_sizes.size();  // flat across all nodes over the outermost link
  }
  LinkCost top = params_.tier(tier);
  // Every rank of a group crosses the top at once (one rail each).
  const bool shared_uplink = tier > 0 && top.beta >= 2 * inner_beta;
  top.beta *= shared_uplink ? static_cast<double>(group_ranks) : static_cast<double>(L);
  HierarchicalPlan best{t + best_flat(remaining, block, top).predicted_seconds, 0};
  if (remaining == 2 && last_size > 1) {
    // Two groups at the top: k chunks, chunk c's whole-block exchange across the top
    // overlapping the inner phases of its neighbours (hierarchical.cpp).
    const double top_block = block * last_size;  // the block entering the last inner tier
    const double eager = static_cast<double>(eager_payload(params_.eager_limit));
    HierarchicalPlan best_eager = best, best_any = best;
    bool any_eager = false;
    for (int k = 1; k <= kMaxPipelineChunks; k *= 2) {
      const double piece = top_block / k;
      if (k > 1 && piece < kMinPipelineChunk) break;
      const double inner = group_phases(last_size, piece, last_link, L);
      const double mine = std::ceil(piece / last_size / 8) * 8;  // per-rank message across
      const bool fits = mine <= eager;
      const double across = top.alpha * (fits ? 1 : 3) + mine * top.beta + mine * params_.gamma;
      const double tk = t - last_rs_ag + inner + across + (k - 1) * std::max(across, inner);
      // Whole 8-byte elements per chunk, rounded up so that there are at most k chunks.
      const HierarchicalPlan plan{tk, static_cast<std::size_t>(std::ceil(piece / 8) * 8)};
      if (tk < best_any.seconds) best_any = plan;
      if (fits && (!any_eager || tk < best_eager.seconds)) best_eager = plan;
      any_eager = any_eager || fits;
    }
    // The unpipelined plan stays a candidate; among pipelined ones, eager chunks only.
    best = any_eager ? (best_eager.seconds < best.seconds ? best_eager : best) : best_any;
  }
  return best;
}

double CostModel::hierarchical(const RankLayout& layout, double n) const { return hierarchical_plan(layout, n).seconds; }

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
  // A measured small size: taken as measured, before any model pricing (which costs
  // microseconds, hierarchical_plan's chunk search above all, on every call).
  if (const MeasuredChoice* m = measured(bytes)) {
    Choice c;
    c.algorithm = m->algorithm;
    c.predicted_seconds = m->seconds;
    if (m->algorithm == Algorithm::hierarchical) c.pipeline_bytes = hierarchical_plan(layout, n).pipeline_bytes;
    return c;  // ring: segment 0 lets the runner derive it; the others take none
  }
  Choice best = best_flat(layout.world_size, n, flat_link(layout));
  // Across nodes in topology order: the step-by-step prices of the halving/doubling algorithms.
  if (in_order_layout(layout)) {
    best = {Algorithm::ring, best.segment_bytes, ring(layout.world_size, n, flat_link(layout), best.segment_bytes)};
    if (const double t = recursive_doubling_in_order(layout, n); t < best.predicted_seconds)
      best = {Algorithm::recursive_doubling, best.segment_bytes, t};
    if (const double t = rabenseifner_in_order(layout, n); t < best.predicted_seconds)
      best = {Algorithm::rabenseifner, best.segment_bytes, t};
  }
  const bool multi_rank_node =
      std::any_of(layout.ranks_per_node.begin(), layout.ranks_per_node.end(), [](int r) { return r > 1; });
  if (layout.nodes() == 1) {
    if (const double t = shared_memory(layout.world_size, n); t < best.predicted_seconds)
      best = {Algorithm::shared_memory, best.segment_bytes, t};
  } else if (multi_rank_node || !layout.tier_sizes.empty()) {
    if (const HierarchicalPlan h = hierarchical_plan(layout, n); h.seconds < best.predicted_seconds)
      best = {Algorithm::hierarchical, best.segment_bytes, h.seconds, h.pipeline_bytes};
  }
  return best;
}

const MeasuredChoice* CostModel::measured(std::size_t bytes) const {
  const auto& small = params_.small;
  if (small.empty() || bytes > small.back().bytes) return nullptr;
  const double at = std::log2(static_cast<double>(std::max<std::size_t>(bytes, 1)));
  const MeasuredChoice* nearest = &small.front();
  for (const MeasuredChoice& m : small)  // ties go to the larger size (more data, same latency)
    if (std::fabs(std::log2(static_cast<double>(m.bytes)) - at) <=
        std::fabs(std::log2(static_cast<double>(nearest->bytes)) - at))
      nearest = &m;
  return nearest;
}

}  // namespace taihu::comm
