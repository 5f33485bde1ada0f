"""Shared by bench_autotune's Python anchors (tvm_metaschedule.py, halide21_autoschedule.py).

What it gives them, so the peers are set up and timed alike:
  * SHAPES: each shipped spec's default shape (bench_autotune's kCases), parse_shape();
  * host_mcpu(): an LLVM CPU name for this host from /proc/cpuinfo's flags (LLVM's own
    host detection names a KVM guest of a Sapphire/Emerald Rapids "rocketlake");
  * last_level_cache_bytes(): the largest cache sysfs reports;
  * block_median_score(): bench_autotune's final-comparison statistic -- the median of
    `rounds` block medians, each block after a 100 ms pause and >= 3 untimed calls
    lasting >= 20 ms, then ~0.06 s of timed calls (5 to 50), like ta::measure() with
    the MeasureOptions bench_autotune's compare() sets;
  * references in numpy (the DSL spec's math) to check each peer's output;
  * claim_stdout(), emit(): the one JSON object on stdout, the peers' logging sent to stderr.
"""
import json
import os
import statistics
import sys
import time

import numpy as np

# bench_autotune.cpp's kCases (the shapes it tunes and times).
SHAPES = {
    "gemm": "M=512,N=512,K=512",
    "batched_matmul": "BATCH=32,M=64,N=64,K=64",
    "conv2d": "N=1,C=64,H=28,W=28,KO=64,R=3,S=3,P=1",
    "depthwise_conv": "N=1,C=128,H=56,W=56,R=3,S=3,P=1",
    "softmax": "ROWS=2048,COLS=1024",
    "stencil7": "Z=128,Y=128,X=128,T=2",
    "stencil25": "Z=96,Y=96,X=96,T=2",
}

# The stencils' coefficients (examples/dsl/stencil7.tdsl, stencil25.tdsl params).
STENCIL_COEF = {"stencil7": [0.4, 0.1], "stencil25": [0.30, 0.08, -0.012, 0.0015, -0.0001]}


def parse_shape(spec, text):
    d = {}
    for kv in (text or SHAPES[spec]).split(","):
        k, v = kv.split("=")
        d[k.strip()] = int(v)
    return d


def host_mcpu():
    """An LLVM -mcpu for this host, from its CPU flags (newest ISA level first)."""
    flags, vendor = set(), ""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags") and not flags:
                    flags = set(line.split(":", 1)[1].split())
                elif line.startswith("vendor_id") and not vendor:
                    vendor = line.split(":", 1)[1].strip()
    except OSError:
        return "x86-64"
    amd = vendor == "AuthenticAMD"
    if amd:
        if "avx512f" in flags:
            return "znver4"
        if "vaes" in flags:
            return "znver3"
        if "avx2" in flags:
            return "znver2"
    if {"amx_tile", "avx512_fp16"} <= flags:
        return "sapphirerapids"
    if {"avx512_vnni", "avx512_vbmi2", "avx512ifma"} <= flags:
        return "icelake-server"
    if {"avx512_vnni"} <= flags and "avx512f" in flags:
        return "cascadelake"
    if "avx512f" in flags:
        return "skylake-avx512"
    if "avx2" in flags:
        return "haswell"
    return "x86-64"


def last_level_cache_bytes():
    best = 0
    base = "/sys/devices/system/cpu/cpu0/cache"
    try:
        for ent in os.listdir(base):
            if not ent.startswith("index"):
                continue
            with open(os.path.join(base, ent, "size")) as f:
                s = f.read().strip()
            mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(s[-1], 1)
            best = max(best, int(s.rstrip("KMG")) * mult)
    except (OSError, ValueError):
        pass
    return best


def block_median(run, pause_s=0.1, warmup=3, warmup_s=0.02, target_s=0.06, min_rep=5, max_rep=50):
    time.sleep(pause_s)  # another contender's idle workers go to sleep first
    t0 = time.perf_counter()
    first, i = 0.0, 0
    while i < warmup or time.perf_counter() - t0 < warmup_s:
        w = time.perf_counter()
        run()
        first = time.perf_counter() - w
        i += 1
    reps = min_rep if first <= 0 else int(min(max(target_s / first, min_rep), max_rep))
    t = []
    cpu0, wall0 = time.process_time(), time.perf_counter()
    for _ in range(reps):
        w = time.perf_counter()
        run()
        t.append(time.perf_counter() - w)
    cores_used = (time.process_time() - cpu0) / max(time.perf_counter() - wall0, 1e-12)
    t.sort()
    return t[int(round(0.5 * (len(t) - 1)))], cores_used


def summarize_rounds(rounds):
    """rounds: [(block median, cores used)]. The median of the block medians, leaving out
    the rounds another process held a core in (cores used below 80% of the contender's
    highest round), unless fewer than 3 (or a third) would be left: as
    ta::summarize_rounds does for taihu's contenders."""
    top = max(c for _, c in rounds)
    clean = [m for m, c in rounds if c >= 0.8 * top]
    if len(clean) < 3 or 3 * len(clean) < len(rounds):
        clean = [m for m, _ in rounds]
    return statistics.median(clean)


