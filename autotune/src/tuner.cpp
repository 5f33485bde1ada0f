// The tuning loop (see tuner.hpp).
#include "taihu/autotune/tuner.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <set>

#include "taihu/arch/error.hpp"
#include "taihu/arch/isa.hpp"
#include "taihu/arch/log.hpp"
#include "taihu/arch/timer.hpp"
#include "taihu/autotune/backend.hpp"
#include "taihu/autotune/interpreter.hpp"
#include "taihu/autotune/parser.hpp"

namespace taihu::autotune {
namespace {

// Inputs, sampled reference values, and the comparison of a kernel's output.
class Checker {
 public:
  Checker(const Problem& p, std::uint64_t seed) : p_(p), inputs_(random_inputs(p, seed ^ 0x5eedull)) {
    points_ = sample_points(p, 256, seed);
    for (int a = 0; a < p.algorithm_count(); ++a) reference_.push_back(interpret_points(p, a, inputs_, points_));
    for (const auto& n : p.inputs()) ptrs_.push_back(inputs_.at(n).data());
    output_.assign(static_cast<std::size_t>(p.tensor(p.output()).size()), std::nanf(""));
  }
  void check(Kernel& k, int algorithm) {
    std::fill(output_.begin(), output_.end(), std::nanf(""));
    k.run(ptrs_, output_.data());
    std::vector<float> got, want;
    for (std::size_t i = 0; i < points_.size(); ++i) {
      got.push_back(output_[static_cast<std::size_t>(points_[i])]);
      want.push_back(static_cast<float>(reference_[static_cast<std::size_t>(algorithm)][i]));
    }
    Agreement a = compare_outputs(got, want, default_tolerance(p_, algorithm));
    if (!a.ok) throw Error("wrong result vs the reference interpreter at sampled output " + std::to_string(points_[static_cast<std::size_t>(a.worst)]) + ": " + a.message);
    // Every output element must be written (the buffer started as NaN).
    for (float v : output_)
      if (std::isnan(v)) throw Error("the kernel left output elements unwritten or NaN");
  }
  void run(Kernel& k) { k.run(ptrs_, output_.data()); }

 private:
  const Problem& p_;
  TensorMap inputs_;
  std::vector<std::int64_t> points_;
  std::vector<std::vector<double>> reference_;
  std::vector<const float*> ptrs_;
  std::vector<float> output_;
};

// Memory this process may still take: MemAvailable, capped by RLIMIT_AS. 0: unknown.
std::uint64_t available_memory_bytes() {
  std::uint64_t avail = 0;
  std::ifstream in("/proc/meminfo");
  std::string key;
  std::uint64_t kb = 0;
  std::string unit;
  while (in >> key >> kb >> unit)
    if (key == "MemAvailable:") avail = kb * 1024;
  if (avail == 0) {
    const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
    if (pages > 0 && page > 0) avail = static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page);
  }
  rlimit as{};
  if (::getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY)
    avail = avail == 0 ? as.rlim_cur : std::min<std::uint64_t>(avail, as.rlim_cur);
  return avail;
}

// Tuning holds every tensor of the problem (inputs, output, and temps that a schedule
// may place at root): refuse a shape whose buffers exceed memory before allocating.
void check_memory(const Problem& p) {
  double total = 0;
  std::string parts;
  for (const auto& t : p.spec().tensors) {
    const double bytes = static_cast<double>(p.tensor(t.name).size()) * sizeof(float);
    total += bytes;
    char buf[64];
    std::snprintf(buf, sizeof buf, "%s%s %.3g GiB", parts.empty() ? "" : ", ", t.name.c_str(), bytes / 1073741824.0);
    parts += buf;
  }
  const std::uint64_t avail = available_memory_bytes();
  if (avail > 0 && total > static_cast<double>(avail)) {
    char buf[128];
    std::snprintf(buf, sizeof buf, "%.3g GiB (", total / 1073741824.0);
    char tail[96];
    std::snprintf(tail, sizeof tail, ") but %.3g GiB of memory is available", static_cast<double>(avail) / 1073741824.0);
    throw Error("--shape " + p.shape_key() + ": the tensors need " + buf + parts + tail);
  }
}

// A measured time that no machine could produce is an error, not a record.
void check_plausible(double seconds, double flops, int threads) {
  if (!(seconds > 0) || !std::isfinite(seconds))
    throw Error("implausible measurement: " + std::to_string(seconds) + " s per run");
  const double gflops = flops / seconds * 1e-9;
  if (gflops > kMaxPlausibleGflopsPerThread * std::max(1, threads)) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "implausible measurement: %.3g s per run is %.3g GFLOP/s (more than %.3g per thread)", seconds, gflops,
                  kMaxPlausibleGflopsPerThread);
    throw Error(buf);
  }
}

