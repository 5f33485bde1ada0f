#!/usr/bin/env python3
"""taihu-tune as a user runs it on hostile input (one CASE per ctest entry):

  tune_cli_check.py CASE TAIHU_TUNE DSL_DIR

  deep_expr    10,000 nested parentheses: file:line:column error, exit 2 (was SIGSEGV);
               a flat sum of 20,000 terms tunes.
  huge_shape   --shape M=N=K=2^32: error naming the tensor and --shape, exit 2, no log
               record (was exit 0 and "ok" at 3.35e26 GFLOP/s).
  torn_log     a log whose last line lacks its newline is resumed and then read by
               `best`; a torn last line is skipped with a warning naming file:line.
  emit_full    `emit` under a 1 KiB file-size limit: exit 2, the OS's reason, no
               *.tmp.PID left (SIGXFSZ ignored, so the write fails with EFBIG); the
               same for `--format=halide-aot` (was SIGABRT and an empty .a).
  budget       --budget 0s / nan / -5m / inf: rejected naming the flag and value.
  reproduce    a 30 s tuning run of gemm 256^3 on 1 thread, then `best` (which reports
               the confirmed median with its IQR and range) and `time` (a fresh process
               rebuilding that record and re-timing it, median of 20 rounds): the two
               agree within 10%. Re-timed up to 3 times; the closest ratio counts (the
               host's other load moves single runs).
  reproduce_conv  the same for a 1x1 conv2d on one thread (the ocvec templates lead the
               search; Winograd / ocvec kernels run on autotune's own pool), with the
               re-timing process confined to one CPU: a kernel that used more threads
               than --threads in the search reads slow there; unconfined, `time` must
               report at most 1.5 cores used.
"""
import json
import re
import os
import resource
import signal
import subprocess
import sys
import tempfile


def run(args, **kw):
    p = subprocess.run(args, capture_output=True, text=True, timeout=300, **kw)
    return p.returncode, p.stdout, p.stderr


def expect(cond, what, out=""):
    if not cond:
        sys.exit(f"FAIL: {what}\n{out}")


def records(path):
    with open(path) as f:
        return [l for l in f.read().split("\n") if l.strip()]


def case_deep_expr(tune, dsl, tmp):
    head = "operator deep\ndim N\ninput A : f32[N]\noutput O : f32[N]\ncompute {\n  O[i] = "
    deep = os.path.join(tmp, "deep.tdsl")
    with open(deep, "w") as f:
        f.write(head + "(" * 10000 + "A[i]" + ")" * 10000 + "\n}\n")
    rc, out, err = run([tune, "run", deep, "--shape", "N=16", "--trials", "1"])
    expect(rc == 2, f"deep: exit {rc}, want 2", err)
    expect(f"{deep}:6:266: expression nested deeper than 256" in err, "deep: no positioned error", err)
    flat = os.path.join(tmp, "flat.tdsl")
    with open(flat, "w") as f:
        f.write(head + "A[i]" + "".join((" + " if k % 2 else " - ") + str(k) for k in range(1, 20000)) + "\n}\n")
    rc, out, err = run([tune, "run", flat, "--shape", "N=64", "--trials", "1", "--budget", "60s", "--backend", "cpp"])
    expect(rc == 0 and "best " in out, f"flat sum: exit {rc}", out + err)


def case_huge_shape(tune, dsl, tmp):
    log = os.path.join(tmp, "big.jsonl")
    rc, out, err = run([tune, "run", os.path.join(dsl, "gemm.tdsl"), "--shape", "M=4294967296,N=4294967296,K=4294967296",
                        "--trials", "2", "--log", log])
    expect(rc == 2, f"huge: exit {rc}, want 2", out + err)
    expect("tensor 'A' of 4294967296 x 4294967296 f32 elements is larger than 2^63 bytes (--shape M=4294967296" in err,
           "huge: no error naming the tensor and --shape", err)
    expect(not os.path.exists(log) or not records(log), "huge: a record was logged")
    rc, out, err = run([tune, "run", os.path.join(dsl, "gemm.tdsl"), "--shape", "M=16777216,N=16777216,K=16777216", "--trials", "1"])
    expect(rc == 2 and "--shape M=16777216,N=16777216,K=16777216: the tensors need" in err and "GiB of memory is available" in err,
           f"beyond memory: exit {rc}", err)


