#!/usr/bin/env python3
"""bench_pycaffe: LeNet training per iteration driven from Python, against the same
solver run by `taihu-caffe train` and against the same loop in PyTorch.

    PYTHONPATH=build/python flock /tmp/taihu-bench.lock \\
        /usr/bin/python3 bench/caffe_port/bench_pycaffe.py [--threads 1,2] [--iters 400] [--repeats 3]

Data: examples/caffe's LeNet (batch 64, lr_policy inv, momentum, weight decay) on an
LMDB of 8000 synthetic digits (taihu-caffe make_digits + convert_mnist); testing and
snapshots off; display every 100 iterations in both taihu runs (same logging work).
  - taihu-caffe train: wall time between the glog timestamps of the display lines at
    iteration WARMUP and WARMUP+ITERS (a child process);
  - Python: caffe.SGDSolver(...).step(WARMUP), then ITERS calls of solver.step(1) timed
    with perf_counter, in this process;
  - PyTorch: bench/caffe_port/anchors/torch_train.py lenet 64 (the anchors venv; the
    same net, SGD settings and a zero_grad/forward/backward/step loop in Python, on
    random tensors, i.e. without data loading) in a child.
Every run gets TAIHU_NUM_THREADS / OMP_NUM_THREADS = T and OMP_PROC_BIND=true; the
children get back this process's full CPU set before exec (OpenMP pins the calling
thread). Each figure is the best (lowest) ms/iteration of --repeats runs, taken in
turn. Prints a table and one JSON line.
"""
import argparse
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("TAIHU_BUILD_DIR", os.path.join(ROOT, "build"))
TOOL = os.path.join(BUILD, "bin", "taihu-caffe")
CPUS = sorted(os.sched_getaffinity(0))  # before any OpenMP runtime pins this thread


def cpu_name():
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor()


def child_env(threads):
    env = dict(os.environ)
    env.update(TAIHU_NUM_THREADS=str(threads), OMP_NUM_THREADS=str(threads), OMP_PROC_BIND="true")
    return env


def widen():  # runs in the child before exec
    os.sched_setaffinity(0, CPUS)


def prepare(work, warmup, iters):
    run = lambda *a: subprocess.run([TOOL] + list(a), cwd=work, check=True,  # noqa: E731
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    run("make_digits", "img.gz", "lab.gz", "--count=8000", "--seed=1")
    run("convert_mnist", "img.gz", "lab.gz", "mnist_train_lmdb", "--count=8000")
    shutil.copy(os.path.join(ROOT, "examples", "caffe", "lenet_train_test.prototxt"), work)
    with open(os.path.join(ROOT, "examples", "caffe", "lenet_solver.prototxt")) as f:
        solver = f.read()
    # Train only (without test_iter no test net is built), no snapshots, display every 100.
    solver = re.sub(r"(?m)^(test_iter|test_interval|snapshot|snapshot_prefix|max_iter|display|solver_mode):.*$",
                    "", solver)
    solver += "\ntest_interval: 0\nmax_iter: %d\ndisplay: 100\nsnapshot: 0\nsnapshot_prefix: \"snap/lenet\"\n" \
              "snapshot_after_train: false\nsolver_mode: CPU\nrandom_seed: 1\n" % (warmup + iters + 1)
    with open(os.path.join(work, "solver.prototxt"), "w") as f:
        f.write(solver)
    os.makedirs(os.path.join(work, "snap"), exist_ok=True)


def glog_seconds(line):
    t = re.match(r"[IWE]\d{4} (\d\d):(\d\d):(\d\d\.\d+)", line)
    return int(t.group(1)) * 3600 + int(t.group(2)) * 60 + float(t.group(3))


def time_cli(work, threads, warmup, iters):
    p = subprocess.run([TOOL, "train", "--solver=solver.prototxt"], cwd=work, env=child_env(threads),
                       preexec_fn=widen, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, check=True)
    at = {}
    for line in p.stdout.splitlines():
        m = re.search(r"\] Iteration (\d+) \(", line)
        if m:
            at[int(m.group(1))] = glog_seconds(line)
    return (at[warmup + iters] - at[warmup]) / iters * 1e3


def time_python(caffe, work, warmup, iters):
    cwd = os.getcwd()
    os.chdir(work)
    saved = os.dup(2)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 2)  # the solver's glog lines
    try:
        solver = caffe.SGDSolver("solver.prototxt")
        solver.step(warmup)
        t0 = time.perf_counter()
        for _ in range(iters):
            solver.step(1)
        return (time.perf_counter() - t0) / iters * 1e3
    finally:
        os.dup2(saved, 2)
        os.close(devnull)
        os.close(saved)
        os.chdir(cwd)