std::unique_ptr<Kernel> build(const Problem& p, const Schedule& s, const TuneOptions& opt) {
  if (opt.backend == "halide") return make_halide_kernel(p, s, opt.threads);
  if (opt.backend == "cpp") return make_cpp_kernel(p, s, opt.threads, opt.workdir);
  throw Error("--backend: unknown '" + opt.backend + "' (use halide or cpp)");
}

// What the generators see of a Schedule, as text: equal keys, equal code.
std::string schedule_key(const Schedule& s) {
  std::string k = "a" + std::to_string(s.algorithm);
  auto ints = [&](const char* what, const auto& m) {
    k += std::string(" ") + what;
    for (const auto& [v, n] : m) k += " " + v + "=" + std::to_string(n);
  };
  ints("tile", s.tile);
  ints("block", s.block);
  ints("vec", s.vectorize);
  ints("unroll", s.unroll);
  k += " par " + s.parallel + " order";
  for (const auto& v : s.order) k += " " + v;
  for (const auto& [t, w] : s.layout) k += " layout " + t + "=" + w;
  for (const auto& [t, w] : s.compute_at) k += " at " + t + "=" + w;
  for (const auto& [t, n] : s.rfactor) k += " rfactor " + t + "=" + std::to_string(n);
  k += " tb " + std::to_string(s.timeblock);
  if (s.winograd.m > 0)
    k += " winograd m=" + std::to_string(s.winograd.m) + " k=" + std::to_string(s.winograd.k_tile) + " t=" +
         std::to_string(s.winograd.t_tile) + " c=" + std::to_string(s.winograd.c_block) + " r=" + std::to_string(s.winograd.rows) +
         " kb=" + std::to_string(s.winograd.k_block);
  if (s.ocvec.x_tile > 0)
    k += " ocvec x=" + std::to_string(s.ocvec.x_tile) + " k=" + std::to_string(s.ocvec.k_vectors) + " c=" + std::to_string(s.ocvec.c_block) +
         " o=" + std::to_string(s.ocvec.rows_outer) + " l=" + std::to_string(s.ocvec.pixel_lanes) + " s=" + std::to_string(s.ocvec.chunk);
  return k;
}

