// Checkpointed source wavefield (see source_wavefield.hpp).
#include "imaging/source_wavefield.hpp"

#include <cmath>
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
  // The largest segment K that fits: fewer replayed steps (the last segment is kept
  // from the first pass). memory(K) = ceil(nt/K) states + K snapshots.
  auto memory = [&](int k) { return double((nt + k - 1) / k) * state_bytes + double(k) * snapshot_bytes; };
  int best_k = 0, min_k = 1;
  for (int k = nt; k >= 1; --k) {
    if (memory(k) < memory(min_k)) min_k = k;
    if (!best_k && memory(k) <= budget_bytes) best_k = k;
  }
  if (!best_k) {
    char buf[400];
    std::snprintf(buf, sizeof buf,
                  "taihu: the checkpoint memory budget of %.2f MiB is too small: %d steps of a %.2f MiB wavefield "
                  "need at least %.2f MiB (checkpoints every %d steps) and %.1f MiB to store every snapshot",
                  budget_bytes / 1048576.0, nt, snapshot_bytes / 1048576.0, memory(min_k) / 1048576.0, min_k,
                  p.store_all_bytes / 1048576.0);
    throw Error(buf);
  }
  p.segment = best_k;
  p.checkpoints = (nt + best_k - 1) / best_k;
  p.memory_bytes = memory(best_k);
  const int last = nt - (p.checkpoints - 1) * best_k;
  p.forward_steps = long(nt) + (nt - last) - (p.checkpoints - 1);  // a replay stops at its segment's end
  return p;
}

SourceWavefield::SourceWavefield(const Model& model, const Shot& shot, const Options& options, double budget_bytes)
    : model_(model), shot_(shot), opt_(resolved(model, options)), prop_(model, opt_),
      src_(point_stencil(model.grid, shot.source)), points_(std::size_t(model.grid.points())) {
  if (shot.wavelet.size() < std::size_t(opt_.nt))
    throw Error("taihu: the wavelet has " + std::to_string(shot.wavelet.size()) + " samples, the run needs " +
                std::to_string(opt_.nt));
  const std::size_t state = prop_.state_floats();
  plan_ = plan_checkpoints(opt_.nt, double(points_) * sizeof(float), double(state) * sizeof(float), budget_bytes);
  const int nt = opt_.nt, K = plan_.segment;
  if (!plan_.store_all) checkpoints_.resize(std::size_t(plan_.checkpoints) * state);
  buffer_.resize(std::size_t(K) * points_);
  const int last = plan_.store_all ? 0 : plan_.checkpoints - 1;
  const int last_begin = last * K;
  DivergenceGuard guard(model, opt_, shot.wavelet);
  for (int n = 0; n < nt; ++n) {
    if (!plan_.store_all && n % K == 0) prop_.save_state(checkpoints_.data() + std::size_t(n / K) * state);
    if (n >= last_begin) copy_interior(prop_.current(), buffer_.data() + std::size_t(n - last_begin) * points_);
    prop_.step(&src_, shot.wavelet[std::size_t(n)]);
    ++steps_;
    if (guard.due(n + 1)) guard.check(prop_.max_abs(), n + 1);
  }
  buffered_segment_ = last;
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

const float* SourceWavefield::at(int n) {
  if (n < 0 || n >= opt_.nt) throw Error("taihu: SourceWavefield::at(" + std::to_string(n) + ") outside the run");
  if (plan_.store_all) return buffer_.data() + std::size_t(n) * points_;
  const int segment = n / plan_.segment;
  if (segment != buffered_segment_) replay(segment);
  return buffer_.data() + std::size_t(n - segment * plan_.segment) * points_;
}

}  // namespace taihu::stencil
