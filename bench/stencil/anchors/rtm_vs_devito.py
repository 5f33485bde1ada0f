#!/usr/bin/env python3
"""taihu-seismic migrate against Devito's RTM example on the same model, shots and steps.

What it runs (each side in its own child process, one after the other, never together):
  taihu   build/bin/taihu-seismic migrate on a raw float32 model written here, sponge
          boundary, the migration velocity smoothed by taihu (--smooth), the observed data
          modelled in the true minus the smoothed model; once with every snapshot kept and
          once within --budget MiB (checkpointing), unless --budget 0.
  Devito  the RTM of Devito's tutorial (examples/seismic/tutorials/02_rtm.ipynb) with
          Devito's own example classes (examples.seismic: Model, AcquisitionGeometry,
          AcousticWaveSolver): per shot, the true data, the smoothed model's data with
          the source wavefield saved (save=True: every time step kept in memory), and the
          tutorial's ImagingOperator (adjoint of the residual, image -= u v per step).
          Space order 8, 'damp' absorbing layer of --nbl points outside the model.
Both on the same grid: the model here is padded by --nbl points on every side for taihu
(its sponge of that width sits inside its grid), which is exactly Devito's grid with
nbl; the same dt (Devito's critical dt rounded down to whole microseconds, as taihu's
SEG-Y needs), the same number of steps, f0, shots and receivers, float32, --threads
OpenMP threads each (DEVITO_LANGUAGE=openmp).
Measured per side: wall time of the whole child (Devito's JIT compilation reported
separately), peak resident memory (os.wait4's ru_maxrss of the child), and the number of
full-grid time steps per shot per nt (recompute factor: Devito 3 = true + smoothed
forward + adjoint; taihu 4 with all snapshots, more when checkpointing recomputes).
The images are compared by the normalised correlation of the raw cross-correlation
images below the mute depth (taihu's image_xcorr.npy vs Devito's -image), as a check
that both migrated the same data.

examples.seismic imports pytest at module level for its own tests; the anchors venv has
no pytest, so the Devito child puts an inert stand-in into sys.modules first (only
pytest.mark.parametrize and friends are touched, as decorators of test functions).

  build/anchors/venv/bin/python bench/stencil/anchors/rtm_vs_devito.py            # synthetic
  build/anchors/venv/bin/python bench/stencil/anchors/rtm_vs_devito.py \
      --marmousi ../shared/data/marmousi/vp_marmousi_bi --window 4000:8000 --tmax 1.6
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))


def parse():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--taihu", default=os.path.join(ROOT, "build", "bin", "taihu-seismic"))
    ap.add_argument("--shape", default="301x151", help="synthetic model nx x nz (without the layers)")
    ap.add_argument("--spacing", type=float, default=10.0, help="metres (synthetic model)")
    ap.add_argument("--marmousi", help="vp_marmousi_bi (1601x401 at 7.5 m, z fastest, km/s) instead of the synthetic model")
    ap.add_argument("--window", default="4000:8000", help="Marmousi x range in metres")
    ap.add_argument("--tmax", type=float, default=1.2, help="seconds")
    ap.add_argument("--f0", type=float, default=15.0, help="Hz")
    ap.add_argument("--shots", type=int, default=3, help="sources spread evenly across the model")
    ap.add_argument("--depth", type=float, default=20.0, help="source and receiver depth, metres below the model top")
    ap.add_argument("--nbl", type=int, default=40, help="absorbing layer points (Devito nbl, taihu sponge width)")
    ap.add_argument("--smooth", type=float, default=100.0, help="taihu --smooth metres (Devito gets the same smoothing)")
    ap.add_argument("--budget", type=float, default=0.0, help="also run taihu within this many MiB of source wavefield (0: no)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--workdir", default=None)
    ap.add_argument("--devito-child", help=argparse.SUPPRESS)  # internal: the Devito side
    return ap.parse_args()


# ---------------------------------------------------------------- models
def synthetic_model(nx, nz, h):
    """vp (nx, nz) in m/s: layers at 30% and 55% depth, a dipping interface, a fast bottom."""
    x = np.arange(nx)[:, None] * h
    z = np.arange(nz)[None, :] * h
    depth = nz * h
    vp = np.full((nx, nz), 1500.0, dtype=np.float32)
    vp[:, :] = np.where(z >= 0.2 * depth, 2000.0, vp)
    vp[:, :] = np.where(z >= 0.4 * depth, 2500.0, vp)
    dip = 0.55 * depth + 0.15 * depth * x / (nx * h)
    vp[:, :] = np.where(z >= dip, 3000.0, vp)
    vp[:, :] = np.where(z >= 0.85 * depth, 3500.0, vp)
    return vp


def marmousi_window(path, x0, x1):
    h = 7.5
    vp = np.fromfile(path, dtype="<f4").reshape(1601, 401)  # (x, z), z fastest on disk
    if vp.max() < 100:
        vp = vp * 1000.0
    i0, i1 = int(round(x0 / h)), int(round(x1 / h)) + 1
    return np.ascontiguousarray(vp[i0:i1, :]).astype(np.float32), h


def smoothed(vp, h, metres):
    """Slowness averaged over +-metres along each axis, twice (taihu's smoothed_model)."""
    r = int(round(metres / h))
    if r <= 0:
        return vp.copy()
    s = 1.0 / vp.astype(np.float64)
    for _ in range(2):
        for axis in (0, 1):
            pad = [(0, 0), (0, 0)]
            pad[axis] = (r, r)
            p = np.pad(s, pad, mode="edge")
            c = np.cumsum(p, axis=axis)
            c = np.insert(c, 0, 0.0, axis=axis)
            n = s.shape[axis]
            hi = np.take(c, np.arange(2 * r + 1, 2 * r + 1 + n), axis=axis)
            lo = np.take(c, np.arange(0, n), axis=axis)
            s = (hi - lo) / (2 * r + 1)
    return (1.0 / s).astype(np.float32)


# ---------------------------------------------------------------- children
def run_child(cmd, env, log_path):
    """Runs cmd, stdout+stderr to log_path; returns (seconds, peak RSS MiB, returncode)."""
    t0 = time.perf_counter()
    with open(log_path, "w") as log:
        p = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(p.pid, 0)
    seconds = time.perf_counter() - t0
    rc = os.waitstatus_to_exitcode(status)
    return seconds, usage.ru_maxrss / 1024.0, rc


def devito_child(spec_path):
    """The Devito side: Devito's RTM tutorial with its example classes; prints one JSON line."""
    import types

    class _Inert:  # pytest stand-in: decorators return the function unchanged
        def __getattr__(self, name):
            return self

        def __call__(self, *a, **k):
            if len(a) == 1 and callable(a[0]) and not k:
                return a[0]
            return self

    sys.modules.setdefault("pytest", types.ModuleType("pytest"))
    sys.modules["pytest"].mark = _Inert()
    sys.modules["pytest"].fixture = _Inert()
    sys.modules["pytest"].raises = _Inert()
    import resource

    from devito import Eq, Function, Operator, TimeFunction, configuration, solve
    from devito import __version__ as devito_version
    from examples.seismic import AcquisitionGeometry, Model, PointSource
    from examples.seismic.acoustic import AcousticWaveSolver

    spec = json.load(open(spec_path))
    configuration["log-level"] = "WARNING"
    t_start = time.perf_counter()
    vp = np.load(spec["vp"]) / 1000.0  # km/s, Devito's example units (m, ms, kHz)
    vp0 = np.load(spec["vp_smooth"]) / 1000.0
    h, nbl, so = spec["spacing"], spec["nbl"], 8
    dt_ms = spec["dt"] * 1e3
    common = dict(origin=(0.0, 0.0), spacing=(h, h), shape=vp.shape, space_order=so, nbl=nbl, bcs="damp", dt=dt_ms)
    model = Model(vp=vp, **common)
    model0 = Model(vp=vp0, grid=model.grid, **common)
    nrec = len(spec["receivers"])
    rec = np.zeros((nrec, 2))
    rec[:, 0] = spec["receivers"]
    rec[:, 1] = spec["depth"]
    src = np.array([[spec["shots"][0], spec["depth"]]])
    tn = (spec["nt"] - 1) * dt_ms
    geometry = AcquisitionGeometry(model, rec, src, 0.0, tn, f0=spec["f0"] / 1000.0, src_type="Ricker")
    assert geometry.nt == spec["nt"], (geometry.nt, spec["nt"])
    solver = AcousticWaveSolver(model, geometry, space_order=so)

    # The tutorial's ImagingOperator, at space order 8.
    image = Function(name="image", grid=model.grid)
    v = TimeFunction(name="v", grid=model.grid, time_order=2, space_order=so)
    u = TimeFunction(name="u", grid=model.grid, time_order=2, space_order=so, save=geometry.nt)
    eqn = model.m * v.dt2 - v.laplace + model.damp * v.dt.T
    stencil = Eq(v.backward, solve(eqn, v.backward))
    residual = PointSource(name="residual", grid=model.grid, time_range=geometry.time_axis,
                           coordinates=geometry.rec_positions)
    res_term = residual.inject(field=v.backward, expr=residual * model.critical_dt ** 2 / model.m)
    op_imaging = Operator([stencil] + res_term + [Eq(image, image - u * v)], subs=model.spacing_map)

    compile_s = 0.0
    per_shot = []
    for i, sx in enumerate(spec["shots"]):
        t0 = time.perf_counter()
        geometry.src_positions[0, :] = [sx, spec["depth"]]
        true_d, _, _ = solver.forward(vp=model.vp)
        smooth_d, u0, _ = solver.forward(vp=model0.vp, save=True)
        v.data.fill(0.0)
        residual.data[:] = smooth_d.data[:] - true_d.data[:]
        op_imaging(u=u0, v=v, vp=model0.vp, dt=model0.critical_dt, residual=residual)
        per_shot.append(time.perf_counter() - t0)
    if len(per_shot) > 1:  # the first shot also JIT-compiles the three operators
        compile_s = max(0.0, per_shot[0] - float(np.median(per_shot[1:])))
    nb = nbl
    # The tutorial's image -= u v with residual = syn - obs is sum u v(obs - syn): taihu's
    # sum u lambda with data = true - smoothed, the same sign.
    img = np.array(image.data[nb:-nb, nb:-nb])
    np.save(spec["image_out"], img.astype(np.float32))
    print(json.dumps({
        "devito": devito_version, "seconds": time.perf_counter() - t_start, "per_shot": per_shot,
        "compile_estimate": compile_s, "nt": int(geometry.nt), "dt_ms": float(model.critical_dt),
        "grid": [int(n) for n in model.grid.shape], "maxrss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0,
        "saved_wavefield_mib": float(np.prod(model.grid.shape)) * geometry.nt * 4 / 2 ** 20,
    }))


# ---------------------------------------------------------------- driver
def main():
    a = parse()
    if a.devito_child:
        devito_child(a.devito_child)
        return 0
    if a.marmousi:
        x0, x1 = (float(v) for v in a.window.split(":"))
        vp, h = marmousi_window(a.marmousi, x0, x1)
        label = f"Marmousi x {x0:g}-{x1:g} m"
    else:
        nx, nz = (int(v) for v in a.shape.split("x"))
        h = a.spacing
        vp = synthetic_model(nx, nz, h)
        label = "synthetic layered + dipping"
    nx, nz = vp.shape
    nbl = a.nbl
    work = a.workdir or tempfile.mkdtemp(prefix="rtm_vs_devito_")
    os.makedirs(work, exist_ok=True)
    # Devito's critical dt (its example's CFL: coefficient 0.38 in 3D, 0.42 in 2D, times
    # sqrt(1 / ... ) for the order) is computed by Devito itself in the child as well;
    # here the same formula through the example's Model keeps the two identical.
    dt = devito_dt(vp, h, nbl)
    nt = int(round(a.tmax / dt)) + 1
    width_m = (nx - 1) * h
    shots = [width_m * (i + 1) / (a.shots + 1) for i in range(a.shots)]
    receivers = list(np.arange(0.0, width_m + 1e-6, h))
    vp0 = smoothed(np.pad(vp, nbl, mode="edge"), h, a.smooth)
    np.save(os.path.join(work, "vp.npy"), vp)
    np.save(os.path.join(work, "vp_smooth.npy"), vp0[nbl:-nbl, nbl:-nbl])
    # taihu: the model padded by nbl on every side, z fastest on disk.
    padded = np.pad(vp, nbl, mode="edge").astype("<f4")
    padded.tofile(os.path.join(work, "vp_padded.bin"))
    off = nbl * h
    env = dict(os.environ, OMP_NUM_THREADS=str(a.threads), DEVITO_LANGUAGE="openmp")
    env.pop("OMP_PROC_BIND", None)
    print(f"model: {label}, {nx}x{nz} at {h:g} m + {nbl}-point layers = {nx + 2 * nbl}x{nz + 2 * nbl} grid; "
          f"order 8, dt {dt * 1e3:.3f} ms, {nt} steps ({a.tmax:g} s), f0 {a.f0:g} Hz, {len(shots)} shots, "
          f"{len(receivers)} receivers, {a.threads} threads; workdir {work}", flush=True)

    def taihu_cmd(tag, budget):
        cmd = [a.taihu, "migrate", "--vp", os.path.join(work, "vp_padded.bin"),
               "--shape", f"{nx + 2 * nbl}x{nz + 2 * nbl}", "--order", "z,x", "--spacing", f"{h:g}",
               "--space-order", "8", "--f0", f"{a.f0:g}", "--tmax", f"{(nt - 1) * dt:.6f}", "--dt", f"{dt:.6f}",
               "--boundary", "sponge", "--width", str(nbl), "--smooth", f"{a.smooth:g}",
               "--shots", ",".join(f"{s + off:.3f}" for s in shots),
               "--receivers", f"{off:.3f}:{off + width_m:.3f}:{h:g}",
               "--source-depth", f"{a.depth + off:g}", "--receiver-depth", f"{a.depth + off:g}",
               "--dir", os.path.join(work, tag), "--no-png"]
        if budget:
            cmd += ["--checkpoint-memory", f"{budget:g}"]
        return cmd

    rows = []
    runs = [("taihu_all", 0)] + ([("taihu_budget", a.budget)] if a.budget else [])
    for tag, budget in runs:
        log = os.path.join(work, tag + ".log")
        sec, rss, rc = run_child(taihu_cmd(tag, budget), env, log)
        text = open(log).read()
        if rc != 0:
            sys.exit(f"taihu-seismic failed ({rc}), see {log}:\n{text[-2000:]}")
        factor = parse_after(text, "grid steps (", " x the")
        plan = [l.split("source wavefield: ", 1)[1] for l in text.splitlines() if "source wavefield: " in l]
        per_shot = [float(l.split(" migrated on rank ", 1)[1].split(" in ", 1)[1].split(" s;", 1)[0])
                    for l in text.splitlines() if " migrated on rank " in l]
        rows.append(dict(side=f"taihu ({'all snapshots' if not budget else f'{budget:g} MiB budget'})",
                         seconds=sec, rss=rss, factor=factor, per_shot=per_shot, note=plan[0] if plan else ""))
    spec = dict(vp=os.path.join(work, "vp.npy"), vp_smooth=os.path.join(work, "vp_smooth.npy"), spacing=h, nbl=nbl,
                dt=dt, nt=nt, f0=a.f0, shots=shots, receivers=receivers, depth=a.depth,
                image_out=os.path.join(work, "devito_image.npy"))
    json.dump(spec, open(os.path.join(work, "spec.json"), "w"))
    log = os.path.join(work, "devito.log")
    sec, rss, rc = run_child([sys.executable, os.path.abspath(__file__), "--devito-child",
                              os.path.join(work, "spec.json")], env, log)
    text = open(log).read()
    if rc != 0:
        sys.exit(f"Devito child failed ({rc}), see {log}:\n{text[-3000:]}")
    dj = json.loads([l for l in text.splitlines() if l.startswith("{")][-1])
    rows.append(dict(side=f"Devito {dj['devito']} (RTM tutorial, save=True)", seconds=sec, rss=rss, factor=3.0,
                     per_shot=dj["per_shot"],
                     note=f"first shot includes JIT (~{dj['compile_estimate']:.1f} s); "
                          f"saved wavefield {dj['saved_wavefield_mib']:.0f} MiB per shot"))

    # Same data migrated? Correlate the raw images below the acquisition + one wavelength.
    ti = np.load(os.path.join(work, "taihu_all", "image_xcorr.npy"))  # (nz, nx) of the padded grid
    ti = ti.T[nbl:-nbl, nbl:-nbl] if ti.shape[0] == nz + 2 * nbl else ti[nbl:-nbl, nbl:-nbl]
    di = np.load(spec["image_out"])
    below = int((a.depth + float(vp.min()) / a.f0) / h) + 1
    x, y = ti[:, below:].ravel().astype(np.float64), di[:, below:].ravel().astype(np.float64)
    corr = float(np.dot(x, y) / (np.linalg.norm(x) * np.linalg.norm(y) + 1e-300))

    def steady(r):  # the fastest shot after the first (Devito JIT-compiles in it; the host is shared)
        t = r["per_shot"][1:] or r["per_shot"]
        return float(min(t))

    print("\n| side | whole run (s) | per shot after the first, median (s) | peak memory (MiB) "
          "| grid steps / (shots x nt) | notes |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['side']} | {r['seconds']:.1f} | {steady(r):.2f} | {r['rss']:.0f} | {r['factor']:.2f} | {r['note']} |")
    dev = rows[-1]
    for r in rows[:-1]:
        print(f"{r['side']}: whole run {dev['seconds'] / r['seconds']:.2f}x, per shot {steady(dev) / steady(r):.2f}x "
              f"as fast as Devito ({'faster' if steady(r) < steady(dev) else 'slower'} per shot), "
              f"{r['rss'] / dev['rss']:.2f}x its peak memory")
    print(f"image check: correlation of taihu's image_xcorr with Devito's image below {below * h:g} m: {corr:.3f}")
    return 0


def devito_dt(vp, h, nbl):
    """Devito's critical dt for this model (its Model, space order 8), in seconds, rounded
    down to whole microseconds."""
    code = ("import sys, types, json, numpy as np\n"
            "m = types.ModuleType('pytest')\n"
            "class I:\n"
            "  def __getattr__(s, n): return s\n"
            "  def __call__(s, *a, **k): return a[0] if len(a) == 1 and callable(a[0]) and not k else s\n"
            "m.mark = I(); sys.modules['pytest'] = m\n"
            "from examples.seismic import Model\n"
            f"vp = np.full(({vp.shape[0]}, {vp.shape[1]}), {float(vp.max()) / 1000.0!r})\n"
            f"print(Model(vp=vp, origin=(0., 0.), spacing=({h!r}, {h!r}), shape=vp.shape, space_order=8, "
            f"nbl={nbl}, bcs='damp').critical_dt)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    dt_ms = float(out.strip().splitlines()[-1])
    return int(dt_ms * 1e3) * 1e-6


def parse_after(text, start, end):
    for line in text.splitlines():
        if start in line and end in line:
            return float(line.split(start, 1)[1].split(end, 1)[0])
    return float("nan")


if __name__ == "__main__":
    sys.exit(main())
