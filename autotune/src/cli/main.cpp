// taihu-tune: tune DSL operator specs, inspect logs, emit code.
//   taihu-tune run SPEC --shape M=1024,N=1024,K=1024 [--budget 2m] [--trials N] [--seed S]
//       [--log tune.jsonl] [--backend halide|cpp] [--strategy evolutionary|random]
//       [--no-cost-model] [--threads N] [--param name=value,...]
//   taihu-tune show SPEC [--shape ...]        the operator, its loops and its space
//   taihu-tune show LOG.jsonl                 every record, one line each
//   taihu-tune best LOG.jsonl [--out FILE] [--dnn-records FILE]
//   taihu-tune time SPEC --shape ... --log LOG [--rounds 12] [--threads N]
//       (re-times the record `best` reports for that key in this fresh process, with
//        bench_autotune's statistic, and prints both figures)
//   taihu-tune emit SPEC --shape ... --format=cpp|halide-aot [--log LOG] [--out PATH]
//       [--name FUNCTION]   (the best logged schedule of that key, else the default point)
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "taihu/arch/environment.hpp"
#include "taihu/arch/error.hpp"
#include "taihu/arch/isa.hpp"
#include "taihu/arch/log.hpp"
#include "taihu/arch/threads.hpp"
#include "taihu/autotune/backend.hpp"
#include "taihu/autotune/cpp_emitter.hpp"
#include "taihu/autotune/interpreter.hpp"
#include "taihu/autotune/measure.hpp"
#include "taihu/autotune/parser.hpp"
#include "taihu/autotune/records.hpp"
#include "taihu/autotune/tuner.hpp"

namespace ta = taihu::autotune;
using taihu::Error;