def case_torn_log(tune, dsl, tmp):
    log = os.path.join(tmp, "t.jsonl")
    gemm = os.path.join(dsl, "gemm.tdsl")
    cmd = [tune, "run", gemm, "--shape", "M=16,N=16,K=16", "--trials", "1", "--budget", "60s", "--log", log]
    rc, out, err = run(cmd)
    expect(rc == 0 and len(records(log)) == 1, f"first run: exit {rc}", out + err)
    first = records(log)[0]
    with open(log, "rb+") as f:  # a whole record without its final newline
        f.truncate(os.path.getsize(log) - 1)
    rc, out, err = run(cmd)
    expect(rc == 0 and "1 resumed from the log" in out, f"resume: exit {rc}", out + err)
    with open(log) as f:
        text = f.read()
    # The resumed run appends its trial and, where it has two distinct candidates, a
    # confirmed record: each on a line of its own, the old record left whole.
    lines = text.split("\n")
    expect(text.endswith("\n") and lines[0] == first and len(records(log)) >= 2 and
           all(json.loads(l).get("op") == "gemm" for l in lines if l), "resume glued the record onto the last line", text)
    rc, out, err = run([tune, "best", log])
    expect(rc == 0 and "GFLOP/s" in out and "warning" not in err, f"best: exit {rc}", out + err)
    last = len(records(log))
    with open(log, "rb+") as f:  # torn mid-record, as a full disk leaves it
        f.truncate(os.path.getsize(log) - 30)
    rc, out, err = run([tune, "best", log])
    expect(rc == 0 and "GFLOP/s" in out, f"best on a torn log: exit {rc}", out + err)
    expect(f"warning: {log}:{last}: torn last line" in err, "best: no warning naming file:line", err)


def case_emit_full(tune, dsl, tmp):
    out_dir = os.path.join(tmp, "emit")
    os.mkdir(out_dir)
    target = os.path.join(out_dir, "g.cpp")

    def small_disk():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (1024, 1024))

    rc, out, err = run([tune, "emit", os.path.join(dsl, "gemm.tdsl"), "--shape", "M=64,N=64,K=64", "--format=cpp", "--out", target],
                       preexec_fn=small_disk)
    expect(rc == 2, f"emit: exit {rc}, want 2", out + err)
    expect(f"cannot write '{target}': File too large" in err, "emit: no strerror", err)
    expect(os.listdir(out_dir) == [], f"emit left {os.listdir(out_dir)}")
    rc, out, err = run([tune, "emit", os.path.join(dsl, "gemm.tdsl"), "--shape", "M=64,N=64,K=64", "--format=cpp", "--out", target])
    expect(rc == 0 and os.listdir(out_dir) == ["g.cpp"], f"emit without a limit: exit {rc}", out + err)
    # The Halide library: LLVM aborts the process on a failed write, so the compile runs
    # in a child process into a temporary folder (it was SIGABRT and an empty .a).
    aot_dir = os.path.join(tmp, "aot")
    aot = [tune, "emit", os.path.join(dsl, "gemm.tdsl"), "--shape", "M=64,N=64,K=64", "--format=halide-aot", "--out", aot_dir,
           "--name", "g"]
    rc, out, err = run(aot, preexec_fn=small_disk)
    if "built without Halide" in err:
        return
    expect(rc == 2, f"emit halide-aot: exit {rc}, want 2", out + err)
    expect(f"cannot write the Halide library '{aot_dir}/g.a': File too large" in err, "emit halide-aot: no strerror", err)
    expect(os.listdir(aot_dir) == [], f"emit halide-aot left {os.listdir(aot_dir)}")
    rc, out, err = run(aot)
    expect(rc == 0 and sorted(os.listdir(aot_dir)) == ["g.a", "g.h"], f"emit halide-aot without a limit: exit {rc}, "
           f"{os.listdir(aot_dir)}", out + err)


def case_budget(tune, dsl, tmp):
    for bad in ["0s", "nan", "-5m", "inf", "0"]:
        rc, out, err = run([tune, "run", os.path.join(dsl, "gemm.tdsl"), "--shape", "M=8,N=8,K=8", "--budget", bad])
        expect(rc == 2 and f"--budget: '{bad}' must be a positive, finite duration" in err, f"--budget {bad}: exit {rc}", err)