// Re-measures the `opt.confirm_top` fastest distinct schedules of this run (and the
// first three templates) in interleaved rounds until the budget ends (5..30 rounds),
// each block of calls short and preceded by ~10 ms of untimed calls; a schedule's score
// is the median of its round medians, and the search measurement is left out. Why: on
// this machine the core's speed itself changes 2-3x within milliseconds to seconds
// (a chain of dependent adds runs at 1.1-3.1 adds per ns on an idle machine), so one
// block's median of a kernel varies 0.9-1.7 ms, and the search's fastest median is the
// luckiest of hundreds of draws: the pick the search rated 0.90 ms had a median of
// 1.76 ms over 12 rounds, slower than 4 of the 5 it had beaten. The lowest of a few
// round medians, as before, kept that bias. The median over interleaved rounds is
// what a user's repeated calls see, and it is the statistic bench_autotune's final
// comparison uses, so the tuner's figure predicts it.
//
// The winner is appended to the log as a "confirmed" record (median of its round
// medians, their IQR / median, lowest and highest round): `taihu-tune best` reports
// that figure, which a fresh process re-timing the schedule reproduces, rather than the
// lowest search median. Its candidates include the last confirmed pick and the fastest
// logged points of a resumed run, so a later run's confirmation supersedes an earlier one.
//
// The confirmation fits the budget: the search keeps the kernels of its fastest
// confirm_top schedules and of the first three templates (`kept`, by schedule key), so
// confirming them builds nothing (a Halide JIT compile is 1-10 s: ResNet-50 res2 3x3 at
// 2 threads spent 85 s of a 20 s budget rebuilding 8); only a resumed run's logged points
// are built, while time is left. Slow calls get fewer warm-up and timed calls per block
// and at least 3 rounds instead of 5 (VGG16 conv3_2 at batch 32, 0.35 s a call: 46 s for
// a 15 s budget). TAIHU_VERBOSE reports the confirmation's seconds and builds.
void confirm_best(const Problem& p, const Space& space, const TuneOptions& opt, Checker& checker, TuneResult& res,
                  const arch::Stopwatch& clock, double deadline_s, const Record& base,
                  std::vector<std::pair<double, Point>> ranked, const Point& last_confirmed,
                  std::map<std::string, std::unique_ptr<Kernel>>& kept) {
  const double started_s = clock.seconds();
  int builds = 0;
  std::set<std::string> keys;
  for (std::size_t i = 0; i < res.records.size(); ++i)
    if (res.records[i].ok) ranked.emplace_back(res.records[i].median_s, res.measured[i]);
  std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::pair<Point, std::unique_ptr<Kernel>>> top;
  std::map<Point, double> search_s;  // (for TAIHU_VERBOSE)
  for (auto it = ranked.rbegin(); it != ranked.rend(); ++it) search_s[it->second] = it->first;
  auto add = [&](const Point& pt) {
    const Schedule s = space.schedule(pt);
    const std::string key = schedule_key(s);
    if (!keys.insert(key).second) return;
    if (auto hit = kept.find(key); hit != kept.end() && hit->second) {
      top.emplace_back(pt, std::move(hit->second));
      return;
    }
    try {
      ++builds;
      top.emplace_back(pt, build(p, s, opt));
    } catch (const Error&) {
      // measured fine before; leave it out
    }
  };
  if (!last_confirmed.empty()) add(last_confirmed);
  for (const auto& [t, pt] : ranked) {  // (at least two even past the deadline: a loaded host builds slowly)
    if (static_cast<int>(top.size()) >= opt.confirm_top || (top.size() >= 2 && clock.seconds() >= deadline_s)) break;
    add(pt);
  }
  // The first three structured templates that measured fine join them: their one
  // measurement may have met a burst of load, and they are the strongest priors.
  int templates = 0;
  for (const Point& tp : space.templates()) {
    if (templates == 3 || clock.seconds() >= deadline_s) break;
    if (std::none_of(ranked.begin(), ranked.end(), [&](const auto& r) { return r.second == tp; })) continue;
    ++templates;
    add(tp);
  }
  if (top.size() < 2) return;
  MeasureOptions mo = opt.measure;
  mo.target_seconds = 0.03;
  mo.min_repeats = 5;
  mo.pause_s = 0;
  mo.warmup = 2;
  mo.warmup_s = 0.01;
  // The slowest candidate's search time sizes the blocks (as bench_autotune's child does).
  double slowest = 0;
  for (const auto& t : top)
    if (auto it = search_s.find(t.first); it != search_s.end()) slowest = std::max(slowest, it->second);
  int min_rounds = 5;
  if (slowest > 0.02) {
    // Above 0.1 s a call no warm-up: such a call streams its working set through memory
    // whatever ran before it (VGG16 conv3_2 at batch 32: 3 rounds of 2 candidates took
    // 8.1 s with one, for a 5.9 s budget).
    mo.warmup = slowest > 0.1 ? 0 : 1;
    mo.warmup_s = 0;
    mo.min_repeats = slowest > 0.1 ? 1 : 3;
    min_rounds = 3;
  }
  // Above 0.1 s a call, only as many candidates (the fastest first, at least 2) as the
  // minimum rounds of the slowest fit in the time left (VGG16 conv1_2 at batch 32: 3
  // candidates x 3 rounds of 0.5-1 s calls took 8.8 s for the 3.7 s left).
  if (slowest > 0.1) {
    const double left = deadline_s - clock.seconds();
    const std::size_t fit = std::max<std::size_t>(2, static_cast<std::size_t>(std::max(0.0, left) / (min_rounds * slowest)));
    if (top.size() > fit) top.resize(fit);
  }
  std::vector<std::function<void()>> runs;
  for (auto& t : top) runs.push_back([&checker, k = t.second.get()] { checker.run(*k); });
  const double built_s = clock.seconds();
  const auto rounds = interleaved_rounds(runs, mo, min_rounds, 30, [&] { return clock.seconds() < deadline_s; });
  arch::log_verbose("taihu-tune: confirmation %.2f s (%d of %zu candidates built, %.2f s; rounds %.2f s), ending %.2f s into a %.2f s budget\n",
                    clock.seconds() - started_s, builds, top.size(), built_s - started_s, clock.seconds() - built_s, clock.seconds(), deadline_s);
  std::vector<RoundSummary> sum;
  std::vector<double> score;
  for (std::size_t i = 0; i < rounds.size(); ++i) {
    sum.push_back(summarize_rounds(rounds[i]));
    score.push_back(sum.back().median_s);
    const auto found = search_s.find(top[i].first);
    arch::log_verbose("taihu-tune: confirm %zu: search %.4f ms, confirmed %.4f ms (%d rounds, %d contended left out, %.4f-%.4f, IQR %.1f%%): %s\n",
                      i, found == search_s.end() ? 0.0 : found->second * 1e3, score.back() * 1e3, sum.back().rounds, sum.back().contended,
                      sum.back().min_s * 1e3, sum.back().max_s * 1e3, 100 * sum.back().spread, space.describe(top[i].first).c_str());
  }
  const std::size_t w = static_cast<std::size_t>(std::min_element(score.begin(), score.end()) - score.begin());
  if (!(score[w] > 0) || !std::isfinite(score[w])) return;  // keep the search's best
  res.best = top[w].first;
  res.best_s = score[w];
  Record r = base;
  r.schedule = space.to_map(res.best);
  r.stat = "confirmed";
  r.median_s = score[w];
  r.spread = sum[w].spread;
  r.min_s = sum[w].min_s;
  r.max_s = sum[w].max_s;
  r.repeats = sum[w].rounds;
  const Schedule s = space.schedule(res.best);
  r.gflops = (p.algorithm_count() > 1 ? p.flops(s.algorithm) : p.flops(0)) / r.median_s * 1e-9;
  r.trial = res.resumed + res.trials;
  r.time = utc_timestamp();
  if (!opt.log_path.empty()) append_record(opt.log_path, r);
  res.records.push_back(r);
  res.measured.push_back(res.best);
}

}  // namespace