def interleaved_scores(runs, rounds=12):
    """runs: {name: callable}. Round r starts at contender r (mod n), as
    ta::interleaved_rounds does; returns {name: median of its uncontended block medians
    (s)} (summarize_rounds)."""
    names = list(runs)
    meds = {n: [] for n in names}
    for r in range(rounds):
        for j in range(len(names)):
            n = names[(j + r) % len(names)]
            meds[n].append(block_median(runs[n]))
    return {n: summarize_rounds(v) for n, v in meds.items()}


# ---- the specs' math in numpy (row-major, as the DSL declares the tensors) ----------
def random_inputs(spec, d, seed=99):
    rng = np.random.default_rng(seed)
    f = lambda *s: rng.uniform(-1, 1, size=s).astype(np.float32)
    if spec == "gemm":
        return [f(d["M"], d["K"]), f(d["K"], d["N"])]
    if spec == "batched_matmul":
        return [f(d["BATCH"], d["M"], d["K"]), f(d["BATCH"], d["K"], d["N"])]
    if spec == "conv2d":
        return [f(d["N"], d["C"], d["H"], d["W"]), f(d["KO"], d["C"], d["R"], d["S"])]
    if spec == "depthwise_conv":
        return [f(d["N"], d["C"], d["H"], d["W"]), f(d["C"], d["R"], d["S"])]
    if spec == "softmax":
        return [f(d["ROWS"], d["COLS"])]
    if spec.startswith("stencil"):
        return [f(d["Z"], d["Y"], d["X"])]
    raise SystemExit(f"unknown spec {spec}")


def output_shape(spec, d):
    if spec == "gemm":
        return (d["M"], d["N"])
    if spec == "batched_matmul":
        return (d["BATCH"], d["M"], d["N"])
    if spec in ("conv2d", "depthwise_conv"):
        oh, ow = d["H"] + 2 * d["P"] - d["R"] + 1, d["W"] + 2 * d["P"] - d["S"] + 1
        return (d["N"], d["KO"] if spec == "conv2d" else d["C"], oh, ow)
    if spec == "softmax":
        return (d["ROWS"], d["COLS"])
    return (d["Z"], d["Y"], d["X"])


def reference(spec, d, ins):
    if spec == "gemm":
        return ins[0].astype(np.float64) @ ins[1]
    if spec == "batched_matmul":
        return np.matmul(ins[0].astype(np.float64), ins[1])
    if spec in ("conv2d", "depthwise_conv"):
        x, w = ins[0].astype(np.float64), ins[1].astype(np.float64)
        P, R, S = d["P"], d["R"], d["S"]
        xp = np.pad(x, ((0, 0), (0, 0), (P, P), (P, P)))
        n, c, oh, ow = output_shape(spec, d)
        y = np.zeros(output_shape(spec, d))
        for r in range(R):
            for s in range(S):
                win = xp[:, :, r:r + oh, s:s + ow]
                if spec == "conv2d":
                    y += np.einsum("nchw,kc->nkhw", win, w[:, :, r, s])
                else:
                    y += win * w[None, :, r, s, None, None]
        return y
    if spec == "softmax":
        x = ins[0].astype(np.float64)
        e = np.exp(x - x.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)
    c = STENCIL_COEF[spec]
    u = ins[0].astype(np.float64)
    rad = len(c) - 1
    for _ in range(d["T"]):
        p = np.pad(u, rad)
        Z, Y, X = u.shape
        v = c[0] * u
        for k in range(1, rad + 1):
            v = v + c[k] * (p[rad - k:rad - k + Z, rad:rad + Y, rad:rad + X] + p[rad + k:rad + k + Z, rad:rad + Y, rad:rad + X]
                            + p[rad:rad + Z, rad - k:rad - k + Y, rad:rad + X] + p[rad:rad + Z, rad + k:rad + k + Y, rad:rad + X]
                            + p[rad:rad + Z, rad:rad + Y, rad - k:rad - k + X] + p[rad:rad + Z, rad:rad + Y, rad + k:rad + k + X])
        u = v
    return u


def max_error(got, want):
    """Largest absolute error relative to the reference's largest magnitude."""
    return float(np.max(np.abs(got.astype(np.float64) - want)) / max(1e-30, float(np.max(np.abs(want)))))


_result_out = None


def claim_stdout():
    """Keeps stdout for the one JSON object: everything else written to fd 1 (TVM's and
    Halide's logging, from Python or C++) goes to stderr from here on."""
    global _result_out
    if _result_out is None:
        sys.stdout.flush()
        _result_out = os.fdopen(os.dup(1), "w")
        os.dup2(2, 1)


def emit(obj):
    out = _result_out or sys.stdout
    out.write(json.dumps(obj) + "\n")
    out.flush()


def log(msg):
    sys.stderr.write(msg + "\n")
    sys.stderr.flush()