def reproduce_attempt(tune, gemm, shape, log, budget="30s", time_kw=None):
    """Tunes into a fresh log, then re-times best's record in fresh processes (up to 3)."""
    rc, out, err = run([tune, "run", gemm] + shape + ["--budget", budget, "--log", log])
    expect(rc == 0 and "best " in out, f"run: exit {rc}", out + err)
    rc, out, err = run([tune, "best", log])
    m = re.search(r"halide ([0-9.]+) ms .*\(median of (\d+) rounds, IQR ([0-9.]+)%, ([0-9.]+)-([0-9.]+) ms\)", out)
    expect(rc == 0 and m, f"best: exit {rc}, no confirmed median with its spread", out + err)
    best_ms = float(m.group(1))
    expect(float(m.group(4)) <= best_ms <= float(m.group(5)), "best: the median lies outside its range", out)
    ratios = []
    for _ in range(3):
        rc, out, err = run([tune, "time", gemm] + shape + ["--log", log, "--rounds", "20"], **(time_kw or {}))
        t = re.search(r"fresh +([0-9.]+) ms \(median of \d+ rounds", out)
        expect(rc == 0 and t, f"time: exit {rc}", out + err)
        ratios.append(float(t.group(1)) / best_ms)
        if abs(ratios[-1] - 1) <= 0.10:
            break
    print(f"best {best_ms:.4f} ms; fresh-process / best: " + ", ".join(f"{r:.3f}" for r in ratios))
    return min(abs(r - 1) for r in ratios) <= 0.10, out


def case_reproduce(tune, dsl, tmp):
    # One thread: on a 2-core host a 2-thread timing also measures whatever else the host
    # runs (a suite run saw fresh/logged 1.9x in both attempts, then 1.0x alone); the
    # child-on-one-core bias is bench_autotune.child_cpus's to catch. Two independent
    # attempts: a load change between the search and the re-timing can spoil one pair;
    # a systematic bias (the 25-45% the issue found) spoils both.
    gemm = os.path.join(dsl, "gemm.tdsl")
    shape = ["--shape", "M=256,N=256,K=256", "--threads", "1"]
    for attempt in range(2):
        ok, out = reproduce_attempt(tune, gemm, shape, os.path.join(tmp, f"r{attempt}.jsonl"))
        if ok:
            return
    expect(False, "the fresh process does not reproduce best's time within 10% in two attempts", out)


def case_reproduce_conv(tune, dsl, tmp):
    # A 1x1 conv, where the ocvec kernels (autotune's own task pool) lead the search, on
    # one thread; the re-timing process is confined to one CPU. A kernel that ran on
    # more threads than --threads during the search (they read the process default, 2
    # here: the search said 0.48 ms for ResNet-50 res2 1x1, one thread re-timed 0.84)
    # reads ~2x slower there.
    conv = os.path.join(dsl, "conv2d.tdsl")
    shape = ["--shape", "N=1,C=128,H=28,W=28,KO=64,R=1,S=1,P=0", "--threads", "1"]
    cpu = min(os.sched_getaffinity(0))
    one_cpu = {"preexec_fn": lambda: os.sched_setaffinity(0, {cpu})}
    for attempt in range(2):
        log = os.path.join(tmp, f"c{attempt}.jsonl")
        ok, out = reproduce_attempt(tune, conv, shape, log, budget="20s", time_kw=one_cpu)
        rc, best, err = run([tune, "best", log])
        print("best record: " + " ".join(re.findall(r"algorithm=\S+|ocvec \w=\d+", best)))
        # Unconfined, the kernel must still use one core (CPU time / wall time; another
        # process on the host only lowers it).
        rc, t_out, err = run([tune, "time", conv] + shape + ["--log", log, "--rounds", "4"])
        cores = re.search(r"; ([0-9.]+) cores used\)", t_out)
        expect(rc == 0 and cores, f"time: exit {rc}, no cores used", t_out + err)
        expect(float(cores.group(1)) <= 1.5, f"a --threads 1 kernel used {cores.group(1)} cores", t_out + err)
        if ok:
            return
    expect(False, "the conv's fresh one-CPU process does not reproduce best's time within 10% in two attempts", out)


def main():
    case, tune, dsl = sys.argv[1:4]
    with tempfile.TemporaryDirectory(prefix="taihu-tune-cli-") as tmp:
        globals()["case_" + case](tune, dsl, tmp)
    print(f"{case}: ok")


if __name__ == "__main__":
    main()
