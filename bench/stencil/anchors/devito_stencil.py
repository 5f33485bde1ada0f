#!/usr/bin/env python3
"""Real Devito as bench_stencil's anchor: one of taihu's stencil rows, built with Devito.

bench_stencil runs this in a child process (anchor_registry's run_anchor_python) before
taihu's timed loop for the row, never at the same time. It prints ONE JSON object on
stdout; everything else (Devito's log, compiler output) goes to stderr.

Same problem as the taihu row: float32, the row's grid and space order, second order in
time, a velocity that varies point by point, no absorbing boundary (taihu's rows run
BoundaryKind::none: the interior update only), and the same discrete equations with the
same coefficient fields, precomputed as taihu precomputes them:
  acoustic  u+ = 2u - u- + A lap(u)                              A = vp^2 dt^2
  vti       p+ = 2p - p- + A (p_xx + p_yy) + C q_zz               A = vp^2 (1+2 eps) dt^2
            q+ = 2q - q- + B (p_xx + p_yy) + C q_zz               B = vp^2 (1+2 delta) dt^2,
                                                                  C = vp^2 dt^2
  tti       h1(f) = R_zz f_zz + R_xx f_xx + R_yy f_yy + R_zx f_zx + R_xy f_xy + R_zy f_zy
            p+ = 2p - p- + A (lap p - h1(p)) + C h1(q),  q+ = 2q - q- + B (...) + C h1(q)
(Fletcher/Du/Fowler 2009 with vs = 0, as taihu's kernels; the mixed terms are products of
centred first derivatives of the same order, f.dz.dx in Devito's notation.) The equations
are written in Devito's DSL here, not imported from Devito's examples: the examples'
TTI (examples/seismic/tti) is a different discretisation (rotated staggered first
derivatives, Zhang et al. 2011) with a damping field, and importing examples.seismic
needs pytest, which the anchors venv does not install.
Axes: taihu's layout is z fastest, then x, then y; the Devito grid is (y, x, z) so that
z is Devito's contiguous dimension too. Shapes are given in taihu's order (nz nx ny).

Devito's side is left as a user would leave it: DEVITO_LANGUAGE=openmp (set here when
unset), platform, compiler and optimisation level its defaults ('advanced'), threads
from --threads (bench_stencil passes its own count; OMP_PROC_BIND is inherited). Block
shapes: --autotune aggressive (the default here, as Devito's own benchmark script) tunes
them once before timing, and the timed runs reuse the tuned values (printed as
tuned_arg; --tuned tuned_arg gives them to a later run, which then skips autotuning);
--autotune off keeps Devito's default blocks. JIT compilation (cached by Devito across
runs) and autotuning are excluded from timing.

Timing: --reps runs of --steps time steps each. seconds_per_step is the median over the
runs of Devito's own C-level section timers (its PerformanceSummary) / steps, gpts the grid
points per second from it; wall_seconds_per_step is the same from Python's clock around
op.apply (includes argument processing). Output, e.g.:
  {"gpts": 0.86, "seconds_per_step": 0.0195, "wall_seconds_per_step": 0.021,
   "devito": "4.8.23", "threads": 2, "shape": [256, 256, 256], "order": 8, ...}

  python devito_stencil.py --physics acoustic --shape 256 256 256 --order 8 --threads 2
"""
import argparse
import json
import os
import statistics
import sys
import time


def parse():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--physics", choices=["acoustic", "vti", "tti"], default="acoustic")
    ap.add_argument("--shape", type=int, nargs=3, metavar=("NZ", "NX", "NY"), default=[256, 256, 256],
                    help="taihu's order: z (contiguous), x, y")
    ap.add_argument("--order", type=int, default=8, help="space order")
    ap.add_argument("--threads", type=int, default=int(os.environ.get("OMP_NUM_THREADS", "0") or 0))
    ap.add_argument("--steps", type=int, default=10, help="time steps per timed run")
    ap.add_argument("--reps", type=int, default=5, help="timed runs (median reported)")
    ap.add_argument("--autotune", default="aggressive", choices=["off", "basic", "aggressive", "max"])
    ap.add_argument("--tuned", default="", metavar="NAME=V,...",
                    help="block sizes from an earlier run's tuned_arg: skip autotuning, use these")
    return ap.parse_args()