namespace {

struct Args {
  std::string command;
  std::vector<std::string> positional;
  std::map<std::string, std::string> options;
  std::string get(const std::string& k, const std::string& def = "") const {
    auto it = options.find(k);
    return it == options.end() ? def : it->second;
  }
  bool has(const std::string& k) const { return options.count(k) > 0; }
};

const char* kUsage =
    "usage:\n"
    "  taihu-tune run SPEC --shape M=1024,N=1024,K=1024 [--budget 2m] [--trials N] [--seed S]\n"
    "                 [--log tune.jsonl] [--backend halide|cpp] [--strategy evolutionary|random]\n"
    "                 [--no-cost-model] [--threads N] [--param name=value,...]\n"
    "  taihu-tune show SPEC [--shape ...] | show LOG.jsonl\n"
    "  taihu-tune best LOG.jsonl [--out FILE] [--dnn-records FILE]\n"
    "  taihu-tune time SPEC --shape ... --log LOG [--rounds 12] [--threads N] [--param ...]\n"
    "  taihu-tune emit SPEC --shape ... --format=cpp|halide-aot [--log LOG] [--out PATH] [--name FN]\n";

Args parse_args(int argc, char** argv) {
  Args a;
  if (argc < 2) throw Error(std::string("missing command\n") + kUsage);
  a.command = argv[1];
  static const std::map<std::string, bool> takes_value = {
      {"shape", true}, {"budget", true}, {"trials", true}, {"seed", true}, {"log", true}, {"backend", true},
      {"strategy", true}, {"no-cost-model", false}, {"threads", true}, {"param", true}, {"out", true},
      {"dnn-records", true}, {"format", true}, {"name", true}, {"batch", true}, {"rounds", true}};
  for (int i = 2; i < argc; ++i) {
    std::string s = argv[i];
    if (s.rfind("--", 0) != 0) {
      a.positional.push_back(s);
      continue;
    }
    std::string key = s.substr(2), value;
    auto eq = key.find('=');
    if (eq != std::string::npos) {
      value = key.substr(eq + 1);
      key = key.substr(0, eq);
    }
    auto t = takes_value.find(key);
    if (t == takes_value.end()) throw Error("unknown option --" + key + "\n" + kUsage);
    if (t->second && eq == std::string::npos) {
      if (i + 1 >= argc) throw Error("--" + key + " needs a value");
      value = argv[++i];
    }
    a.options[key] = value;
  }
  return a;
}

// A positive, finite duration: 0, a negative or a NaN budget would silently remove
// the time limit (TuneOptions::budget_s <= 0 means none).
double parse_budget(const std::string& s) {
  double v = 0, mul = -1;
  try {
    std::size_t used = 0;
    v = std::stod(s, &used);
    const std::string unit = s.substr(used);
    mul = unit.empty() || unit == "s" ? 1 : unit == "m" ? 60 : unit == "h" ? 3600 : -1;
  } catch (const std::exception&) {
  }
  if (mul < 0) throw Error("--budget: '" + s + "' is not a duration (e.g. 90s, 2m, 1h)");
  if (!(v > 0) || !std::isfinite(v * mul)) throw Error("--budget: '" + s + "' must be a positive, finite duration (e.g. 90s, 2m, 1h)");
  return v * mul;
}

long parse_int(const std::string& opt, const std::string& s, long min) {
  try {
    std::size_t used = 0;
    long v = std::stol(s, &used);
    if (used != s.size() || v < min) throw std::invalid_argument("");
    return v;
  } catch (const std::exception&) {
    throw Error("--" + opt + ": '" + s + "' must be an integer >= " + std::to_string(min));
  }
}

std::map<std::string, double> parse_params(const std::string& s) {
  std::map<std::string, double> out;
  if (s.empty()) return out;
  std::size_t start = 0;
  while (true) {
    auto comma = s.find(',', start);
    std::string item = s.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    auto eq = item.find('=');
    if (eq == std::string::npos) throw Error("--param: expected name=value but found '" + item + "'");
    try {
      out[item.substr(0, eq)] = std::stod(item.substr(eq + 1));
    } catch (const std::exception&) {
      throw Error("--param: '" + item + "' needs a number");
    }
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

ta::Problem load_problem(const Args& a) {
  if (a.positional.empty()) throw Error(a.command + ": missing SPEC file\n" + kUsage);
  ta::Spec spec = ta::parse_spec_file(a.positional[0]);
  return ta::Problem(std::move(spec), a.has("shape") ? ta::parse_shape(a.get("shape")) : std::map<std::string, std::int64_t>{},
                     parse_params(a.get("param")));
}

std::string ms(double s) {
  char buf[32];
  if (s <= 0 || !std::isfinite(s)) return "-";
  std::snprintf(buf, sizeof buf, "%.3f ms", s * 1e3);
  return buf;
}

// What a record's time is, with its spread: "(median of 12 rounds, IQR 3.1%, 0.85-1.02
// ms)" for a confirmed record, "(median of 50 calls in one search block, ...)" else.
std::string statistic(const ta::Record& r) {
  char buf[160];
  const bool confirmed = r.stat == "confirmed";
  int n = std::snprintf(buf, sizeof buf, "(median of %d %s, IQR %.1f%%", r.repeats, confirmed ? "rounds" : "calls in one search block",
                        100 * r.spread);
  if (r.min_s > 0 && r.max_s > 0 && n > 0 && static_cast<std::size_t>(n) < sizeof buf)
    n += std::snprintf(buf + n, sizeof buf - static_cast<std::size_t>(n), ", %.3f-%.3f ms", r.min_s * 1e3, r.max_s * 1e3);
  if (n > 0 && static_cast<std::size_t>(n) < sizeof buf) std::snprintf(buf + n, sizeof buf - static_cast<std::size_t>(n), ")");
  return buf;
}

ta::TuneOptions options_from(const Args& a) {
  ta::TuneOptions o;
  o.backend = a.get("backend", ta::halide_available() ? "halide" : "cpp");
  o.budget_s = parse_budget(a.get("budget", "2m"));
  o.max_trials = static_cast<int>(parse_int("trials", a.get("trials", "0"), 0));
  o.seed = static_cast<std::uint64_t>(parse_int("seed", a.get("seed", "1"), 0));
  o.strategy = ta::parse_strategy(a.get("strategy", "evolutionary"));
  o.cost_model = !a.has("no-cost-model");
  o.threads = a.has("threads") ? static_cast<int>(parse_int("threads", a.get("threads"), 1)) : taihu::arch::num_threads();
  o.batch = static_cast<int>(parse_int("batch", a.get("batch", "4"), 1));
  o.log_path = a.get("log");
  o.workdir = std::filesystem::temp_directory_path().string() + "/taihu-tune-" + std::to_string(::getpid());
  return o;
}

int cmd_run(const Args& a) {
  ta::Problem p = load_problem(a);
  ta::Space space(p);
  ta::TuneOptions o = options_from(a);
  const double flops = p.flops(0);
  std::fprintf(stderr, "taihu-tune: %s %s | %zu knobs, %.3g points | backend %s, %s, %d threads | budget %.0fs%s, seed %llu\n",
               p.spec().name.c_str(), p.shape_key().c_str(), space.knobs().size(), space.cardinality(), o.backend.c_str(),
               taihu::arch::isa_name(taihu::arch::active_isa()), o.threads, o.budget_s,
               o.max_trials ? (", " + std::to_string(o.max_trials) + " trials").c_str() : "",
               static_cast<unsigned long long>(o.seed));
  o.on_progress = [&](const ta::Progress& pr) {
    const ta::Record& r = *pr.last;
    std::string status = r.ok ? ms(r.median_s) : "FAILED";
    std::fprintf(stderr, "[%4d %6.1fs] %-10s pred %-10s | best %s (%.1f GFLOP/s)%s\n", pr.trial + pr.resumed, pr.elapsed_s,
                 status.c_str(), ms(r.predicted_s).c_str(), ms(pr.best_s).c_str(), pr.best_s > 0 ? flops / pr.best_s * 1e-9 : 0.0,
                 r.ok ? "" : ("  " + r.error.substr(0, 160)).c_str());
  };
  ta::TuneResult res = ta::tune(p, space, o);
  std::filesystem::remove_all(o.workdir);
  if (!std::isfinite(res.best_s)) {  // (a space without knobs has an empty best point)
    std::fprintf(stderr, "taihu-tune: no successful candidate (%d trials, %d failed)\n", res.trials, res.failures);
    return 1;
  }
  std::printf("best %s  %.1f GFLOP/s  (%d trials, %d failed, %d resumed from the log)\n  %s\n", ms(res.best_s).c_str(),
              flops / res.best_s * 1e-9, res.trials, res.failures, res.resumed, space.describe(res.best).c_str());
  if (!o.log_path.empty()) std::printf("log: %s\n", o.log_path.c_str());
  return 0;
}

void show_spec(const Args& a) {
  ta::Spec spec = ta::parse_spec_file(a.positional[0]);
  std::printf("operator %s (%s)\n", spec.name.c_str(), a.positional[0].c_str());
  std::printf("  dims:");
  for (const auto& d : spec.dims) std::printf(" %s%s", d.name.c_str(), d.value ? "(derived)" : "");
  std::printf("\n  tensors:\n");
  for (const auto& t : spec.tensors)
    std::printf("    %-6s %s : %s rank %zu%s\n", t.role == ta::TensorRole::input ? "input" : t.role == ta::TensorRole::output ? "output" : "temp",
                t.name.c_str(), ta::elem_type_name(t.type), t.shape.size(),
                t.boundary == ta::Boundary::zero ? " boundary zero" : t.boundary == ta::Boundary::clamp ? " boundary clamp" : "");
  if (!a.has("shape")) {
    std::printf("  compute blocks: %zu; space entries: %zu (bind --shape to see loops and the space)\n", spec.algorithms.size(), spec.knobs.size());
    return;
  }
  ta::Problem p = load_problem(a);
  for (int al = 0; al < p.algorithm_count(); ++al) {
    const auto& alg = p.spec().algorithms[static_cast<std::size_t>(al)];
    if (p.is_winograd(al)) {
      const std::string& why = p.winograd_unsupported(al);
      if (why.empty())
        std::printf("  compute %s = winograd(%s): Winograd F(m x m, 3 x 3) of this convolution (2.25x / 4x fewer multiplies for m = 2 / 4)\n",
                    alg.name.c_str(), alg.base.c_str());
      else
        std::printf("  %s (skipped for this shape)\n", why.c_str());
      continue;
    }
    if (p.is_ocvec(al)) {
      const std::string& why = p.conv_unsupported(al);
      if (why.empty())
        std::printf("  compute %s = ocvec(%s): this convolution with output channels in %d-lane vectors, weights packed once\n",
                    alg.name.c_str(), alg.base.c_str(), ta::vector_lanes());
      else
        std::printf("  %s (skipped for this shape)\n", why.c_str());
      continue;
    }
    std::printf("  compute %s (%.3g flop):\n", alg.name.c_str(), p.flops(al));
    for (const auto& b : p.stmts(al)) {
      std::printf("    %s %s  pure:", b.stmt->tensor.c_str(), ta::reduce_op_text(b.stmt->op));
      for (const auto& v : b.pure) std::printf(" %s<%lld", v.name.c_str(), static_cast<long long>(v.extent));
      std::printf("  reduce:");
      for (const auto& v : b.reduce) std::printf(" %s<%lld", v.name.c_str(), static_cast<long long>(v.extent));
      std::printf("\n");
    }
  }
  ta::Space space(p);
  std::printf("  space: %.4g points\n", space.cardinality());
  for (const auto& k : space.knobs()) {
    std::printf("    %-14s:", k.name().c_str());
    for (const auto& l : k.labels) std::printf(" %s |", l.c_str());
    std::printf("\n");
  }
}

void show_log(const std::string& path) {
  auto all = ta::load_log(path);
  std::printf("%zu records in %s\n", all.size(), path.c_str());
  for (const auto& r : all) {
    std::string sched;
    for (const auto& [k, v] : r.schedule) sched += (sched.empty() ? "" : " ") + k + "=" + v;
    std::printf("%-5d %-14s %-22s %-6s %dT %-6s %-10s %7.1f GF/s %-9s %s%s\n", r.trial, r.op.c_str(), r.shape.c_str(), r.isa.c_str(), r.threads,
                r.backend.c_str(), r.ok ? ms(r.median_s).c_str() : "FAILED", r.gflops, r.stat.c_str(), sched.c_str(),
                r.ok ? "" : ("  (" + r.error.substr(0, 80) + ")").c_str());
  }
}

int cmd_best(const Args& a) {
  if (a.positional.empty()) throw Error(std::string("best: missing LOG file\n") + kUsage);
  auto all = ta::load_log(a.positional[0]);
  if (all.empty()) throw Error("best: '" + a.positional[0] + "' has no records");
  auto best = ta::best_records(all);
  std::vector<std::string> lines, dnn;
  for (const auto& r : best) {
    std::string sched;
    for (const auto& [k, v] : r.schedule) sched += (sched.empty() ? "" : " ") + k + "=" + v;
    std::printf("%-14s %-26s %-6s %dT %-6s %s  %.1f GFLOP/s  %s  %s\n", r.op.c_str(), r.shape.c_str(), r.isa.c_str(), r.threads,
                r.backend.c_str(), ms(r.median_s).c_str(), r.gflops, statistic(r).c_str(), sched.c_str());
    lines.push_back(ta::to_json_line(r));
    if (auto l = ta::dnn_conv_line(r); !l.empty()) dnn.push_back(l);
  }
  if (a.has("out")) ta::write_lines_atomic(a.get("out"), lines);
  if (a.has("dnn-records")) {
    ta::write_lines_atomic(a.get("dnn-records"), dnn);
    std::printf("%zu dnn conv2d record(s) -> %s\n", dnn.size(), a.get("dnn-records").c_str());
  }
  return 0;
}

// The record `best` reports for this problem's key in LOG, of any backend (the schedule
// means the same to both; the one of `prefer_backend` first), or false.
bool best_logged(const ta::Problem& p, const ta::TuneOptions& o, const std::string& log, ta::Record* out) {
  const ta::Record key = ta::record_for(p, o);
  const ta::Record* chosen = nullptr;
  const auto best = ta::best_records(ta::load_log(log));
  for (const auto& r : best) {
    if (r.op != key.op || r.spec_hash != key.spec_hash || r.shape != key.shape || r.isa != key.isa || r.threads != key.threads) continue;
    if (!chosen || (r.backend == o.backend) > (chosen->backend == o.backend) ||
        ((r.backend == o.backend) == (chosen->backend == o.backend) && r.median_s < chosen->median_s))
      chosen = &r;
  }
  if (chosen) *out = *chosen;
  return chosen != nullptr;
}

// Re-times the best logged schedule of SPEC/--shape in this (fresh) process: built from
// the record, checked against the interpreter, then timed like bench_autotune's final
// comparison (blocks of ~0.06 s after a 0.1 s pause and 20 ms of untimed calls; the
// median of the round medians).
int cmd_time(const Args& a) {
  ta::Problem p = load_problem(a);
  ta::Space space(p);
  ta::TuneOptions o = options_from(a);
  if (!a.has("log")) throw Error("time: --log LOG is required (the record to re-time)");
  ta::Record rec;
  if (!best_logged(p, o, a.get("log"), &rec))
    throw Error("time: '" + a.get("log") + "' has no successful record of " + p.spec().name + " " + p.shape_key() + " (" +
                taihu::arch::isa_name(taihu::arch::active_isa()) + ", " + std::to_string(o.threads) + " threads)");
  o.backend = rec.backend;
  const int rounds = static_cast<int>(parse_int("rounds", a.get("rounds", "12"), 1));
  const ta::Point pt = space.from_map(rec.schedule);
  auto kernel = ta::build_checked(p, space.schedule(pt), o);
  auto in = ta::random_inputs(p, 99);
  std::vector<const float*> ptrs;
  for (const auto& n : p.inputs()) ptrs.push_back(in[n].data());
  std::vector<float> out(static_cast<std::size_t>(p.tensor(p.output()).size()));
  const ta::MeasureOptions mo = ta::comparison_measure_options();
  const auto r = ta::interleaved_rounds({[&] { kernel->run(ptrs, out.data()); }}, mo, rounds, rounds).front();
  for (std::size_t i = 0; i < r.size(); ++i)
    taihu::arch::log_verbose("taihu-tune: round %zu: median %.4f ms (calls %.4f-%.4f, %d calls), %.2f cores used, %ld preemptions\n", i,
                             r[i].median_s * 1e3, r[i].min_s * 1e3, r[i].max_s * 1e3, r[i].repeats, r[i].cores_used, r[i].preemptions);
  const ta::RoundSummary sum = ta::summarize_rounds(r);
  const double med = sum.median_s;
  std::printf("logged %s %s\n", ms(rec.median_s).c_str(), statistic(rec).c_str());
  // The cores the kernel's threads really used (CPU time / wall time, median over the
  // rounds): more than --threads means its parallel loops ignored the thread count (the
  // Winograd / ocvec kernels once ran on every core under --threads 1).
  std::vector<double> cores;
  for (const auto& m : r) cores.push_back(m.cores_used);
  const double cores_used = ta::median_of(cores);
  std::printf("fresh  %s (median of %d rounds, IQR %.1f%%, %.3f-%.3f ms; %d contended rounds left out; %.2f cores used)\n", ms(med).c_str(),
              sum.rounds, 100 * sum.spread, sum.min_s * 1e3, sum.max_s * 1e3, sum.contended, cores_used);
  if (cores_used > o.threads + 0.5)
    std::fprintf(stderr, "taihu-tune: warning: the kernel used %.2f cores with --threads %d: its figure is not a %d-thread one\n", cores_used,
                 o.threads, o.threads);
  std::printf("fresh / logged %.3f\n", med / rec.median_s);
  return 0;
}

int cmd_emit(const Args& a) {
  ta::Problem p = load_problem(a);
  ta::Space space(p);
  ta::TuneOptions o = options_from(a);
  const std::string format = a.get("format");
  if (format != "cpp" && format != "halide-aot") throw Error("emit: --format must be cpp or halide-aot");
  ta::Point pt = space.default_point();
  std::string from = "the default point";
  ta::Record chosen;
  if (a.has("log") && best_logged(p, o, a.get("log"), &chosen)) {
    pt = space.from_map(chosen.schedule);
    from = "the best logged schedule (" + ms(chosen.median_s) + ", " + chosen.backend + ")";
  }
  const std::string why = space.why_invalid(pt);
  if (!why.empty()) throw Error("emit: schedule is invalid: " + why);
  const std::string fn = a.get("name", "taihu_" + p.spec().name);
  const ta::Schedule s = space.schedule(pt);
  if (format == "cpp") {
    const std::string out = a.get("out", fn + ".cpp");
    ta::write_lines_atomic(out, {ta::emit_cpp(p, s, fn)});
    std::printf("wrote %s from %s: %s\n", out.c_str(), from.c_str(), space.describe(pt).c_str());
  } else {
    const std::string dir = a.get("out", ".");
    std::filesystem::create_directories(dir);
    auto files = ta::emit_halide_aot(p, s, dir, fn);
    std::printf("wrote");
    for (const auto& f : files) std::printf(" %s", f.c_str());
    std::printf(" from %s: %s\n", from.c_str(), space.describe(pt).c_str());
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    Args a = parse_args(argc, argv);
    // The library would warn about a bad TAIHU_* value and go on; a tool rejects it.
    if (a.command != "--help" && a.command != "-h" && a.command != "help")
      taihu::arch::check_environment();
    if (a.command == "run") return cmd_run(a);
    if (a.command == "show") {
      if (a.positional.empty()) throw Error(std::string("show: missing SPEC or LOG\n") + kUsage);
      if (a.positional[0].size() > 6 && a.positional[0].ends_with(".jsonl")) show_log(a.positional[0]);
      else show_spec(a);
      return 0;
    }
    if (a.command == "best") return cmd_best(a);
    if (a.command == "emit") return cmd_emit(a);
    if (a.command == "time") return cmd_time(a);
    if (a.command == "--help" || a.command == "-h" || a.command == "help") {
      std::printf("%s", kUsage);
      return 0;
    }
    throw Error("unknown command '" + a.command + "'\n" + kUsage);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "taihu-tune: %s\n", e.what());
    return 2;
  }
}
