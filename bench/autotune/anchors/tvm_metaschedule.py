#!/usr/bin/env python3
"""bench_autotune's TVM anchor: a spec's algorithm in TVM's tensor expressions (TE),
tuned by MetaSchedule within a wall-clock budget, built for this host and timed here.

  tvm_metaschedule.py SPEC [--shape M=512,...] [--budget SECONDS] [--threads N]
                           [--per-iter 8] [--rounds 12] [--mcpu NAME] [--work-dir DIR]

What is tuned: the spec's math (examples/dsl/SPEC.tdsl) as TE: gemm and batched matmul
as a reduction, conv2d and depthwise as a zero-padded direct convolution, softmax as its
four statements (topi's fast_exp, one division per row), stencils as T chained steps
reading zero outside. conv2d is also offered as TOPI's Winograd F(4x4, 3x3) with the
weights transformed once outside the timed call (as taihu's Winograd and dnn's
WeightsHint::unchanged cache them). With several algorithms they are tasks of one
tuning run (the gradient task scheduler shares the budget); the fastest one counts.

Budget: MetaSchedule has no wall-clock limit; a measure callback ends every task once
the budget is spent. It runs only after a batch of --per-iter trials, so the run
overshoots by up to one batch: the JSON reports the trials and the time tuning actually
took (tune_s, from the call to tune_tir, after importing the tensor intrinsics the
default space needs: startup_s); wall_s is the whole script. MetaSchedule's
builder is its LocalBuilder with a build function that skips importing every target's
tensor intrinsics (see build_without_intrinsics).

Target: llvm with -mcpu from /proc/cpuinfo's flags (anchor_common.host_mcpu: LLVM's
own detection names a KVM guest of a Sapphire Rapids "rocketlake") and num-cores =
--threads; TVM_NUM_THREADS = --threads for the runner and the final timing.

Timing: the tuned kernel, called through its PackedFunc on TVM tensors, scored as the
median of --rounds block medians (anchor_common.block_median: bench_autotune's own
statistic), after a check against a float64 numpy reference.

Prints one JSON object: {"peer", "version", "spec", "shape", "target", "threads",
"ms", "algorithm", "results": {ALGORITHM: {"ms"|"fail"}}, "trials", "per_iter",
"budget_s", "tune_s", "startup_s", "wall_s", "timing"}.
"""
import argparse
import os
import shutil
import tempfile
import time

import anchor_common as ac

p = argparse.ArgumentParser()
p.add_argument("spec")
p.add_argument("--shape", default="")
p.add_argument("--budget", type=float, default=60)
p.add_argument("--threads", type=int, default=os.cpu_count())
p.add_argument("--per-iter", type=int, default=8)
p.add_argument("--rounds", type=int, default=12)
p.add_argument("--mcpu", default="")
p.add_argument("--work-dir", default="")
p.add_argument("--seed", type=int, default=1)
args = p.parse_args()
ac.claim_stdout()
os.environ["TVM_NUM_THREADS"] = str(args.threads)

wall0 = time.perf_counter()
import numpy as np  # noqa: E402
try:
    import cloudpickle  # noqa: E402,F401 -- MetaSchedule's builder pickles with it; apache-tvm does not pull it in
except ImportError:
    raise SystemExit("tvm_metaschedule: the anchors venv lacks cloudpickle, which MetaSchedule's builder needs "
                     "(scripts/anchors' tvm group should install it)")
import tvm  # noqa: E402
from tvm import te, topi  # noqa: E402
from tvm.ir.utils import derived_object  # noqa: E402
from tvm.s_tir import meta_schedule as ms  # noqa: E402

spec = args.spec
d = ac.parse_shape(spec, args.shape)
mcpu = args.mcpu or ac.host_mcpu()
target = tvm.target.Target({"kind": "llvm", "mcpu": mcpu, "num-cores": args.threads})
f32 = "float32"


def zero_outside(t, idx, extents):
    """t[idx], or 0 where an index falls outside its extent (the DSL's boundary zero)."""
    conds = []
    for i, e in zip(idx, extents):
        conds += [i >= 0, i < e]
    return te.if_then_else(tvm.tirx.all(*conds), t[tuple(idx)], tvm.tirx.const(0.0, f32))