def anchors_python():
    env_file = os.path.join(BUILD, "anchors", "anchors.env")
    settings = {}
    if os.path.isfile(env_file):
        for line in open(env_file):
            if "=" in line:
                k, v = line.strip().split("=", 1)
                settings[k] = v
    if not settings.get("TAIHU_ANCHOR_TORCH"):
        return None, settings
    return settings.get("TAIHU_ANCHORS_PYTHON"), settings


def time_torch(python, settings, threads, warmup, iters):
    env = child_env(threads)
    lib = settings.get("TAIHU_ANCHORS_LIB")
    if lib:
        env["LD_LIBRARY_PATH"] = lib + (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
    script = os.path.join(ROOT, "bench", "caffe_port", "anchors", "torch_train.py")
    p = subprocess.run([python, script, "lenet", "64", str(threads), str(warmup), str(iters)], env=env,
                       preexec_fn=widen, stdout=subprocess.PIPE, text=True, check=True)
    out = json.loads(p.stdout.strip().splitlines()[-1])
    return sum(out["iter_ms"]) / len(out["iter_ms"]), out.get("torch", "?")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--warmup", type=int, default=100)
    ap.add_argument("--iters", type=int, default=400)
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args()
    if a.iters % 100 or a.warmup % 100 or a.warmup < 100:
        ap.error("--warmup and --iters must be multiples of 100 (the display interval), warmup >= 100")
    if not os.access(TOOL, os.X_OK):
        sys.exit("bench_pycaffe: %s not built" % TOOL)
    threads_list = [int(t) for t in a.threads.split(",")]
    torch_python, settings = anchors_python()
    if torch_python is None:
        print("bench_pycaffe: anchor PyTorch (torch) not installed: run scripts/anchors (no PyTorch column)",
              file=sys.stderr)
    # This process's own taihu threads are fixed when caffe loads; rows run in separate
    # interpreters per thread count (re-exec with --threads T).
    if len(threads_list) > 1:
        rows = []
        for t in threads_list:
            p = subprocess.run([sys.executable, os.path.abspath(__file__), "--threads", str(t), "--warmup",
                                str(a.warmup), "--iters", str(a.iters), "--repeats", str(a.repeats)],
                               env=child_env(t), preexec_fn=widen, stdout=subprocess.PIPE, text=True, check=True)
            rows.append(json.loads(p.stdout.strip().splitlines()[-1]))
    else:
        t = threads_list[0]
        os.environ.update(child_env(t))
        import caffe  # after the thread settings: taihu reads them when it loads
        cli, py, th = [], [], []
        torch_version = None
        with tempfile.TemporaryDirectory() as work:
            prepare(work, a.warmup, a.iters)
            for _ in range(a.repeats):
                cli.append(time_cli(work, t, a.warmup, a.iters))
                py.append(time_python(caffe, work, a.warmup, a.iters))
                if torch_python:
                    ms, torch_version = time_torch(torch_python, settings, t, a.warmup, a.iters)
                    th.append(ms)
        row = {"threads": t, "cli_ms": min(cli), "python_ms": min(py), "torch_ms": min(th) if th else None,
               "torch": torch_version, "cli_all": cli, "python_all": py, "torch_all": th}
        print(json.dumps(row))
        return
    print("bench_pycaffe: LeNet batch 64, %d timed iterations after %d, best of %d; CPU: %s (%d CPUs)"
          % (a.iters, a.warmup, a.repeats, cpu_name(), len(CPUS)))
    print("%-7s %12s %12s %14s %12s %16s" % ("threads", "cli ms/it", "python ms/it", "python vs cli",
                                              "torch ms/it", "torch/python"))
    for r in rows:
        over = (r["python_ms"] / r["cli_ms"] - 1) * 100
        tp = "%.2fx" % (r["torch_ms"] / r["python_ms"]) if r["torch_ms"] else "-"
        print("%-7d %12.2f %12.2f %+13.1f%% %12s %16s" % (r["threads"], r["cli_ms"], r["python_ms"], over,
                                                          "%.2f" % r["torch_ms"] if r["torch_ms"] else "-", tp))
    print(json.dumps({"cpu": cpu_name(), "rows": rows}))


if __name__ == "__main__":
    main()
