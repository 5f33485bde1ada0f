#!/usr/bin/env python3
"""taihu-caffe train under mpiexec -n 2, end to end: synthetic digits (IDX, FileData)
-> data-parallel training with snapshots -> only rank 0 logs info lines, tests and
writes the snapshot and curve; the weight check runs at each snapshot; the parallel
run reaches a low loss; resuming from a snapshot under mpiexec ends with the same
weights as the uninterrupted run; --compress=topk:0.05 also trains; a bad --compress value
fails on every rank with a clear message (no hang); a plain run (no mpiexec) still
works; SIGHUP / SIGINT sent to one rank snapshot / stop all ranks at the same iteration. Usage: cli_mpi_check.py <taihu-caffe> <mpiexec> [mpiexec flags...]"""
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

tool, mpiexec, flags = sys.argv[1], sys.argv[2], sys.argv[3:]

NET = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "small_digits_net.prototxt"), encoding="utf-8").read()
SOLVER = """net: 'net.prototxt'
test_iter: 4
test_interval: 60
base_lr: 0.01
momentum: 0.9
weight_decay: 0.0005
lr_policy: 'fixed'
display: 20
max_iter: 120
snapshot: 60
snapshot_prefix: '{prefix}'
random_seed: 5
"""


def run(cmd, cwd):
    p = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120)
    return p.returncode, p.stdout


def fail(msg, log=""):
    print("FAIL: " + msg)
    if log:
        print(log[-4000:])
    sys.exit(1)


def final_test_accuracy(log):
    acc = re.findall(r"Test net output #0: accuracy = ([\d.eE+-]+)", log)
    return float(acc[-1]) if acc else None


with tempfile.TemporaryDirectory() as d:
    rc, log = run([tool, "make_digits", "d-img.gz", "d-lab.gz", "--count=2000", "--seed=2"], d)
    if rc != 0:
        fail("make_digits", log)
    with open(os.path.join(d, "net.prototxt"), "w") as f:
        f.write(NET.replace("BATCH", "16"))
    for name, prefix in (("dp.prototxt", "snap/dp"), ("topk.prototxt", "snap/topk"), ("plain.prototxt", "snap/plain")):
        with open(os.path.join(d, name), "w") as f:
            f.write(SOLVER.format(prefix=prefix))
    os.makedirs(os.path.join(d, "snap"))
    mpi = [mpiexec, "-n", "2"] + flags

    rc, log = run(mpi + [tool, "train", "--solver=dp.prototxt"], d)
    if rc != 0:
        fail("data-parallel train exited %d" % rc, log)
    if log.count("Optimization Done.") != 1:
        fail("'Optimization Done.' must be logged once (rank 0 only)", log)
    if re.search(r"^\[rank 1\] I", log, re.M):
        fail("rank 1 logged info lines", log)
    if "Data parallel: 2 ranks" not in log:
        fail("no data-parallel line", log)
    if len(re.findall(r"output data size: 16,1,28,28 \(shard 0 of 2\)", log)) != 1:
        fail("rank 0's train layer must report shard 0 of 2", log)
    for it in (60, 120):
        for ext in ("caffemodel", "solverstate"):
            if not os.path.exists(os.path.join(d, "snap", "dp_iter_%d.%s" % (it, ext))):
                fail("snapshot dp_iter_%d.%s missing" % (it, ext), log)
    if log.count("Snapshotting to binary proto file") != 2:
        fail("snapshots must be written once each (rank 0 only)", log)
    acc_dp = acc = final_test_accuracy(log)
    if acc is None or acc < 0.5:
        fail("data-parallel accuracy %s after 120 iterations" % acc, log)

    # Resuming the parallel run from its iteration-60 snapshot ends with the same bytes.
    os.rename(os.path.join(d, "snap", "dp_iter_120.caffemodel"), os.path.join(d, "uninterrupted.caffemodel"))
    rc, log = run(mpi + [tool, "train", "--solver=dp.prototxt", "--snapshot=snap/dp_iter_60.solverstate"], d)
    if rc != 0:
        fail("resumed data-parallel train exited %d" % rc, log)
    with open(os.path.join(d, "uninterrupted.caffemodel"), "rb") as a, open(os.path.join(d, "snap", "dp_iter_120.caffemodel"), "rb") as b:
        if a.read() != b.read():
            fail("resumed run's iteration-120 weights differ from the uninterrupted run's", log)

    rc, log = run(mpi + [tool, "train", "--solver=topk.prototxt", "--compress=topk:0.05"], d)
    if rc != 0 or "compression top-k" not in log:
        fail("top-k compressed train (rc %d)" % rc, log)
    acc_topk = acc = final_test_accuracy(log)
    if acc is None or acc < 0.4:
        fail("top-k accuracy %s after 120 iterations" % acc, log)

    rc, log = run(mpi + [tool, "train", "--solver=dp.prototxt", "--compress=topk:7"], d)
    if rc == 0 or "--compress=topk:7" not in log:
        fail("a bad --compress must fail naming the flag (rc %d)" % rc, log)

    rc, log = run([tool, "train", "--solver=plain.prototxt", "--iterations=20"], d)
    if rc != 0 or "Data parallel" in log or "Optimization Done." not in log:
        fail("plain run (rc %d)" % rc, log)

    # Signals to one rank (here the last child of mpiexec) act on all ranks at the same
    # iteration: SIGHUP snapshots and training goes on, SIGINT stops with the final
    # snapshot and every rank exits 0 (no rank left waiting in a collective).
    with open(os.path.join(d, "sig.prototxt"), "w") as f:
        f.write(SOLVER.format(prefix="snap/sig").replace("max_iter: 120", "max_iter: 100000000")
                .replace("snapshot: 60", "snapshot: 0").replace("display: 20", "display: 1"))
    p = subprocess.Popen(mpi + [tool, "train", "--solver=sig.prototxt"], cwd=d, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True)
    lines = []

    def wait_for(pattern):
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            line = p.stdout.readline()
            if not line:
                break
            lines.append(line)
            m = re.search(pattern, line)
            if m:
                return m
        p.kill()
        fail("signals under mpiexec: no line matching %r" % pattern, "".join(lines))

    wait_for(r"Iteration 3 ")
    ranks = [int(x) for x in subprocess.run(["pgrep", "-P", str(p.pid)], capture_output=True, text=True).stdout.split()]
    if len(ranks) != 2:
        p.kill()
        fail("expected 2 ranks under mpiexec pid %d, found %s" % (p.pid, ranks))
    os.kill(ranks[-1], signal.SIGHUP)
    hup = int(wait_for(r"Snapshotting solver state to binary proto file snap/sig_iter_(\d+)\.solverstate").group(1))
    wait_for(r"Iteration %d " % (hup + 2))
    os.kill(ranks[-1], signal.SIGINT)
    out, _ = p.communicate(timeout=60)
    log = "".join(lines) + out
    stop = re.search(r"Stop requested at iteration (\d+)", log)
    if p.returncode != 0 or "Optimization stopped early." not in log or not stop:
        fail("SIGINT under mpiexec (rc %d)" % p.returncode, log)
    for it in (hup, int(stop.group(1))):
        if not os.path.exists(os.path.join(d, "snap", "sig_iter_%d.caffemodel" % it)):
            fail("no snapshot at iteration %d" % it, log)
print("OK: test accuracy after 120 iterations: dense %.3f, top-k 5%% %.3f" % (acc_dp, acc_topk))
