#!/usr/bin/env python3
"""bench_autotune's Halide 21 anchor: a spec's algorithm written in Halide 21's Python
front end, scheduled by Halide 21's CPU autoschedulers, JIT-compiled for this host and
timed in this process.

  halide21_autoschedule.py SPEC [--shape M=512,...] [--scheduler Adams2019,Li2018,Mullapudi2016]
                                [--threads N] [--rounds 12] [--llc BYTES|host] [--algorithm direct,im2col]

The pipeline is the one autotune's Halide lowering (autotune/src/codegen/halide_lower.cpp)
gives Halide 14's autoschedulers: dense inputs of known extents (their estimates),
"boundary zero" inputs through constant_exterior, a reduction into an accumulator Func
(pure init + RDom update) copied to the output, softmax's four statements as four Funcs
(fast_exp), one Func per stencil time step. conv2d is tried as direct loops and as
im2col (each algorithm autoscheduled; the best counts, as for Halide 14). Machine
parameters: parallelism = --threads; Mullapudi2016 also gets last_level_cache_size
(default 32 MiB, the value the Halide 14 anchors get; --llc host uses sysfs's largest
cache) and balance 40. Anderson2021 is GPU-only and not offered.

Timing: the autoscheduled contenders are timed in interleaved rounds, each score the
median of `rounds` block medians (anchor_common.block_median: bench_autotune's own
statistic), through Halide's Callable (no realize() bookkeeping per call).
Every result is checked against a float64 numpy reference first.

Prints one JSON object: {"peer", "version", "spec", "shape", "target", "threads",
"results": {SCHEDULER: {"ms", "algorithm", "schedule_s", "error"}}, "best", "ms",
"wall_s", "timing"}; a scheduler that failed has "fail" with the reason.
"""
import argparse
import os
import sys
import time

import anchor_common as ac

p = argparse.ArgumentParser()
p.add_argument("spec")
p.add_argument("--shape", default="")
p.add_argument("--scheduler", default="Adams2019,Li2018,Mullapudi2016")
p.add_argument("--threads", type=int, default=os.cpu_count())
p.add_argument("--rounds", type=int, default=12)
p.add_argument("--llc", default="33554432")
p.add_argument("--algorithm", default="")
args = p.parse_args()
ac.claim_stdout()
# The JIT runtime's thread pool reads HL_NUM_THREADS when it starts (first realize).
os.environ["HL_NUM_THREADS"] = str(args.threads)

import halide as hl  # noqa: E402
import numpy as np  # noqa: E402

wall0 = time.perf_counter()
spec = args.spec
d = ac.parse_shape(spec, args.shape)
PLUGINS = {"Adams2019": "adams2019", "Li2018": "li2018", "Mullapudi2016": "mullapudi2016"}
libdir = os.path.join(os.path.dirname(hl.__file__), "lib64")
if not os.path.isdir(libdir):
    libdir = os.path.join(os.path.dirname(hl.__file__), "lib")

uid = [0]


def fresh(name):
    # Unique Func names per pipeline: reused names gave slower JIT code with Halide 14
    # (see halide_lower.cpp); cheap insurance here.
    uid[0] += 1
    return f"{name}_{uid[0]}"


def dense_param(name, shape):
    """An ImageParam for a row-major numpy tensor: Halide's dim 0 is the last axis."""
    ip = hl.ImageParam(hl.Float(32), len(shape), fresh(name))
    stride, est = 1, []
    for dim, ext in enumerate(reversed(shape)):
        ip.dim(dim).set_min(0).set_extent(ext).set_stride(stride)
        est.append((0, ext))
        stride *= ext
    ip.set_estimates([hl.Range(a, b) for a, b in est])
    return ip


def finish(f, shape):
    f.set_estimates([hl.Range(0, e) for e in reversed(shape)])
    o = f.output_buffer()
    stride = 1
    for dim, ext in enumerate(reversed(shape)):
        o.dim(dim).set_min(0).set_extent(ext).set_stride(stride)
        stride *= ext
    return f