std::vector<Point> batch_seeds(const Space& space, const std::vector<Record>& log, const Record& from, bool more_images) {
  std::vector<Point> out;
  std::set<std::string> keys;
  auto add = [&](const Point& pt) {
    if (space.valid(pt) && keys.insert(schedule_key(space.schedule(pt))).second) out.push_back(pt);
  };
  auto knob = [&](const char* target) {
    for (std::size_t i = 0; i < space.knobs().size(); ++i)
      if (space.knobs()[i].kind == "winograd" && space.knobs()[i].target == target) return static_cast<int>(i);
    return -1;
  };
  const Point best = space.nearest_point(from.schedule);
  add(best);
  if (out.empty()) return out;
  const Schedule bs = space.schedule(best);
  if (bs.winograd.m > 0) {
    double fastest = from.median_s;
    for (const Record& r : log)
      if (r.ok && r.stat == "search" && r.median_s > 0 && r.key() == from.key()) fastest = std::min(fastest, r.median_s);
    Point tie;
    double tie_s = 0;
    for (const Record& r : log) {
      if (!r.ok || r.stat != "search" || r.median_s <= 0 || r.median_s > 1.05 * fastest || r.key() != from.key()) continue;
      if (!tie.empty() && r.median_s >= tie_s) continue;
      try {
        Point pt = space.nearest_point(r.schedule);
        if (!space.valid(pt)) continue;
        const WinogradSchedule w = space.schedule(pt).winograd;
        if (w.m > 0 && w.k_tile != bs.winograd.k_tile) tie = std::move(pt), tie_s = r.median_s;
      } catch (const Error&) {
        continue;
      }
    }
    if (!tie.empty()) add(tie);
  }
  // A larger batch: the r 0 stage buffers grow with the images; one tile row per task
  // keeps a task's V and M in L2 (what dnn's Winograd does with its blocks of tiles).
  // They come right after the donor's best, ahead of the r 0 near-tie: at batch 32 on
  // Zen 4 a row-task variant was the fastest seed on all four layers that had one
  // (ResNet-50 res2 3x3, VGG16 conv3_2, LeNet conv2, CIFAR-10 quick conv2).
  const int r_knob = knob("r");
  if (more_images && r_knob >= 0) {
    const Knob& k = space.knobs()[static_cast<std::size_t>(r_knob)];
    const auto one = std::find(k.ints.begin(), k.ints.end(), 1);
    std::vector<Point> rows;
    for (const Point& pt : out) {
      const WinogradSchedule w = space.schedule(pt).winograd;
      if (w.m == 0 || w.rows != 0 || one == k.ints.end()) continue;
      Point q = pt;
      q[static_cast<std::size_t>(r_knob)] = static_cast<int>(one - k.ints.begin());
      if (space.valid(q) && keys.insert(schedule_key(space.schedule(q))).second) rows.push_back(q);
    }
    out.insert(out.begin() + 1, rows.begin(), rows.end());
  }
  return out;
}