def algorithms():
    """{name: (PrimFunc, [input numpy arrays], make_call_args)} for the spec."""
    ins = ac.random_inputs(spec, d)
    oshape = ac.output_shape(spec, d)
    algs = {}
    if spec == "gemm":
        A = te.placeholder((d["M"], d["K"]), f32, "A")
        B = te.placeholder((d["K"], d["N"]), f32, "B")
        k = te.reduce_axis((0, d["K"]), "k")
        C = te.compute(oshape, lambda m, n: te.sum(A[m, k] * B[k, n], axis=k), "C")
        algs["direct"] = ([A, B, C], ins)
    elif spec == "batched_matmul":
        A = te.placeholder((d["BATCH"], d["M"], d["K"]), f32, "A")
        B = te.placeholder((d["BATCH"], d["K"], d["N"]), f32, "B")
        k = te.reduce_axis((0, d["K"]), "k")
        C = te.compute(oshape, lambda b, m, n: te.sum(A[b, m, k] * B[b, k, n], axis=k), "C")
        algs["direct"] = ([A, B, C], ins)
    elif spec in ("conv2d", "depthwise_conv"):
        N, C_, H, W, R, S, P = (d[k] for k in ("N", "C", "H", "W", "R", "S", "P"))
        X = te.placeholder((N, C_, H, W), f32, "X")
        Xp = te.compute((N, C_, H + 2 * P, W + 2 * P),
                        lambda n, c, h, w: zero_outside(X, (n, c, h - P, w - P), (N, C_, H, W)), "Xpad")
        r = te.reduce_axis((0, R), "r")
        s = te.reduce_axis((0, S), "s")
        if spec == "conv2d":
            Wt = te.placeholder((d["KO"], C_, R, S), f32, "Wt")
            c = te.reduce_axis((0, C_), "c")
            Y = te.compute(oshape, lambda n, k, oh, ow: te.sum(Xp[n, c, oh + r, ow + s] * Wt[k, c, r, s], axis=[c, r, s]), "Y")
            algs["direct"] = ([X, Wt, Y], ins)
            if R == 3 and S == 3:
                # TOPI's Winograd F(4x4, 3x3) on weights transformed once (untimed).
                U = te.placeholder((6, 6, C_, d["KO"]), f32, "U")
                Yw = topi.nn.conv2d_winograd_nchw(X, U, 1, P, 1, f32, pre_computed=True)
                algs["winograd"] = ([X, U, Yw], [ins[0], winograd_weights(ins[1])])
        else:
            Wt = te.placeholder((C_, R, S), f32, "Wt")
            Y = te.compute(oshape, lambda n, c, oh, ow: te.sum(Xp[n, c, oh + r, ow + s] * Wt[c, r, s], axis=[r, s]), "Y")
            algs["direct"] = ([X, Wt, Y], ins)
    elif spec == "softmax":
        rows, cols = d["ROWS"], d["COLS"]
        X = te.placeholder((rows, cols), f32, "X")
        c1 = te.reduce_axis((0, cols), "c1")
        mx = te.compute((rows,), lambda r: te.max(X[r, c1], axis=c1), "mx")
        shifted = te.compute((rows, cols), lambda r, c: X[r, c] - mx[r], "shifted")
        e = topi.fast_exp(shifted)  # (a tensor op: MetaSchedule inlines `shifted` into it)
        c2 = te.reduce_axis((0, cols), "c2")
        sm = te.compute((rows,), lambda r: te.sum(e[r, c2], axis=c2), "sm")
        Y = te.compute((rows, cols), lambda r, c: e[r, c] * (tvm.tirx.const(1.0, f32) / sm[r]), "Y")
        algs["direct"] = ([X, Y], ins)
    elif spec.startswith("stencil"):
        Z, Yd, Xd = d["Z"], d["Y"], d["X"]
        coef = ac.STENCIL_COEF[spec]
        U = te.placeholder((Z, Yd, Xd), f32, "u")
        cur = U
        def step(u):  # one time step reading u (zero outside)
            def body(z, y, x):
                g = lambda a, b, c: zero_outside(u, (a, b, c), (Z, Yd, Xd))  # noqa: E731
                v = tvm.tirx.const(coef[0], f32) * u[z, y, x]
                for k in range(1, len(coef)):
                    v = v + tvm.tirx.const(coef[k], f32) * (g(z - k, y, x) + g(z + k, y, x) + g(z, y - k, x)
                                                            + g(z, y + k, x) + g(z, y, x - k) + g(z, y, x + k))
                return v
            return body

        for t in range(d["T"]):
            cur = te.compute((Z, Yd, Xd), step(cur), f"v{t}")
        algs["direct"] = ([U, cur], ins)
    else:
        raise SystemExit(f"tvm: unknown spec {spec}")
    return {name: (te.create_prim_func(tensors).with_attr("global_symbol", "main"), arrays) for name, (tensors, arrays) in algs.items()}


def winograd_weights(w):
    """U[eps, nu, ci, co] = sum_{r,s} G[eps, r] W[co, ci, r, s] G[nu, s], built untuned."""
    from tvm.topi.nn.winograd_util import winograd_transform_matrices
    KO, C_, R, S = w.shape
    Wt = te.placeholder(w.shape, f32, "W")
    _, _, G = winograd_transform_matrices(4, 3, f32)
    rr, ss = te.reduce_axis((0, 3), "rr"), te.reduce_axis((0, 3), "ss")
    U = te.compute((6, 6, C_, KO), lambda a, b, ci, co: te.sum(Wt[co, ci, rr, ss] * G[a, rr] * G[b, ss], axis=[rr, ss]), "U")
    f = tvm.tirx.build(te.create_prim_func([Wt, U]), target=target)
    dev = tvm.cpu()
    out = tvm.runtime.tensor(np.zeros((6, 6, C_, KO), np.float32), dev)
    f(tvm.runtime.tensor(w, dev), out)
    return out.numpy()