def build(spec, algorithm):
    """(output Func, [ImageParam]) for the spec, algorithm as the DSL names it."""
    ins = ac.random_inputs(spec, d)
    params = [dense_param(f"in{i}", a.shape) for i, a in enumerate(ins)]
    oshape = ac.output_shape(spec, d)
    x, y, z, w = hl.Var("d0"), hl.Var("d1"), hl.Var("d2"), hl.Var("d3")
    out = hl.Func(fresh("out"))
    if spec == "gemm":
        A, B = params
        r = hl.RDom([hl.Range(0, d["K"])], fresh("rk"))
        acc = hl.Func(fresh("acc"))
        acc[x, y] = 0.0
        acc[x, y] += A[r.x, y] * B[x, r.x]  # C[m, n] += A[m, k] * B[k, n]; x = n, y = m
        out[x, y] = acc[x, y]
    elif spec == "batched_matmul":
        A, B = params
        r = hl.RDom([hl.Range(0, d["K"])], fresh("rk"))
        acc = hl.Func(fresh("acc"))
        acc[x, y, z] = 0.0
        acc[x, y, z] += A[r.x, y, z] * B[x, r.x, z]
        out[x, y, z] = acc[x, y, z]
    elif spec in ("conv2d", "depthwise_conv"):
        X, W = params
        P = d["P"]
        xz = hl.Func(fresh("X_src"))
        xz[x, y, z, w] = hl.BoundaryConditions.constant_exterior(X, 0.0)[x, y, z, w]
        acc = hl.Func(fresh("acc"))
        acc[x, y, z, w] = 0.0  # (ow, oh, k, n)
        if spec == "depthwise_conv":
            r = hl.RDom([hl.Range(0, d["S"]), hl.Range(0, d["R"])], fresh("rd"))
            acc[x, y, z, w] += xz[x + r.x - P, y + r.y - P, z, w] * W[r.x, r.y, z]
        elif algorithm == "im2col":
            # col[n, c, r, s, oh, ow] = X[n, c, oh + r - P, ow + s - P]; Halide order (ow, oh, s, r, c, n)
            col = hl.Func(fresh("col"))
            s_, r_, c_ = hl.Var("d2"), hl.Var("d3"), hl.Var("d4")
            n_ = hl.Var("d5")
            col[x, y, s_, r_, c_, n_] = xz[x + s_ - P, y + r_ - P, c_, n_]
            r = hl.RDom([hl.Range(0, d["S"]), hl.Range(0, d["R"]), hl.Range(0, d["C"])], fresh("rd"))
            acc[x, y, z, w] += W[r.x, r.y, r.z, z] * col[x, y, r.x, r.y, r.z, w]
        else:
            r = hl.RDom([hl.Range(0, d["S"]), hl.Range(0, d["R"]), hl.Range(0, d["C"])], fresh("rd"))
            acc[x, y, z, w] += xz[x + r.x - P, y + r.y - P, r.z, w] * W[r.x, r.y, r.z, z]
        out[x, y, z, w] = acc[x, y, z, w]
    elif spec == "softmax":
        (X,) = params
        r = hl.RDom([hl.Range(0, d["COLS"])], fresh("rc"))
        mx, e, sm = hl.Func(fresh("mx")), hl.Func(fresh("e")), hl.Func(fresh("sm"))
        mx[y] = hl.Float(32).min()
        mx[y] = hl.max(mx[y], X[r.x, y])
        e[x, y] = hl.fast_exp(X[x, y] - mx[y])
        r2 = hl.RDom([hl.Range(0, d["COLS"])], fresh("rc2"))
        sm[y] = 0.0
        sm[y] += e[r2.x, y]
        out[x, y] = e[x, y] * (1.0 / sm[y])
    elif spec.startswith("stencil"):
        (U,) = params
        c = ac.STENCIL_COEF[spec]
        bounds = [hl.Range(0, e) for e in (d["X"], d["Y"], d["Z"])]
        src = hl.Func(fresh("u_src"))
        src[x, y, z] = hl.BoundaryConditions.constant_exterior(U, 0.0)[x, y, z]
        prev = src
        for t in range(d["T"]):
            u = prev if t == 0 else hl.BoundaryConditions.constant_exterior(prev, 0.0, bounds)
            v = out if t == d["T"] - 1 else hl.Func(fresh(f"v_t{t}"))
            e = hl.f32(c[0]) * u[x, y, z]  # float32 coefficients, as the DSL's params
            for k in range(1, len(c)):
                e = e + hl.f32(c[k]) * (u[x, y, z - k] + u[x, y, z + k] + u[x, y - k, z] + u[x, y + k, z] + u[x - k, y, z] + u[x + k, y, z])
            v[x, y, z] = e
            prev = v
    else:
        raise SystemExit(f"halide21: unknown spec {spec}")
    return finish(out, oshape), params, ins, oshape


