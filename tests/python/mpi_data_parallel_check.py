#!/usr/bin/env python3
"""Data-parallel training from Python under mpiexec -n 2, checked against taihu-caffe:

1. `mpiexec -n 2 taihu-caffe train` on a solver (synthetic digits, FileData shuffled,
   per-rank batch 16, a TEST net every 10 iterations) -> its final .caffemodel and rank 0's
   per-iteration losses;
2. `mpiexec -n 2 python3 mpi_train_rank.py` on the same solver (get_solver, step(1) loop,
   snapshot(), solve()): both ranks report 2 ranks and bitwise identical parameters; rank
   0's losses are the CLI's; the final .caffemodel has the CLI's bytes; only rank 0 logs
   info lines and writes each snapshot once; snapshot() gives both ranks rank 0's path;
3. one plain python3 process with the whole batch (32): its per-iteration loss is the
   mean of the two ranks' and its final weights match the parallel run's;
4. an exception on rank 1 ends the whole job with an error (MPI_Abort), no hang.
Conv algorithms come from dnn's heuristic (TAIHU_CAFFE_CONV_TUNE=0) so that runs of
different processes compute alike. Usage: mpi_data_parallel_check.py <taihu-caffe>
<mpiexec> [mpiexec flags...]. PYTHONPATH must hold the caffe package.
"""
import json
import os
import re
import subprocess
import sys
import tempfile

tool, mpiexec, flags = sys.argv[1], sys.argv[2], sys.argv[3:]
if not os.access(mpiexec, os.X_OK):
    print("skipped: no MPI launcher at %s (install openmpi-bin)" % mpiexec)
    sys.exit(77)
RANK_SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "mpi_train_rank.py")
ITERS, STEPS = 30, 10

NET = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "../caffe_port/small_digits_net.prototxt"), encoding="utf-8").read()
SOLVER = """net: '{net}'
test_iter: 2
test_interval: 10
base_lr: 0.02
momentum: 0.9
weight_decay: 0.0005
lr_policy: 'fixed'
display: 1
max_iter: %d
snapshot: 0
snapshot_prefix: '{prefix}'
random_seed: 5
""" % ITERS


def run(cmd, cwd, timeout=180):
    env = dict(os.environ, TAIHU_CAFFE_CONV_TUNE="0")
    try:
        p = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           timeout=timeout, env=env)
    except subprocess.TimeoutExpired as e:
        fail("%s did not finish in %d s (a rank left waiting?)" % (" ".join(cmd), timeout),
             (e.stdout or b"").decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or ""))
    return p.returncode, p.stdout


def fail(msg, log=""):
    print("FAIL: " + msg)
    if log:
        print(log[-4000:])
    sys.exit(1)


def cli_losses(log):
    """Rank 0's loss per iteration: 'Iteration N (...' then 'Train net output #0: loss = L'."""
    losses, it = {}, None
    for line in log.splitlines():
        m = re.search(r"\] Iteration (\d+) \(", line)
        if m:
            it = int(m.group(1))
        m = re.search(r"Train net output #0: loss = ([-\d.eE+]+)", line)
        if m and it is not None:
            losses[it] = float(m.group(1))
    return [losses[i] for i in sorted(losses)]


def weights(path):
    from caffe.proto import caffe_pb2
    net = caffe_pb2.NetParameter()
    with open(path, "rb") as f:
        net.ParseFromString(f.read())
    return [v for layer in net.layer for blob in layer.blobs for v in blob.data]


def close(a, b, tol):
    return abs(a - b) <= tol * max(1.0, abs(b))