class TimeLimit:
    """Ends every task once the budget is spent (checked after each batch of trials)."""

    def __init__(self, budget_s):
        self.deadline = time.perf_counter() + budget_s
        self.trials = 0


limit = TimeLimit(args.budget)


@derived_object
class _StopAtDeadline(ms.measure_callback.PyMeasureCallback):
    def apply(self, task_scheduler, task_id, measure_candidates, builder_results, runner_results):
        limit.trials += len(measure_candidates)
        if time.perf_counter() >= limit.deadline:
            for i, task in enumerate(task_scheduler.tasks_):
                if not task.is_terminated:
                    task_scheduler.terminate_task(i)


def build_without_intrinsics(mod, target, _params):
    """MetaSchedule's default_build without its `import tvm.s_tir.tensor_intrin`: that
    import registers every target's tensor intrinsics (CUDA's alone 7-16 s here) and
    LocalBuilder pays it in every worker of every batch (it starts a fresh process pool
    per batch), which left 2-3 batches in a minute on 2 cores. These float32 kernels are
    not tensorized (the tuning log says "The workload cannot be tensorized"), so the
    build is the same. Runs in the builder's worker (pickled by value: this is __main__)."""
    from tvm.driver import build as tvm_build
    from tvm.s_tir.transform import RemoveWeightLayoutRewriteBlock
    mod = RemoveWeightLayoutRewriteBlock(skip_tensor_rewrite=True)(mod)
    return tvm_build(mod, target=target)


algs = algorithms()
work_dir = args.work_dir or tempfile.mkdtemp(prefix="taihu_tvm_ms_")
mod = tvm.IRModule({name: func for name, (func, _) in algs.items()})
builder = ms.builder.LocalBuilder(max_workers=args.threads, timeout_sec=60, f_build=build_without_intrinsics)
runner = ms.runner.LocalRunner(timeout_sec=60)
# MetaSchedule's default CPU space imports every target's tensor intrinsics when tuning
# starts (7-25 s of Python here, CUDA's most of it): a one-time cost of the process, not
# of the search, so it is paid before the clock starts (startup_s).
start0 = time.perf_counter()
import tvm.s_tir.tensor_intrin  # noqa: E402,F401
startup_s = time.perf_counter() - start0
tune0 = time.perf_counter()
limit.deadline = tune0 + args.budget
database = ms.tune_tir(
    mod, target, work_dir, max_trials_global=100000, num_trials_per_iter=args.per_iter, builder=builder, runner=runner,
    measure_callbacks=ms.MeasureCallback.create("default") + [_StopAtDeadline()],
    num_tuning_cores=args.threads, seed=args.seed,
)
tune_s = time.perf_counter() - tune0

dev = tvm.cpu()
results, runs = {}, {}
for name, (func, arrays) in algs.items():
    try:
        sch = ms.tir_integration.compile_tir(database, func, target)
        if sch is None:
            results[name] = {"fail": "no valid schedule found within the budget"}
            continue
        lib = tvm.tirx.build(sch.mod, target=target)
        targs = [tvm.runtime.tensor(a, dev) for a in arrays]
        out = tvm.runtime.tensor(np.zeros(ac.output_shape(spec, d), np.float32), dev)
        lib(*targs, out)
        err = ac.max_error(out.numpy(), ac.reference(spec, d, ac.random_inputs(spec, d)))
        if not err < 1e-3:
            results[name] = {"fail": f"wrong result (relative error {err:.3g})"}
            continue
        results[name] = {"error": err}
        fn = lib["main"]
        runs[name] = (lambda fn=fn, targs=targs, out=out: fn(*targs, out))
    except Exception as ex:  # noqa: BLE001 -- report the algorithm, keep the others
        results[name] = {"fail": str(ex).replace("\n", " ")[:300]}

scores = ac.interleaved_scores(runs, args.rounds) if runs else {}
best, best_ms = None, None
for name, s in scores.items():
    results[name]["ms"] = s * 1e3
    if best_ms is None or s * 1e3 < best_ms:
        best, best_ms = name, s * 1e3
if not args.work_dir:
    shutil.rmtree(work_dir, ignore_errors=True)
ac.emit({
    "peer": "tvm", "version": tvm.__version__, "spec": spec, "shape": ",".join(f"{k}={v}" for k, v in d.items()),
    "target": str(target), "mcpu": mcpu, "threads": args.threads, "ms": best_ms, "algorithm": best, "results": results,
    "trials": limit.trials, "per_iter": args.per_iter, "budget_s": args.budget, "tune_s": round(tune_s, 1),
    "startup_s": round(startup_s, 1),

    "wall_s": round(time.perf_counter() - wall0, 1),
    "timing": f"median of {args.rounds} block medians (PackedFunc calls)",
})