target = hl.get_host_target()
llc = ac.last_level_cache_bytes() if args.llc == "host" else int(args.llc)
algorithms = args.algorithm.split(",") if args.algorithm else (["direct", "im2col"] if spec == "conv2d" else ["direct"])
results, runs = {}, {}
want = None
for name in [s for s in args.scheduler.split(",") if s]:
    if name not in PLUGINS:
        results[name] = {"fail": "unknown scheduler (Adams2019, Li2018, Mullapudi2016)"}
        continue
    try:
        hl.load_plugin(os.path.join(libdir, f"libautoschedule_{PLUGINS[name]}.so"))
    except Exception as ex:  # noqa: BLE001 -- report, do not abort the other schedulers
        results[name] = {"fail": f"load_plugin: {ex}"}
        continue
    for alg in algorithms:
        key = name if len(algorithms) == 1 else f"{name}/{alg}"
        try:
            out, params, ins, oshape = build(spec, alg)
            pipe = hl.Pipeline(out)
            extra = {"parallelism": str(args.threads)}
            if name == "Mullapudi2016":
                extra.update({"last_level_cache_size": str(llc), "balance": "40"})
            t0 = time.perf_counter()
            pipe.apply_autoscheduler(target, hl.AutoschedulerParams(name, extra))
            sched_s = time.perf_counter() - t0
            fn = pipe.compile_to_callable([pp for pp in params], target)
            bufs = [hl.Buffer(a) for a in ins]
            res = np.zeros(oshape, np.float32)
            obuf = hl.Buffer(res)
            fn(*bufs, obuf)
            if want is None:
                want = ac.reference(spec, d, ins)
            err = ac.max_error(res, want)
            if not err < 1e-3:
                results[key] = {"fail": f"wrong result (relative error {err:.3g})", "algorithm": alg}
                continue
            results[key] = {"algorithm": alg, "schedule_s": round(sched_s, 2), "error": err}
            runs[key] = (lambda fn=fn, bufs=bufs, obuf=obuf: fn(*bufs, obuf))
            ac.log(f"halide21 {spec}: {key} scheduled in {sched_s:.1f} s")
        except Exception as ex:  # noqa: BLE001
            results[key] = {"fail": str(ex).replace("\n", " ")[:300], "algorithm": alg}

scores = ac.interleaved_scores(runs, args.rounds) if runs else {}
best, best_ms = None, None
for key, s in scores.items():
    results[key]["ms"] = s * 1e3
    sched = key.split("/")[0]
    if best_ms is None or s * 1e3 < best_ms:
        best, best_ms = key, s * 1e3
# Per scheduler, its best algorithm (what bench_autotune's Halide 14 columns show).
per_scheduler = {}
for key, r in results.items():
    sched = key.split("/")[0]
    if "ms" in r and (sched not in per_scheduler or r["ms"] < per_scheduler[sched]):
        per_scheduler[sched] = r["ms"]
ac.emit({
    "peer": "halide21", "version": getattr(hl, "__version__", "21"), "spec": spec,
    "shape": ",".join(f"{k}={v}" for k, v in d.items()), "target": str(target), "threads": args.threads,
    "llc_bytes": llc, "results": results, "per_scheduler_ms": per_scheduler, "best": best, "ms": best_ms,
    "wall_s": round(time.perf_counter() - wall0, 1),
    "timing": f"median of {args.rounds} block medians (interleaved rounds, Halide Callable)",
})