def build(args, np, dv):
    nz, nx, ny = args.shape
    h = 10.0
    dims = tuple(dv.SpaceDimension(name=n, spacing=dv.Constant(name="h_" + n, value=h, dtype=np.float32))
                 for n in ("y", "x", "z"))
    grid = dv.Grid(shape=(ny, nx, nz), extent=((ny - 1) * h, (nx - 1) * h, (nz - 1) * h), dimensions=dims,
                   dtype=np.float32)
    y, x, z = grid.dimensions
    so = args.order

    # The velocity taihu's bench uses: 2000 + (i % 977) m/s over the linear index
    # (z fastest), which is C order on (y, x, z).
    vp = (2000.0 + (np.arange(nz * nx * ny, dtype=np.int64) % 977)).astype(np.float32).reshape(ny, nx, nz)
    dt = 0.4 * h / (float(vp.max()) * np.sqrt(1 + 2 * 0.2) * np.sqrt(3.0))  # CFL-safe; value irrelevant to speed
    v2dt2 = vp.astype(np.float64) ** 2 * dt * dt

    def coefficient(name, values):
        f = dv.Function(name=name, grid=grid, space_order=0)
        f.data[:] = values.astype(np.float32)
        return f

    def field(name):
        f = dv.TimeFunction(name=name, grid=grid, time_order=2, space_order=so)
        f.data[:, ny // 2, nx // 2, nz // 2] = 1.0  # a point to propagate, as taihu's seed()
        return f

    if args.physics == "acoustic":
        u = field("u")
        A = coefficient("A", v2dt2)
        eqs = [dv.Eq(u.forward, 2 * u - u.backward + A * u.laplace)]
    else:
        p, q = field("p"), field("q")
        A = coefficient("A", v2dt2 * (1 + 2 * 0.2))  # epsilon 0.2, delta 0.1 as taihu's bench
        B = coefficient("B", v2dt2 * (1 + 2 * 0.1))
        C = coefficient("C", v2dt2)
        if args.physics == "vti":
            h2 = p.dx2 + p.dy2
            vz = q.dz2
        else:
            idx = np.arange(nz * nx * ny, dtype=np.int64).reshape(ny, nx, nz)
            th = 0.3 + 0.0003 * (idx % 1013)
            ph = 0.2 + 0.0005 * (idx % 991)
            n_z, n_x, n_y = np.cos(th), np.sin(th) * np.cos(ph), np.sin(th) * np.sin(ph)
            R = [coefficient(nm, v) for nm, v in
                 (("Rzz", n_z * n_z), ("Rxx", n_x * n_x), ("Ryy", n_y * n_y),
                  ("Rzx", 2 * n_z * n_x), ("Rxy", 2 * n_x * n_y), ("Rzy", 2 * n_z * n_y))]

            def h1(f):
                return (R[0] * f.dz2 + R[1] * f.dx2 + R[2] * f.dy2 +
                        R[3] * f.dz.dx + R[4] * f.dx.dy + R[5] * f.dz.dy)

            h2 = p.laplace - h1(p)
            vz = h1(q)
        eqs = [dv.Eq(p.forward, 2 * p - p.backward + A * h2 + C * vz),
               dv.Eq(q.forward, 2 * q - q.backward + B * h2 + C * vz)]
    return grid, dv.Operator(eqs, name="taihu_" + args.physics)


def main():
    args = parse()
    os.environ.setdefault("DEVITO_LANGUAGE", "openmp")
    os.environ.setdefault("DEVITO_LOGGING", "WARNING")
    if args.threads > 0:
        os.environ["OMP_NUM_THREADS"] = str(args.threads)
    # Devito and the C compiler may print on stdout: keep it for the JSON line alone.
    real_stdout = sys.stdout
    sys.stdout = sys.stderr
    import numpy as np
    import devito as dv

    grid, op = build(args, np, dv)
    nthreads = args.threads if args.threads > 0 else None
    extra = {} if nthreads is None else {"nthreads": nthreads}

    tuned = {k: int(v) for k, v in (item.split("=") for item in args.tuned.split(",") if item)}
    autotune = args.autotune if args.autotune != "off" and not tuned else False
    t0 = time.perf_counter()
    # 5 steps: each autotuning trial then runs the 5 its preemptive mode asks for.
    op.apply(time_m=1, time_M=5, autotune=autotune, **extra, **tuned)
    setup_seconds = time.perf_counter() - t0  # JIT compile (+ autotuning) + 5 steps
    for record in op._state.get("autotuning", []):  # the autotuner's choice, reused below
        tuned = {k: v for k, v in record.get("tuned", {}).items() if k != "nthreads"}
    run_kwargs = dict(extra)
    run_kwargs.update(tuned)

    c_times, wall_times = [], []
    for _ in range(args.reps):
        t0 = time.perf_counter()
        summary = op.apply(time_m=1, time_M=args.steps, **run_kwargs)
        wall_times.append(time.perf_counter() - t0)
        # Devito's C-level section timers (the time loop's compute, summed over steps).
        c_times.append(sum(entry.time for entry in summary.values()))
    points = float(np.prod(args.shape))
    seconds_per_step = statistics.median(c_times) / args.steps
    out = {
        "gpts": points / seconds_per_step / 1e9,
        "seconds_per_step": seconds_per_step,
        "best_seconds_per_step": min(c_times) / args.steps,
        "wall_seconds_per_step": statistics.median(wall_times) / args.steps,
        "devito": dv.__version__,
        "threads": int(op.nthreads.default_value) if nthreads is None else nthreads,
        "shape": list(args.shape),
        "order": args.order,
        "physics": args.physics,
        "steps": args.steps,
        "reps": args.reps,
        "autotune": "given" if args.tuned else args.autotune,
        "tuned_arg": ",".join(f"{k}={int(v)}" for k, v in sorted(tuned.items())),
        "setup_seconds": setup_seconds,
        "platform": str(dv.configuration["platform"]),
        "compiler": str(dv.configuration["compiler"]).split("[")[0],
    }
    real_stdout.write(json.dumps(out) + "\n")
    real_stdout.flush()


if __name__ == "__main__":
    main()
