// bench_autotune --suite dnn (see dnn_suite.hpp): tune each forward layer of bench_conv's
// set with taihu-tune, time the tuned kernel and every dnn entry for it in a fresh
// process, print the table and the fraction of layers where the tuned code is at least
// as fast as dnn's best entry, and write the CSV and dnn's tuning records.
#include "dnn_suite.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <sstream>
#include <thread>

#include "conv_layers.hpp"
#include "taihu/arch/error.hpp"
#include "taihu/arch/isa.hpp"
#include "taihu/arch/threads.hpp"
#include "taihu/arch/timer.hpp"
#include "taihu/autotune/backend.hpp"
#include "taihu/autotune/interpreter.hpp"
#include "taihu/autotune/measure.hpp"
#include "taihu/autotune/parser.hpp"
#include "taihu/autotune/records.hpp"
#include "taihu/autotune/tuner.hpp"
#include "taihu/dnn/conv.hpp"
#include "taihu/dnn/tuning_records.hpp"

namespace ta = taihu::autotune;
namespace td = taihu::dnn;

namespace taihu::bench::dnn_suite {
namespace {

struct Layer {
  std::string name;  // bench_conv's name without its batch suffix, then "_b<N>"
  td::ConvDesc desc;
  std::string why_not;  // why conv2d.tdsl cannot express it ("" when it can)
};

struct Options {
  double budget_s = 20;
  std::vector<int> batches{1, 32};
  std::vector<std::string> layers;  // names to keep (empty: all)
  int threads = 1;
  int rounds = 6;
  bool tvm = true;
  std::uint64_t seed = 1;
  std::string log = "bench_autotune_dnn.jsonl", csv = "bench_autotune_dnn.csv",
              records = "bench_autotune_dnn_records.jsonl";
};

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

// "20", "20s", "2m" -> seconds; anything else (or <= 0) is an error naming the option.
double parse_duration(const std::string& option, const std::string& v) {
  char* end = nullptr;
  double x = std::strtod(v.c_str(), &end);
  const std::string unit = end ? end : "";
  if (unit == "m") x *= 60;
  else if (unit != "s" && !unit.empty()) x = NAN;
  if (end == v.c_str() || !(x > 0) || !std::isfinite(x))
    throw Error(option + ": '" + v + "' is not a positive duration (20, 20s, 2m)");
  return x;
}

// "resnet50_res3_3x3_b32" -> "resnet50_res3_3x3" (bench_conv names a layer's other
// batches by a "_b<N>" suffix).
std::string base_name(const std::string& name) {
  const auto pos = name.rfind("_b");
  if (pos == std::string::npos || pos + 2 >= name.size()) return name;
  for (std::size_t i = pos + 2; i < name.size(); ++i)
    if (name[i] < '0' || name[i] > '9') return name;
  return name.substr(0, pos);
}

std::string why_not_expressible(const td::ConvDesc& d) {
  if (d.groups != 1) return "groups " + std::to_string(d.groups);
  if (d.stride_h != 1 || d.stride_w != 1) return "stride " + std::to_string(d.stride_h);
  if (d.dil_h != 1 || d.dil_w != 1) return "dilation";
  if (d.pad_h != d.pad_w) return "unequal padding";
  return "";
}

// The distinct layers of bench_conv's set (first occurrence of each name, its batch
// replaced), for each requested batch, filtered by --layers.
std::vector<Layer> suite_layers(const Options& opt) {
  std::vector<std::pair<std::string, td::ConvDesc>> distinct;
  for (const auto& [name, problem] : kConvLayers) {
    const std::string base = base_name(name);
    if (std::none_of(distinct.begin(), distinct.end(), [&](const auto& e) { return e.first == base; }))
      distinct.emplace_back(base, td::ConvDesc::parse(problem));
  }
  for (const auto& want : opt.layers)
    if (std::none_of(distinct.begin(), distinct.end(), [&](const auto& e) { return e.first == base_name(want); })) {
      std::string known;
      for (const auto& e : distinct) known += (known.empty() ? "" : ", ") + e.first;
      throw Error("--layers: unknown layer '" + want + "' (bench_conv's set: " + known + ")");
    }
  std::vector<Layer> out;
  for (int n : opt.batches)
    for (const auto& [base, desc] : distinct) {
      const std::string name = base + "_b" + std::to_string(n);
      if (!opt.layers.empty() && std::none_of(opt.layers.begin(), opt.layers.end(), [&](const std::string& w) {
            return w == base || w == name;
          }))
        continue;
      Layer l{name, desc, ""};
      l.desc.n = n;
      l.why_not = why_not_expressible(l.desc);
      out.push_back(l);
    }
  return out;
}

// conv2d.tdsl's --shape for a layer it can express.
std::string tdsl_shape(const td::ConvDesc& d) {
  return "N=" + std::to_string(d.n) + ",C=" + std::to_string(d.c) + ",H=" + std::to_string(d.h) + ",W=" + std::to_string(d.w) +
         ",KO=" + std::to_string(d.k) + ",R=" + std::to_string(d.kh) + ",S=" + std::to_string(d.kw) + ",P=" + std::to_string(d.pad_h);
}

ta::Problem conv2d_problem(const td::ConvDesc& d) {
  return ta::Problem(ta::parse_spec_file(std::string(TAIHU_DSL_DIR) + "/conv2d.tdsl"), ta::parse_shape(tdsl_shape(d)));
}

std::string fmt_ms(double s) {
  if (std::isnan(s)) return "-";
  if (!(s > 0) || !std::isfinite(s)) return "fail";
  char b[32];
  std::snprintf(b, sizeof b, "%.3f", s * 1e3);
  return b;
}
std::string fmt_ratio(double num, double den) {
  if (!(num > 0 && den > 0 && std::isfinite(num) && std::isfinite(den))) return "-";
  char b[32];
  std::snprintf(b, sizeof b, "%.2fx", num / den);
  return b;
}

// The same ratio for the CSV: a bare number ("" when either time is missing).
std::string plain_ratio(double num, double den) {
  std::string r = fmt_ratio(num, den);
  return r == "-" ? "" : r.substr(0, r.size() - 1);
}

Options parse_options(const std::vector<std::string>& args) {
  Options opt;
  opt.threads = arch::num_threads();
  if (args.size() % 2 != 0) throw Error("--suite dnn: options come in pairs (--name value); see --help");
  for (std::size_t i = 0; i + 1 < args.size(); i += 2) {
    const std::string& k = args[i];
    const std::string& v = args[i + 1];
    if (k == "--budget-per-layer") opt.budget_s = parse_duration(k, v);
    else if (k == "--layers") opt.layers = split(v);
    else if (k == "--batch") {
      opt.batches.clear();
      for (const auto& b : split(v)) {
        char* end = nullptr;
        const long n = std::strtol(b.c_str(), &end, 10);
        if (*end != '\0' || n < 1 || n > 4096) throw Error("--batch: '" + b + "' is not a batch size from 1 to 4096");
        opt.batches.push_back(static_cast<int>(n));
      }
      if (opt.batches.empty()) throw Error("--batch: no batch size given");
    } else if (k == "--threads") opt.threads = std::max(1, std::stoi(v));
    else if (k == "--rounds") opt.rounds = std::max(1, std::stoi(v));
    else if (k == "--anchors") {
      if (v != "tvm" && v != "none") throw Error("--anchors: the suite's peer is 'tvm' (or 'none'), not '" + v + "'");
      opt.tvm = v == "tvm";
    } else if (k == "--seed") opt.seed = std::stoull(v);
    else if (k == "--log") opt.log = v;
    else if (k == "--csv") opt.csv = v;
    else if (k == "--dnn-records") opt.records = v;
    else throw Error("--suite dnn: unknown option " + k);
  }
  return opt;
}

// Warm start across batches: a layer with no records of its own in the log, whose
// other batch size was tuned there (e.g. batch 1 before batch 32), starts from that
// batch's best schedule and the few others ta::batch_seeds adds, measured here at this
// batch and appended to the log as search records. The tuner then resumes from them
// instead of measuring its default point first (at batch 32 the untuned loops ran 2.3 s a call on ResNet-50's res3 and
// took the whole 20 s budget). Returns the seconds spent (counted in the budget) and
// a note ("" when nothing was carried over).
double warm_start(const ta::Problem& p, const ta::Space& space, const ta::TuneOptions& o, const td::ConvDesc& d, std::string* note) {
  const ta::Record key = ta::record_for(p, o);
  std::vector<ta::Record> donors;
  for (const ta::Record& r : ta::best_records(ta::load_log(o.log_path))) {
    if (r.op != key.op || r.spec_hash != key.spec_hash || r.isa != key.isa || r.threads != key.threads || r.backend != key.backend)
      continue;
    if (r.shape == key.shape) return 0;  // this layer has records of its own: the tuner resumes from them
    td::ConvDesc other = d;
    try {
      other.n = ta::parse_shape(r.shape).at("N");
    } catch (const std::exception&) {
      continue;
    }
    if (other.n != d.n && tdsl_shape(other) == r.shape) donors.push_back(r);
  }
  if (donors.empty()) return 0;
  // The nearest batch size.
  std::sort(donors.begin(), donors.end(), [&](const ta::Record& a, const ta::Record& b) {
    auto dist = [&](const ta::Record& r) { return std::abs(std::log(static_cast<double>(ta::parse_shape(r.shape).at("N")) / static_cast<double>(d.n))); };
    return dist(a) < dist(b);
  });
  arch::Stopwatch clock;
  const ta::Record& from = donors.front();
  // The donor's best, toward a larger batch it and a near-tie of it in another GEMM tile
  // with one tile row per task, then that near-tie (ta::batch_seeds: batch 1 leaves level
  // what batch 32 separates), each measured here at this batch (ta::measure_points: one
  // set of inputs for all, a slow call in 2-3 timed calls) and appended to the log.
  std::vector<ta::Point> seeds;
  std::string measured;
  try {
    seeds = ta::batch_seeds(space, ta::load_log(o.log_path), from, d.n > ta::parse_shape(from.shape).at("N"));
  } catch (const std::exception& e) {
    measured = std::string(" failed (") + e.what() + ")";
  }
  // The donor's best always; each other one while it fits the budget at the last one's
  // cost (VGG16 conv3_2 at batch 32, 0.3-0.7 s a call: four seeds took 19 s of a 15 s
  // budget; the third, a row-task variant, was the layer's best).
  const std::vector<ta::Record> recs =
      ta::measure_points(p, space, o, seeds, [&](double elapsed_s, double last_s) { return elapsed_s + last_s <= o.budget_s; });
  for (const ta::Record& rec : recs)
    measured += rec.ok ? " " + std::to_string(rec.median_s * 1e3).substr(0, 8) : std::string(" failed");
  const std::size_t carried = recs.size();
  char b[320];
  std::snprintf(b, sizeof b, "started from the best schedule at %s (%.3f ms there) and %zu more carried over: ms here%s, %.1f s",
                from.shape.c_str(), from.median_s * 1e3, carried == 0 ? 0 : carried - 1, measured.c_str(), clock.seconds());
  *note = b;
  return clock.seconds();
}

// What the timing child reported for one layer.
struct ChildReport {
  std::map<std::string, double> score;  // "tuned", "dnn:<entry>"
  std::map<std::string, double> cores;  // the cores each ran on (median of its counted rounds)
  std::string dnn_auto;
  std::vector<std::string> notes;
};

ChildReport time_in_child(const Layer& l, const ta::Record& rec, const Options& opt, int threads, const Hooks& hooks) {
  ChildReport rep;
  const std::string file =
      (std::filesystem::temp_directory_path() / ("bench_autotune_suite_" + std::to_string(getpid()) + ".jsonl")).string();
  ta::write_lines_atomic(file, {ta::to_json_line(rec)});
  int status = -1;
  const std::string out = hooks.run_self({"--suite-compare", l.desc.str(), "--schedule", file, "--threads",
                                          std::to_string(threads), "--rounds", std::to_string(opt.rounds)},
                                         threads, &status);
  std::filesystem::remove(file);
  std::stringstream ss(out);
  for (std::string line; std::getline(ss, line);) {
    const auto sp = line.find(' ');
    const std::string tag = line.substr(0, sp), rest = sp == std::string::npos ? "" : line.substr(sp + 1);
    if (tag == "time" || tag == "cores") {
      const auto sp2 = rest.find(' ');
      (tag == "time" ? rep.score : rep.cores)[rest.substr(0, sp2)] = std::strtod(rest.c_str() + sp2 + 1, nullptr);
    } else if (tag == "auto") {
      rep.dnn_auto = rest;
    } else if (tag == "note") {
      rep.notes.push_back(rest);
    }
  }
  if (status != 0) rep.notes.push_back("the timing process failed (status " + std::to_string(status) + "); its error is above");
  return rep;
}

}  // namespace

int run_suite(const std::vector<std::string>& args, const Hooks& hooks) {
  const Options opt = parse_options(args);
  arch::set_num_threads(opt.threads);
  const std::vector<Layer> layers = suite_layers(opt);
  if (layers.empty()) throw Error("--suite dnn: no layer selected");
  const std::string isa = arch::isa_name(arch::active_isa());
  bool tvm = opt.tvm && static_cast<bool>(hooks.run_tvm);
  std::printf("bench_autotune --suite dnn: %zu layers, budget %.0f s per layer, %d threads, ISA %s, log %s, CSV %s, dnn records %s\n",
              layers.size(), opt.budget_s, opt.threads, isa.c_str(), opt.log.c_str(), opt.csv.c_str(), opt.records.c_str());
  std::printf("tuned: conv2d.tdsl tuned by taihu-tune; dnn best: the fastest NCHW entry of dnn's list (all timed in one fresh\n"
              "process, %d interleaved rounds, median of round medians); TVM: MetaSchedule with the same budget%s. Times in ms.\n\n",
              opt.rounds, tvm ? "" : " (not run)");
  std::printf("| layer | problem | tuned | algorithm | dnn best | dnn entry | dnn auto | TVM | tuned vs dnn best | tuned vs TVM | trials | tuning s |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  std::fflush(stdout);

  td::TuningRecords records;
  if (std::filesystem::exists(opt.records)) records = td::TuningRecords::load(opt.records);
  std::vector<std::string> csv{"layer,problem,tuned_ms,algorithm,dnn_best_ms,dnn_entry,dnn_auto,tvm_ms,tvm_algorithm,tuned_vs_dnn,tuned_vs_tvm,trials,tuning_s"};
  std::vector<std::string> notes;
  int wins = 0, compared = 0, skipped = 0, tvm_wins = 0, tvm_compared = 0;
  for (const Layer& l : layers) {
    if (!l.why_not.empty()) {
      ++skipped;
      std::printf("| %s | %s | - | not expressible in conv2d.tdsl (%s) | | | | | | | | |\n", l.name.c_str(), l.desc.str().c_str(),
                  l.why_not.c_str());
      csv.push_back(l.name + "," + l.desc.str() + ",,skipped: " + l.why_not + ",,,,,,,,,");
      std::fflush(stdout);
      continue;
    }
    // dnn runs a layer below its serial threshold (1 MFLOP) on one thread whatever the
    // count and looks its tuning record up for 1 thread (dnn::conv_call_threads):
    // such a layer is tuned, timed and keyed at 1 thread here, as dnn runs and reads it
    // (its 2-thread records were never read, and its dnn entries ran on one thread anyway).
    const int threads = td::conv_call_threads(l.desc) == 1 ? 1 : opt.threads;
    if (threads != opt.threads)
      notes.push_back(l.name + ": dnn runs this layer on one thread (below its serial threshold): tuned, timed and keyed at 1 thread");
    double tuned = NAN, dnn_best = NAN, tuning_s = 0;
    std::string algorithm = "-", dnn_entry = "-";
    int trials = 0;
    ChildReport rep;
    PeerTiming peer;
    try {
      ta::Problem p = conv2d_problem(l.desc);
      ta::Space space(p);
      ta::TuneOptions o;
      o.budget_s = opt.budget_s;
      o.threads = threads;
      o.seed = opt.seed;
      o.log_path = opt.log;
      arch::Stopwatch clock;
      std::string carried;
      o.budget_s = std::max(1.0, opt.budget_s - warm_start(p, space, o, l.desc, &carried));
      if (!carried.empty()) notes.push_back(l.name + ": " + carried);
      const ta::TuneResult r = ta::tune(p, space, o);
      tuning_s = clock.seconds();
      trials = r.trials;
      if (r.best.empty()) throw Error("the tuner found no working schedule");
      algorithm = p.spec().algorithms[static_cast<std::size_t>(space.schedule(r.best).algorithm)].name;
      notes.push_back(l.name + ": tuned schedule " + space.describe(r.best));
      ta::Record rec = ta::record_for(p, o);
      rec.schedule = space.to_map(r.best);
      rec.median_s = std::isfinite(r.best_s) && r.best_s > 0 ? r.best_s : 1;
      rep = time_in_child(l, rec, opt, threads, hooks);
      // A multi-threaded kernel whose fresh process never had its cores (another process
      // held one in every round: summarize_rounds cannot tell) is not a reproduction of
      // the search's figure: re-time it, after a pause, up to twice; keep the timing
      // that had the most cores, and say so when none had them.
      const auto tuned_cores = [](const ChildReport& c) {
        const auto k = c.cores.find("tuned");
        return k == c.cores.end() ? 0.0 : k->second;
      };
      for (int retry = 0; retry < 2 && threads > 1 && !ta::had_its_cores(tuned_cores(rep), threads); ++retry) {
        std::this_thread::sleep_for(std::chrono::seconds(2));
        ChildReport again = time_in_child(l, rec, opt, threads, hooks);
        char b[200];
        std::snprintf(b, sizeof b, "the fresh process ran tuned on %.2f of %d cores (%.3f ms): re-timed, %.2f cores (%.3f ms)",
                      tuned_cores(rep), threads, rep.score.count("tuned") ? rep.score["tuned"] * 1e3 : NAN, tuned_cores(again),
                      again.score.count("tuned") ? again.score["tuned"] * 1e3 : NAN);
        notes.push_back(l.name + ": " + b);
        if (tuned_cores(again) > tuned_cores(rep)) rep = std::move(again);
      }
      {
        // The reproduction check: the search's confirmed time against the fresh process's.
        const auto t = rep.score.find("tuned");
        char b[200];
        std::snprintf(b, sizeof b, "search %.4g ms, fresh process %.4g ms (%.2fx), on %.2f cores of %d%s", r.best_s * 1e3,
                      t == rep.score.end() ? NAN : t->second * 1e3, t == rep.score.end() ? NAN : t->second / r.best_s,
                      tuned_cores(rep), threads,
                      threads > 1 && !ta::had_its_cores(tuned_cores(rep), threads) ? " (host contended: not a reproduction)" : "");
        notes.push_back(l.name + ": " + b);
      }
      auto it = rep.score.find("tuned");
      tuned = it == rep.score.end() ? INFINITY : it->second;
      for (const auto& [name, t] : rep.score) {
        if (name.rfind("dnn:", 0) != 0 || !(t > 0) || !std::isfinite(t)) continue;
        const std::string entry = name.substr(4);
        records.add(td::conv_tuning_record(l.desc, td::ConvDirection::forward, isa, threads, td::parse_conv_algo(entry), t));
        if (std::isnan(dnn_best) || t < dnn_best) dnn_best = t, dnn_entry = entry;
      }
      for (const auto& n : rep.notes) notes.push_back(l.name + ": " + n);
    } catch (const std::exception& e) {
      notes.push_back(l.name + ": FAILED: " + e.what());
      if (std::isnan(tuned)) tuned = INFINITY;
    }
    if (tvm) {
      peer = hooks.run_tvm(tdsl_shape(l.desc), opt.budget_s, threads);
      if (peer.ran && !peer.json.empty()) notes.push_back(l.name + ": TVM MetaSchedule: " + peer.json);
    }
    if (std::isfinite(dnn_best)) {
      ++compared;
      if (tuned <= dnn_best) ++wins;
    }
    if (peer.ran && std::isfinite(peer.seconds) && peer.seconds > 0) {
      ++tvm_compared;
      if (tuned <= peer.seconds) ++tvm_wins;
    }
    const double tvm_s = peer.ran ? peer.seconds : NAN;
    std::printf("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %d | %.0f |\n", l.name.c_str(), l.desc.str().c_str(),
                fmt_ms(tuned).c_str(), algorithm.c_str(), fmt_ms(dnn_best).c_str(), dnn_entry.c_str(),
                rep.dnn_auto.empty() ? "-" : rep.dnn_auto.c_str(), fmt_ms(tvm_s).c_str(), fmt_ratio(dnn_best, tuned).c_str(),
                fmt_ratio(tvm_s, tuned).c_str(), trials, tuning_s);
    std::fflush(stdout);
    auto num = [](double s) {
      char b[32] = "";
      if (s > 0 && std::isfinite(s)) std::snprintf(b, sizeof b, "%.6g", s * 1e3);
      return std::string(b);
    };
    csv.push_back(l.name + "," + l.desc.str() + "," + num(tuned) + "," + algorithm + "," + num(dnn_best) + "," + dnn_entry + "," +
                  rep.dnn_auto + "," + num(tvm_s) + "," + (peer.ran ? peer.what : "") + "," + plain_ratio(dnn_best, tuned) + "," +
                  plain_ratio(tvm_s, tuned) + "," + std::to_string(trials) + "," + std::to_string(tuning_s));
    // Written after every layer (atomically), so an interrupted run keeps what it measured.
    ta::write_lines_atomic(opt.csv, csv);
    if (records.size() > 0) td::save_tuning_records(records, opt.records);
  }
  std::printf("\n");
  for (const auto& n : notes) std::printf("- %s\n", n.c_str());
  std::printf("\ntuned >= dnn best on %d/%d layers (%.0f%%)", wins, compared, compared ? 100.0 * wins / compared : 0.0);
  if (skipped) std::printf("; %d layers not expressible in conv2d.tdsl left out", skipped);
  std::printf("\n");
  if (tvm_compared) std::printf("tuned >= TVM MetaSchedule on %d/%d layers (%.0f%%)\n", tvm_wins, tvm_compared, 100.0 * tvm_wins / tvm_compared);
  std::printf("wrote %s and %zu dnn tuning records to %s (TAIHU_TUNING_RECORDS=%s makes dnn's automatic choice read them)\n",
              opt.csv.c_str(), records.size(), opt.records.c_str(), opt.records.c_str());
  return compared > 0 ? 0 : 1;
}

int run_child(const std::vector<std::string>& args) {
  if (args.empty()) throw Error("--suite-compare: missing the problem (dnn's ConvDesc string)");
  const td::ConvDesc d = td::ConvDesc::parse(args[0]);
  const std::string why = why_not_expressible(d);
  if (!why.empty()) throw Error("--suite-compare: " + args[0] + " is not expressible in conv2d.tdsl (" + why + ")");
  std::string schedule_file;
  int threads = arch::num_threads(), rounds = 6;
  if (args.size() % 2 != 1) throw Error("--suite-compare: options come in pairs (--name value)");
  for (std::size_t i = 1; i + 1 < args.size(); i += 2) {
    if (args[i] == "--schedule") schedule_file = args[i + 1];
    else if (args[i] == "--threads") threads = std::max(1, std::stoi(args[i + 1]));
    else if (args[i] == "--rounds") rounds = std::max(1, std::stoi(args[i + 1]));
    else throw Error("--suite-compare: unknown option " + args[i]);
  }
  arch::set_num_threads(threads);
  const ta::Problem p = conv2d_problem(d);
  const ta::Space space(p);
  ta::TuneOptions o;
  o.threads = threads;

  const auto in = ta::random_inputs(p, 99);
  std::vector<const float*> ptrs;
  for (const auto& n : p.inputs()) ptrs.push_back(in.at(n).data());
  const std::size_t out_size = static_cast<std::size_t>(p.tensor(p.output()).size());
  std::vector<float> tuned_out(out_size), dnn_out(out_size);

  struct Contender {
    std::string name;
    std::function<void()> run;
  };
  std::vector<Contender> contenders;
  // The first record is "tuned"; further lines are contenders tuned#2, tuned#3, ... (A/B
  // runs of several schedules in one process, as bench_autotune --compare takes them).
  std::unique_ptr<ta::Kernel> kernel;
  std::vector<std::unique_ptr<ta::Kernel>> others;
  std::vector<float> other_out(out_size);
  if (!schedule_file.empty()) {
    const auto recs = ta::load_log(schedule_file);
    if (recs.empty()) throw Error(schedule_file + ": no record");
    for (std::size_t r = 0; r < recs.size(); ++r) {
      const std::string name = r == 0 ? "tuned" : "tuned#" + std::to_string(r + 1);
      try {
        auto k = ta::build_checked(p, space.schedule(space.from_map(recs[r].schedule)), o);
        ta::Kernel* kp = k.get();
        if (r == 0) {
          kernel = std::move(k);
          contenders.push_back({name, [&, kp] { kp->run(ptrs, tuned_out.data()); }});
        } else {
          others.push_back(std::move(k));
          contenders.push_back({name, [&, kp] { kp->run(ptrs, other_out.data()); }});
        }
      } catch (const std::exception& e) {
        std::printf("time %s inf\nnote %s: %s\n", name.c_str(), name.c_str(), e.what());
      }
    }
  }
  // dnn's automatic choice (a tuning record's entry when TAIHU_TUNING_RECORDS has one).
  std::printf("auto %s\n", td::to_string(td::Convolution(d).algorithm()));
  std::vector<std::unique_ptr<td::Convolution>> convs;
  for (td::ConvAlgo a : td::conv_candidates(d, td::ConvDirection::forward)) {
    if (a == td::ConvAlgo::reference) continue;  // the naive loops: not a candidate for speed
    auto conv = std::make_unique<td::Convolution>(d, a);
    if (conv->algorithm() != a) continue;
    td::Convolution* c = conv.get();
    convs.push_back(std::move(conv));
    contenders.push_back({std::string("dnn:") + td::to_string(a), [&, c] {
                            c->forward(ptrs[0], ptrs[1], nullptr, dnn_out.data(), td::WeightsHint::unchanged);
                          }});
  }
  // One call each, untimed: the weights' transforms, and the slowest call, which sizes
  // the timing blocks (a 0.5 s layer gets one warm-up and one timed call per block).
  double slowest = 0;
  for (const auto& c : contenders) {
    arch::Stopwatch sw;
    c.run();
    slowest = std::max(slowest, sw.seconds());
    if (kernel && c.name.rfind("dnn:", 0) == 0) {  // dnn's result must agree with the tuned kernel's
      double worst = 0;
      for (std::size_t i = 0; i < out_size; ++i)
        worst = std::max(worst, std::abs(static_cast<double>(dnn_out[i]) - tuned_out[i]) / (1.0 + std::abs(tuned_out[i])));
      if (!(worst < 1e-2)) std::printf("note %s disagrees with the tuned kernel: max |diff|/(1+|y|) = %.3g\n", c.name.c_str(), worst);
    }
  }
  ta::MeasureOptions mo = ta::comparison_measure_options();
  if (slowest > 0.02) {
    mo.warmup = 1;
    mo.warmup_s = 0;
    mo.min_repeats = slowest > 0.1 ? 1 : 3;
    rounds = std::min(rounds, slowest > 0.1 ? 3 : 5);
  }
  std::vector<std::function<void()>> runs;
  for (const auto& c : contenders) runs.push_back(c.run);
  const auto measured = ta::interleaved_rounds(runs, mo, rounds, rounds);
  for (std::size_t i = 0; i < contenders.size(); ++i) {
    const ta::RoundSummary s = ta::summarize_rounds(measured[i]);
    std::printf("time %s %.9g\ncores %s %.3g\n", contenders[i].name.c_str(), s.median_s, contenders[i].name.c_str(), s.cores_used);
  }
  return 0;
}

}  // namespace taihu::bench::dnn_suite