with tempfile.TemporaryDirectory() as d:
    rc, log = run([tool, "make_digits", "d-img.gz", "d-lab.gz", "--count=2000", "--seed=2"], d)
    if rc != 0:
        fail("make_digits", log)
    for name, batch in (("net.prototxt", 16), ("whole.prototxt", 32)):
        with open(os.path.join(d, name), "w") as f:
            f.write(NET.replace("BATCH", str(batch)))
    for name, net, prefix in (("cli.prototxt", "net.prototxt", "snap/cli"), ("py.prototxt", "net.prototxt", "snap/py"),
                              ("one.prototxt", "whole.prototxt", "snap/one"), ("bad.prototxt", "net.prototxt", "snap/bad")):
        with open(os.path.join(d, name), "w") as f:
            f.write(SOLVER.format(net=net, prefix=prefix))
    os.makedirs(os.path.join(d, "snap"))
    mpi = [mpiexec, "-n", "2"] + flags
    final = "snap/%%s_iter_%d.caffemodel" % ITERS

    # 1. The CLI's data-parallel run.
    rc, log = run(mpi + [tool, "train", "--solver=cli.prototxt"], d)
    if rc != 0 or "Data parallel: 2 ranks" not in log:
        fail("mpiexec -n 2 taihu-caffe train exited %d" % rc, log)
    expected_losses = cli_losses(log)
    if len(expected_losses) != ITERS:
        fail("expected %d loss lines from the CLI, found %d" % (ITERS, len(expected_losses)), log)

    # 2. The same solver from Python under mpiexec.
    rc, log = run(mpi + [sys.executable, RANK_SCRIPT, "py.prototxt", "py", "--steps", str(STEPS)], d)
    if rc != 0:
        fail("mpiexec -n 2 python3 mpi_train_rank.py exited %d" % rc, log)
    ranks = []
    for r in (0, 1):
        with open(os.path.join(d, "py.%d.json" % r)) as f:
            ranks.append(json.load(f))
    if [x["count"] for x in ranks] != [2, 2] or [x["rank"] for x in ranks] != [0, 1]:
        fail("solver_count()/solver_rank() under mpiexec -n 2: %s" % [(x["rank"], x["count"]) for x in ranks], log)
    if any(x["iter"] != ITERS for x in ranks):
        fail("solve() must end at iteration %d on both ranks: %s" % (ITERS, [x["iter"] for x in ranks]), log)
    if ranks[0]["params_sha256"] != ranks[1]["params_sha256"]:
        fail("the ranks' parameters differ after training", log)
    if log.count("Data parallel: 2 ranks") != 1:
        fail("one 'Data parallel: 2 ranks' line expected (rank 0)", log)
    if re.search(r"^\[rank 1\] I", log, re.M):
        fail("rank 1 logged info lines", log)
    state = "snap/py_iter_%d.solverstate" % STEPS
    if [x["snapshot"] for x in ranks] != [state, state] or not os.path.exists(os.path.join(d, state)):
        fail("snapshot() must write %s (rank 0) and return its path on both ranks: %s"
             % (state, [x["snapshot"] for x in ranks]), log)
    if log.count("Snapshotting to binary proto file") != 2:
        fail("two snapshots (snapshot() and solve()'s final one), each written once by rank 0", log)
    got = ranks[0]["losses"]
    for i, (a, b) in enumerate(zip(got, expected_losses)):
        if not close(a, b, 2e-5):  # the CLI prints 6 significant digits
            fail("iteration %d: rank 0's loss %.7g in Python, %.7g from taihu-caffe train" % (i, a, b), log)
    with open(os.path.join(d, final % "py"), "rb") as a, open(os.path.join(d, final % "cli"), "rb") as b:
        if a.read() != b.read():
            fail("Python's final weights differ from taihu-caffe train's", log)

    # 3. One process with the whole batch (no launcher).
    rc, log = run([sys.executable, RANK_SCRIPT, "one.prototxt", "one", "--steps", str(STEPS)], d)
    if rc != 0:
        fail("one-process run exited %d" % rc, log)
    with open(os.path.join(d, "one.0.json")) as f:
        one = json.load(f)
    if one["count"] != 1 or "Data parallel" in log:
        fail("a plain python3 run must be one process (solver_count() %d)" % one["count"], log)
    for i in range(STEPS):
        mean = 0.5 * (ranks[0]["losses"][i] + ranks[1]["losses"][i])
        if not close(one["losses"][i], mean, 1e-4):
            fail("iteration %d: one process's loss %.7g, the ranks' mean %.7g" % (i, one["losses"][i], mean))
    w_one, w_dp = weights(os.path.join(d, final % "one")), weights(os.path.join(d, final % "py"))
    w_start = weights(os.path.join(d, "snap/py_iter_%d.caffemodel" % STEPS))
    moved = max(abs(a - b) for a, b in zip(w_dp, w_start))
    diff = max(abs(a - b) for a, b in zip(w_dp, w_one))
    scale = max(1.0, max(abs(v) for v in w_one))
    if len(w_one) != len(w_dp) or moved < 1e-2 or diff > 1e-4 * scale:
        fail("parallel vs one-process weights: max difference %.3g (scale %.3g), moved %.3g since iteration %d"
             % (diff, scale, moved, STEPS))

    # 4. An exception on one rank ends the job (MPI_Abort), never a hang.
    rc, log = run(mpi + [sys.executable, RANK_SCRIPT, "bad.prototxt", "bad", "--steps", "3", "--fail-rank", "1"],
                  d, timeout=60)
    if rc == 0 or "rank 1 fails on purpose" not in log:
        fail("an exception on rank 1 must end the job with an error (rc %d)" % rc, log)

print("OK: 2-rank Python run = taihu-caffe train (losses, final weights bit for bit); ranks identical; "
      "one process with the whole batch: max weight difference %.2g" % diff)