Record record_for(const Problem& p, const TuneOptions& opt) {
  Record r;
  r.op = p.spec().name;
  r.spec_hash = spec_hash(p.spec().source_text);
  r.shape = p.shape_key();
  r.isa = arch::isa_name(arch::active_isa());
  r.threads = opt.threads;
  r.backend = opt.backend;
  r.seed = opt.seed;
  r.taihu_version = TAIHU_AUTOTUNE_VERSION;
  r.halide_version = halide_version();
  r.compiler = TAIHU_AUTOTUNE_CXX_ID;
  return r;
}

std::unique_ptr<Kernel> build_checked(const Problem& p, const Schedule& s, const TuneOptions& opt) {
  check_memory(p);
  Checker c(p, opt.seed);
  auto k = build(p, s, opt);
  c.check(*k, s.algorithm);
  return k;
}

std::vector<Record> measure_points(const Problem& p, const Space& space, const TuneOptions& opt, const std::vector<Point>& points,
                                   const std::function<bool(double, double)>& go_on) {
  std::vector<Record> out;
  if (points.empty()) return out;
  arch::Stopwatch clock;
  check_memory(p);
  Checker checker(p, opt.seed);
  arch::log_verbose("taihu-tune: inputs and reference values %.2f s\n", clock.seconds());
  const Record base = record_for(p, opt);
  double last_s = 0;
  for (const Point& pt : points) {
    if (!out.empty() && go_on && !go_on(clock.seconds(), last_s)) break;
    const double started = clock.seconds();
    Record r = base;
    r.trial = 0;
    r.time = utc_timestamp();
    try {
      r.schedule = space.to_map(pt);
      const Schedule s = space.schedule(pt);
      arch::Stopwatch phase;
      auto k = build(p, s, opt);
      const double build_s = phase.seconds();
      checker.check(*k, s.algorithm);  // also the warm-up run
      const double check_s = phase.seconds() - build_s;
      arch::Stopwatch first;
      checker.run(*k);
      const double once = first.seconds();
      const Measurement m = once >= kSlowCallSeconds ? measure_slow_call([&] { checker.run(*k); }, once, opt.measure)
                                                     : measure([&] { checker.run(*k); }, opt.measure);
      arch::log_verbose("taihu-tune: measured a given point: build %.2f s, check %.2f s, timing %.2f s (%d calls, median %.4f ms)\n", build_s,
                        check_s, phase.seconds() - build_s - check_s, m.repeats, m.median_s * 1e3);
      const double alg_flops = p.algorithm_count() > 1 ? p.flops(s.algorithm) : p.flops(0);
      check_plausible(m.median_s, alg_flops, opt.threads);
      r.median_s = m.median_s;
      r.spread = m.spread;
      r.min_s = m.min_s;
      r.max_s = m.max_s;
      r.repeats = m.repeats;
      r.gflops = alg_flops / m.median_s * 1e-9;
    } catch (const std::exception& e) {
      r.ok = false;
      r.error = e.what();
    }
    if (!opt.log_path.empty()) append_record(opt.log_path, r);
    out.push_back(r);
    last_s = clock.seconds() - started;
  }
  return out;
}

