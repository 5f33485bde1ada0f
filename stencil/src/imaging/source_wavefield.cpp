// Checkpointed source wavefield (see source_wavefield.hpp).
#include "imaging/source_wavefield.hpp"

#include <cmath>
#include <algorithm>
#include <cstdio>
#include <limits>

#include "physics/divergence.hpp"
#include "taihu/arch/error.hpp"

namespace taihu::stencil {

std::string CheckpointPlan::describe() const {
  constexpr double MiB = 1024.0 * 1024.0;
  char buf[400];
  if (store_all)
    std::snprintf(buf, sizeof buf, "all %d snapshots kept (%.1f MiB); %.2f x nt forward steps", nt, memory_bytes / MiB,
                  recompute_factor());
  else if (binomial)
    std::snprintf(buf, sizeof buf,
                  "binomial checkpointing (revolve): %d x %.2f MiB checkpoints + 1 snapshot %.2f MiB = %.1f MiB; "
                  "%.2f x nt forward steps (storing all %d snapshots: %.1f MiB)",
                  checkpoints, state_bytes / MiB, snapshot_bytes / MiB, memory_bytes / MiB, recompute_factor(), nt,
                  store_all_bytes / MiB);
  else
    std::snprintf(buf, sizeof buf,
                  "checkpoints every %d steps: %d x %.2f MiB + %d-snapshot buffer %.1f MiB = %.1f MiB; %.2f x nt forward "
                  "steps (storing all %d snapshots: %.1f MiB)",
                  segment, checkpoints, state_bytes / MiB, segment, segment * snapshot_bytes / MiB, memory_bytes / MiB,
                  recompute_factor(), nt, store_all_bytes / MiB);
  return buf;
}

CheckpointPlan plan_checkpoints(int nt, double snapshot_bytes, double state_bytes, double budget_bytes) {
  if (nt < 1) throw Error("taihu: plan_checkpoints: nt = " + std::to_string(nt));
  if (!(budget_bytes > 0)) throw Error("taihu: the checkpoint memory budget must be > 0");
  CheckpointPlan p;
  p.nt = nt;
  p.snapshot_bytes = snapshot_bytes;
  p.state_bytes = state_bytes;
  p.store_all_bytes = double(nt) * snapshot_bytes;
  if (p.store_all_bytes <= budget_bytes) {
    p.store_all = true;
    p.segment = nt;
    p.memory_bytes = p.store_all_bytes;
    p.forward_steps = nt;
    return p;
  }
  // Binomial: as many slots as fit beside the one snapshot (more than nt never help).
  const double slots_fit = std::floor((budget_bytes - snapshot_bytes) / state_bytes);
  if (!(slots_fit >= 1)) {
    char buf[400];
    std::snprintf(buf, sizeof buf,
                  "taihu: the checkpoint memory budget of %.2f MiB is too small: the least is one checkpoint "
                  "(%.2f MiB) + one snapshot (%.2f MiB) = %.2f MiB, for %.0f forward steps of %d (storing every "
                  "snapshot: %.1f MiB)",
                  budget_bytes / 1048576.0, state_bytes / 1048576.0, snapshot_bytes / 1048576.0,
                  (state_bytes + snapshot_bytes) / 1048576.0, double(revolve_forward_steps(nt, 1)), nt,
                  p.store_all_bytes / 1048576.0);
    throw Error(buf);
  }
  const int slots = int(std::min(slots_fit, double(nt)));
  p.binomial = true;
  p.segment = 1;
  p.checkpoints = slots;
  p.memory_bytes = slots * state_bytes + snapshot_bytes;
  p.forward_steps = revolve_forward_steps(nt, slots);
  // Single level: the largest segment K that fits (fewer replayed steps; the last
  // segment is kept from the first pass). memory(K) = ceil(nt/K) states + K snapshots.
  auto memory = [&](int k) { return double((nt + k - 1) / k) * state_bytes + double(k) * snapshot_bytes; };
  for (int k = nt; k >= 1; --k)
    if (memory(k) <= budget_bytes) {
      CheckpointPlan q = p;
      q.binomial = false;
      q.segment = k;
      q.checkpoints = (nt + k - 1) / k;
      q.memory_bytes = memory(k);
      const int last = nt - (q.checkpoints - 1) * k;
      q.forward_steps = long(nt) + (nt - last) - (q.checkpoints - 1);  // a replay stops at its segment's end
      if (q.forward_steps <= p.forward_steps) return q;
      break;
    }
  return p;
}

namespace {
// beta(s, r) = C(s + r, s), stopping once it reaches `cap` (enough to compare with it).
long binomial_capped(long s, long r, long cap) {
  if (r < 0) return 0;
  long b = 1;
  for (long i = 1; i <= r && b < cap; ++i) b = b * (s + i) / i;  // C(s+i, i) from C(s+i-1, i-1), exact
  return b;
}
}  // namespace

long revolve_forward_steps(long steps, long slots) {
  if (slots < 1) throw Error("taihu: revolve_forward_steps: " + std::to_string(slots) + " slots");
  if (steps <= 1) return 0;
  long r = 0;
  while (binomial_capped(slots, r, steps) < steps) ++r;
  return r * steps - binomial_capped(slots + 1, r - 1, std::numeric_limits<long>::max() / 4);
}

long revolve_split(long steps, long slots) {
  if (steps < 2 || slots < 2) throw Error("taihu: revolve_split: steps " + std::to_string(steps) + ", slots " +
                                          std::to_string(slots));
  // t(l, s) = min over m of m + t(l - m, s - 1) + t(m, s): advance m, checkpoint, reverse
  // the rest with one slot fewer, then the first m with the slot free again.
  long best_m = 1, best = std::numeric_limits<long>::max();
  for (long m = steps - 1; m >= 1; --m) {
    const long cost = m + revolve_forward_steps(steps - m, slots - 1) + revolve_forward_steps(m, slots);
    if (cost < best) best = cost, best_m = m;
  }
  return best_m;
}

SourceWavefield::SourceWavefield(const Model& model, const Shot& shot, const Options& options, double budget_bytes,
                                 const std::vector<Position>* receivers)
    : model_(model), shot_(shot), opt_(resolved(model, options)), prop_(model, opt_),
      src_(point_stencil(model.grid, shot.source)), points_(std::size_t(model.grid.points())),
      guard_(model, opt_, shot.wavelet) {
  if (shot.wavelet.size() < std::size_t(opt_.nt))
    throw Error("taihu: the wavelet has " + std::to_string(shot.wavelet.size()) + " samples, the run needs " +
                std::to_string(opt_.nt));
  const std::size_t state = prop_.state_floats();
  plan_ = plan_checkpoints(opt_.nt, double(points_) * sizeof(float), double(state) * sizeof(float), budget_bytes);
  if (receivers && !receivers->empty()) {
    for (const auto& r : *receivers) receivers_.push_back(point_stencil(model.grid, r));
    recorded_.nt = opt_.nt;
    recorded_.dt = opt_.dt;
    recorded_.source = shot.source;
    recorded_.receivers = *receivers;
    recorded_.data.assign(receivers_.size() * std::size_t(opt_.nt), 0.f);
  }
  if (plan_.binomial) {  // states are computed on demand in at()
    checkpoints_.resize(std::size_t(plan_.checkpoints) * state);
    buffer_.resize(points_);
    prop_.save_state(checkpoints_.data());
    stack_.push_back(0);
    return;
  }
  const int nt = opt_.nt, K = plan_.segment;
  if (!plan_.store_all) checkpoints_.resize(std::size_t(plan_.checkpoints) * state);
  buffer_.resize(std::size_t(K) * points_);
  const int last = plan_.store_all ? 0 : plan_.checkpoints - 1;
  const int last_begin = last * K;
  for (int n = 0; n < nt; ++n) {
    if (!plan_.store_all && n % K == 0) prop_.save_state(checkpoints_.data() + std::size_t(n / K) * state);
    if (n >= last_begin) copy_interior(prop_.current(), buffer_.data() + std::size_t(n - last_begin) * points_);
    position_ = n;
    sample_new_position();
    prop_.step(&src_, shot.wavelet[std::size_t(n)]);
    ++steps_;
    if (guard_.due(n + 1)) guard_.check(prop_.max_abs(), n + 1);
  }
  buffered_segment_ = last;
  position_ = 0;  // (binomial only)
}

void SourceWavefield::sample_new_position() {
  if (receivers_.empty() || position_ != sampled_ || sampled_ >= opt_.nt) return;
  for (std::size_t r = 0; r < receivers_.size(); ++r)
    recorded_.data[r * std::size_t(opt_.nt) + std::size_t(position_)] = prop_.sample(receivers_[r]);
  if (++sampled_ == opt_.nt) guard_.check_record(recorded_);
}

void SourceWavefield::copy_interior(const Field& f, float* out) const {
  const Layout& L = f.layout();
  const Grid& g = model_.grid;
  for (long i2 = 0; i2 < g.n[2]; ++i2)
    for (long i1 = 0; i1 < g.n[1]; ++i1) {
      const float* line = f.data() + L.index(0, i1, i2);
      std::copy(line, line + g.n[0], out + (i2 * g.n[1] + i1) * g.n[0]);
    }
}

void SourceWavefield::replay(int segment) {
  const std::size_t state = prop_.state_floats();
  const int K = plan_.segment, begin = segment * K, end = std::min(opt_.nt, begin + K);
  prop_.load_state(checkpoints_.data() + std::size_t(segment) * state);
  for (int n = begin; n < end; ++n) {
    copy_interior(prop_.current(), buffer_.data() + std::size_t(n - begin) * points_);
    if (n + 1 < end) {  // the step into the next segment is never needed
      prop_.step(&src_, shot_.wavelet[std::size_t(n)]);
      ++steps_;
    }
  }
  buffered_segment_ = segment;
}

void SourceWavefield::advance_to(int n) {
  for (; position_ < n; ++position_) {
    sample_new_position();
    prop_.step(&src_, shot_.wavelet[std::size_t(position_)]);
    ++steps_;
    if (position_ + 1 > furthest_ && guard_.due(position_ + 1)) guard_.check(prop_.max_abs(), position_ + 1);
    furthest_ = std::max(furthest_, position_ + 1);
  }
  sample_new_position();
}

// Online revolve for decreasing n: the checkpoints after n are no longer needed; from
// the latest one, c, the states c..n are reversed with the slots left, the first
// checkpoint at revolve's optimal split (the recursion of revolve_split, unrolled).
const float* SourceWavefield::binomial_at(int n) {
  if (position_ == n && copied_ == n) return buffer_.data();  // (migrate_scattered's first pass asked already)
  const std::size_t state = prop_.state_floats();
  while (stack_.back() > n) stack_.pop_back();
  if (position_ != stack_.back() || position_ > n) {
    prop_.load_state(checkpoints_.data() + (stack_.size() - 1) * state);
    position_ = stack_.back();
  }
  for (;;) {
    const long free_slots = plan_.checkpoints - long(stack_.size()) + 1;  // the latest one's included
    const long steps = n - stack_.back() + 1;
    if (steps < 2 || free_slots < 2) break;
    advance_to(stack_.back() + int(revolve_split(steps, free_slots)));
    prop_.save_state(checkpoints_.data() + stack_.size() * state);
    stack_.push_back(position_);
  }
  advance_to(n);
  copy_interior(prop_.current(), buffer_.data());
  copied_ = n;
  return buffer_.data();
}

const float* SourceWavefield::at(int n) {
  if (n < 0 || n >= opt_.nt) throw Error("taihu: SourceWavefield::at(" + std::to_string(n) + ") outside the run");
  if (plan_.store_all) return buffer_.data() + std::size_t(n) * points_;
  if (plan_.binomial) return binomial_at(n);
  const int segment = n / plan_.segment;
  if (segment != buffered_segment_) replay(segment);
  return buffer_.data() + std::size_t(n - segment * plan_.segment) * points_;
}

}  // namespace taihu::stencil