TuneResult tune(const Problem& p, const Space& space, const TuneOptions& opt, const Evaluator& custom) {
  TuneResult res;
  Searcher searcher(space, opt.strategy, opt.seed, opt.cost_model);
  const Record base = record_for(p, opt);
  Progress prog;
  arch::Stopwatch clock;
  // Resume: logged points of the same key teach the searcher and are not measured again.
  std::vector<std::pair<double, Point>> logged;  // (search median, point): confirmation candidates
  Point last_confirmed;
  if (!opt.log_path.empty()) {
    const std::vector<Record> log = load_log(opt.log_path);
    // Transfer: a shape not tuned yet starts from the best schedules of the 3 nearest
    // tuned shapes of the same operator (same spec, ISA, threads, backend), nearest by
    // the summed |log2| ratios of their dims, carried over by Space::nearest_point, and
    // from a cost model trained on all their records (below).
    std::vector<std::pair<double, Record>> others;
    for (const auto& r : best_records(log)) {
      if (r.op != base.op || r.spec_hash != base.spec_hash || r.isa != base.isa || r.threads != base.threads || r.backend != base.backend ||
          r.shape == base.shape)
        continue;
      double dist = 0;
      try {
        for (const auto& [dim, value] : parse_shape(r.shape))
          if (p.dims().count(dim) && value > 0 && p.dim(dim) > 0)
            dist += std::abs(std::log2(static_cast<double>(value) / static_cast<double>(p.dim(dim))));
      } catch (const Error&) {
        continue;
      }
      others.emplace_back(dist, r);
    }
    if (std::none_of(log.begin(), log.end(), [&](const Record& r) { return r.key() == base.key(); }) && !others.empty()) {
      std::stable_sort(others.begin(), others.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
      std::vector<Point> seeds;
      for (std::size_t i = 0; i < others.size() && i < 3; ++i) {
        seeds.push_back(space.nearest_point(others[i].second.schedule));
        arch::log_verbose("taihu-tune: starting from the best schedule of %s (distance %.2f)\n", others[i].second.shape.c_str(), others[i].first);
      }
      searcher.seed_first(seeds);
    }
    // Transfer: the cost model learns from every record of the other shapes too.
    if (opt.cost_model && opt.transfer_model && !others.empty()) {
      const TransferFeatures features(p, space, opt.threads);
      std::vector<Point> carried;
      std::vector<TransferSample> prior = transfer_samples(p, space, features, base, log, &carried);
      arch::log_verbose("taihu-tune: the cost model starts from %zu records of %zu other shapes (%zu of their schedules carried over)\n",
                        prior.size(), others.size(), carried.size());
      if (!prior.empty()) searcher.use_transfer(p, opt.threads, std::move(prior), std::move(carried));
    }
    for (const auto& r : log) {
      if (r.key() != base.key()) continue;
      Point pt;
      try {
        pt = space.from_map(r.schedule);
      } catch (const Error&) {
        continue;
      }
      if (r.ok && r.stat == "confirmed") {  // a re-measurement, not a trial
        last_confirmed = pt;
        continue;
      }
      if (r.ok) logged.emplace_back(r.median_s, pt);
      searcher.observe(pt, r.ok ? r.median_s : std::numeric_limits<double>::infinity());
      ++res.resumed;
      if (r.ok && r.median_s < res.best_s) {
        res.best_s = r.median_s;
        res.best = pt;
      }
    }
  }
  prog.resumed = res.resumed;
  std::unique_ptr<Checker> checker;
  if (!custom) {
    check_memory(p);
    checker = std::make_unique<Checker>(p, opt.seed);
  }
  const double flops = p.flops(0);
  std::map<std::string, Record> same_schedule;  // schedule_key -> its measurement
  // The last part of a timed budget re-measures the fastest few (a lucky single
  // measurement on a busy machine should not decide the winner).
  const bool confirm = !custom && opt.budget_s > 0 && opt.confirm_top > 1;
  const double search_s = confirm ? opt.budget_s - std::min(0.15 * opt.budget_s, 20.0) : opt.budget_s;
  // The kernels the confirmation will re-measure, kept from the search (see confirm_best):
  // the fastest confirm_top so far and the first three templates.
  std::map<std::string, std::unique_ptr<Kernel>> kept;
  std::map<std::string, double> kept_s;  // the fastest ones' search times
  std::set<std::string> template_keys;
  if (confirm)
    for (const Point& tp : space.templates()) {
      if (template_keys.size() == 3) break;
      template_keys.insert(schedule_key(space.schedule(tp)));
    }
  auto keep = [&](const std::string& key, double seconds, std::unique_ptr<Kernel>& k) {
    if (!confirm || !std::isfinite(seconds)) return;
    if (template_keys.count(key)) {
      kept[key] = std::move(k);
      return;
    }
    if (static_cast<int>(kept_s.size()) >= opt.confirm_top) {
      auto worst = std::max_element(kept_s.begin(), kept_s.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
      if (seconds >= worst->second) return;
      kept.erase(worst->first);
      kept_s.erase(worst);
    }
    kept_s[key] = seconds;
    kept[key] = std::move(k);
  };
  auto out_of_time = [&] {
    return (opt.budget_s > 0 && clock.seconds() >= search_s) || (opt.max_trials > 0 && res.trials >= opt.max_trials);
  };
  while (!out_of_time()) {
    int want = opt.batch;
    if (opt.max_trials > 0) want = std::min(want, opt.max_trials - res.trials);
    std::vector<Point> batch = searcher.propose(want);
    if (batch.empty()) break;  // space exhausted
    for (const Point& pt : batch) {
      if (out_of_time()) break;
      Record r = base;
      r.schedule = space.to_map(pt);
      r.trial = res.resumed + res.trials;
      r.time = utc_timestamp();
      const double pred = searcher.predict(pt);
      if (std::isfinite(pred)) r.predicted_s = pred;
      double seconds = std::numeric_limits<double>::infinity();
      try {
        const double alg_flops = p.algorithm_count() > 1 ? p.flops(space.schedule(pt).algorithm) : flops;
        if (custom) {
          seconds = custom(pt);
          check_plausible(seconds, alg_flops, opt.threads);
          r.median_s = seconds;
          r.repeats = 1;
        } else {
          const Schedule s = space.schedule(pt);
          const std::string key = schedule_key(s);
          if (auto hit = same_schedule.find(key); hit != same_schedule.end()) {
            if (!hit->second.ok) throw Error(hit->second.error);
            seconds = hit->second.median_s;
            r.median_s = seconds;
            r.spread = hit->second.spread;
            r.min_s = hit->second.min_s;
            r.max_s = hit->second.max_s;
            r.repeats = hit->second.repeats;
          } else {
            Record& memo = same_schedule[key];
            memo.ok = false;
            try {
              auto k = build(p, s, opt);
              checker->check(*k, s.algorithm);  // also the warm-up run
              arch::Stopwatch first;
              checker->run(*k);
              const double once = first.seconds();
              if (opt.reject_factor > 0 && std::isfinite(res.best_s) && once > opt.reject_factor * res.best_s) {
                seconds = once;
                r.repeats = 1;
              } else {
                // A slow call: the check was its warm-up and `once` counts (measure_slow_call).
                Measurement m = once >= kSlowCallSeconds ? measure_slow_call([&] { checker->run(*k); }, once, opt.measure)
                                                         : measure([&] { checker->run(*k); }, opt.measure);
                seconds = m.median_s;
                r.spread = m.spread;
                r.min_s = m.min_s;
                r.max_s = m.max_s;
                r.repeats = m.repeats;
              }
              check_plausible(seconds, alg_flops, opt.threads);
              keep(key, seconds, k);
            } catch (const Error& e) {
              memo.error = e.what();
              throw;
            }
            r.median_s = seconds;
            memo.ok = true;
            memo.median_s = seconds;
            memo.spread = r.spread;
            memo.min_s = r.min_s;
            memo.max_s = r.max_s;
            memo.repeats = r.repeats;
          }
        }
        r.gflops = alg_flops / seconds * 1e-9;
      } catch (const Error& e) {
        r.ok = false;
        r.error = e.what();
        seconds = std::numeric_limits<double>::infinity();
        ++res.failures;
      }
      searcher.observe(pt, seconds);
      ++res.trials;
      res.measured.push_back(pt);
      if (seconds < res.best_s) {
        res.best_s = seconds;
        res.best = pt;
      }
      if (!opt.log_path.empty()) append_record(opt.log_path, r);
      res.records.push_back(r);
      if (opt.on_progress) {
        prog.trial = res.trials;
        prog.elapsed_s = clock.seconds();
        prog.best_s = std::isfinite(res.best_s) ? res.best_s : 0;
        prog.last = &res.records.back();
        prog.best_schedule = res.best.empty() ? "" : space.describe(res.best);
        opt.on_progress(prog);
      }
    }
  }
  if (confirm) confirm_best(p, space, opt, *checker, res, clock, opt.budget_s, base, std::move(logged), last_confirmed, kept);
  return res;
}

}  // namespace taihu::autotune
