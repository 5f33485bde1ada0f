#!/usr/bin/env python3
"""Fault tests (issue 23 item 4): what a killed process or a full disk leaves behind.

  fault_check.py caffe_rank_kill <taihu-caffe> <mpiexec>
      kill -9 of one rank during `mpiexec -n 2 taihu-caffe train`: the job ends within
      10 s, non-zero, with a message naming the killed process; every snapshot under a
      final name is whole (it resumes).
  fault_check.py seismic_rank_kill <taihu-seismic> <mpiexec>
      kill -9 of one rank during a domain-decomposed `taihu-seismic run`: the job ends
      within 10 s, non-zero, with a message; no shots.segy under its final name.
  fault_check.py snapshot_kill_resume <taihu-caffe>
      SIGKILL the moment a snapshot starts being written, then --snapshot resume from
      the newest snapshot on disk: the loss sequence equals an uninterrupted run's.
  fault_check.py full_disk <taihu-caffe> <taihu-seismic> <taihu-tune> <dsl dir>
      each tool writing into a 64 KiB tmpfs (skipped, exit 77, where mount is not
      allowed): a clear error with the OS's reason, non-zero exit, no file under a final
      name that is truncated, no temporary file left.
  fault_check.py full_disk_data <taihu-caffe> [<taihu-allreduce-sim>]
      the same for the data tools: taihu-caffe convert_mnist (an LMDB directory) and
      make_digits (IDX .gz files), and taihu-allreduce-sim --png.
"""
import glob
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

SKIP = 77

NET = """name: "FaultNet"
layer { name: "mnist" type: "Data" top: "data" top: "label"
  transform_param { scale: 0.00390625 } data_param { source: "lmdb" batch_size: 16 backend: LMDB } }
layer { name: "ip1" type: "InnerProduct" bottom: "data" top: "ip1" inner_product_param { num_output: 32 weight_filler { type: "xavier" } } }
layer { name: "relu" type: "ReLU" bottom: "ip1" top: "ip1" }
layer { name: "ip2" type: "InnerProduct" bottom: "ip1" top: "ip2" inner_product_param { num_output: 10 weight_filler { type: "xavier" } } }
layer { name: "loss" type: "SoftmaxWithLoss" bottom: "ip2" bottom: "label" top: "loss" }
"""


def solver(max_iter, snapshot, prefix="snap/f"):
    return ('net: "net.prototxt"\nbase_lr: 0.01\nmomentum: 0.9\nlr_policy: "fixed"\ndisplay: 1\n'
            'max_iter: %d\nsnapshot: %d\nsnapshot_prefix: "%s"\nrandom_seed: 1\n' % (max_iter, snapshot, prefix))


def fail(what, log=""):
    sys.exit("FAILED: %s\n%s" % (what, log[-3000:] if log else ""))


def caffe_dir(tool, d, max_iter, snapshot, prefix="snap/f"):
    with open(os.path.join(d, "net.prototxt"), "w") as f:
        f.write(NET)
    with open(os.path.join(d, "solver.prototxt"), "w") as f:
        f.write(solver(max_iter, snapshot, prefix))
    os.makedirs(os.path.join(d, "snap"), exist_ok=True)
    for args in (["make_digits", "img.gz", "lab.gz", "--count=256"], ["convert_mnist", "img.gz", "lab.gz", "lmdb"]):
        subprocess.run([tool] + args, cwd=d, check=True, capture_output=True)


def children(pid):
    """Processes whose parent is pid (from /proc)."""
    out = []
    for p in os.listdir("/proc"):
        if p.isdigit():
            try:
                with open("/proc/%s/stat" % p) as f:
                    fields = f.read().rsplit(")", 1)[1].split()
                if int(fields[1]) == pid:
                    out.append(int(p))
            except (OSError, IndexError):
                pass
    return out


def wait_line(p, pattern, log, timeout):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        line = p.stdout.readline()
        if not line:
            return None
        log.append(line)
        m = re.search(pattern, line)
        if m:
            return m
    return None


def kill_one_rank(cmd, cwd, ready_pattern, env):
    """Starts cmd under mpiexec, waits for ready_pattern, SIGKILLs the newest rank; returns
    (seconds until mpiexec exited, its exit status, its output)."""
    p = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                         start_new_session=True)
    log = []
    try:
        if not wait_line(p, ready_pattern, log, 120):
            fail("the job never printed %r" % ready_pattern, "".join(log))
        ranks = sorted(children(p.pid))
        if len(ranks) < 2:
            fail("expected 2 rank processes under mpiexec, found %s" % ranks, "".join(log))
        os.kill(ranks[-1], signal.SIGKILL)
        t0 = time.monotonic()
        try:
            out, _ = p.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            out, _ = p.communicate()
            fail("the job was still running 30 s after one rank was killed", "".join(log) + out)
        return time.monotonic() - t0, p.returncode, "".join(log) + out
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)


def mpi_env():
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", TAIHU_NUM_THREADS="1",
               OMPI_MCA_mpi_yield_when_idle="1", TAIHU_COMM_PROBE="never")
    return env


MPI_FLAGS = ["-n", "2", "--oversubscribe", "--bind-to", "none", "--mca", "btl", "self,vader"]


def case_caffe_rank_kill(tool, mpiexec):
    with tempfile.TemporaryDirectory(prefix="taihu_fault_") as d:
        caffe_dir(tool, d, 100000000, 3)
        took, rc, log = kill_one_rank([mpiexec] + MPI_FLAGS + [tool, "train", "--solver=solver.prototxt"], d,
                                      r"Iteration 7 ", mpi_env())
        if took > 10:
            fail("the job took %.1f s to end after one rank was killed" % took, log)
        if rc == 0:
            fail("the job exited 0 after one rank was killed", log)
        if not re.search(r"signal 9|Killed|killed", log):
            fail("no message names the killed rank", log)
        states = sorted(glob.glob(os.path.join(d, "snap", "f_iter_*.solverstate")),
                        key=lambda f: int(re.search(r"_iter_(\d+)", f).group(1)))
        if not states:
            fail("no snapshot was written before the kill", log)
        for s in states:  # each final-name snapshot is whole: it resumes
            it = int(re.search(r"_iter_(\d+)", s).group(1))
            r = subprocess.run([tool, "train", "--solver=solver.prototxt", "--iterations=%d" % (it + 1),
                                "--snapshot=" + os.path.relpath(s, d)], cwd=d, capture_output=True, text=True,
                               timeout=120, env=dict(os.environ, TAIHU_NUM_THREADS="1"))
            if r.returncode != 0 or "Optimization Done." not in r.stdout + r.stderr:
                fail("snapshot %s does not resume (exit %d)" % (s, r.returncode), r.stdout + r.stderr)
    print("caffe_rank_kill: the job ended %.1f s after kill -9 of one rank, exit %d" % (took, rc))


def case_seismic_rank_kill(tool, mpiexec):
    with tempfile.TemporaryDirectory(prefix="taihu_fault_") as d:
        args = ["run", "--shape", "600x300", "--spacing", "10", "--tmax", "3.0", "--width", "10",
                "--shots", "3000:3000:100", "--no-png", "--mpi", "domain", "--dir", "out"]
        took, rc, log = kill_one_rank([mpiexec] + MPI_FLAGS + [tool] + args, d, r"step|steps|shot", mpi_env())
        if took > 10:
            fail("the job took %.1f s to end after one rank was killed" % took, log)
        if rc == 0:
            fail("the job exited 0 after one rank was killed", log)
        if not re.search(r"signal 9|Killed|killed", log):
            fail("no message names the killed rank", log)
        if os.path.exists(os.path.join(d, "out", "shots.segy")):
            fail("shots.segy exists under its final name after the kill", log)
    print("seismic_rank_kill: the job ended %.1f s after kill -9 of one rank, exit %d" % (took, rc))


def losses(text):
    return re.findall(r"Iteration (\d+)[^\n]*, loss = (\S+)", text)


def case_snapshot_kill_resume(tool):
    env = dict(os.environ, TAIHU_NUM_THREADS="1")
    with tempfile.TemporaryDirectory(prefix="taihu_fault_") as d:
        caffe_dir(tool, d, 40, 5)
        ref = subprocess.run([tool, "train", "--solver=solver.prototxt"], cwd=d, capture_output=True, text=True,
                             timeout=300, env=env)
        if ref.returncode != 0:
            fail("reference run failed", ref.stdout + ref.stderr)
        want = dict(losses(ref.stdout + ref.stderr))
        if len(want) < 40:
            fail("the reference run logged %d losses" % len(want), ref.stdout + ref.stderr)
        for f in glob.glob(os.path.join(d, "snap", "*")):
            os.remove(f)
        # Killed while the second snapshot is written: its weights are on disk, its solver state is being written.
        p = subprocess.Popen([tool, "train", "--solver=solver.prototxt"], cwd=d, env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True)
        log = []
        if not wait_line(p, r"Snapshotting solver state to binary proto file snap/f_iter_10\.solverstate", log, 120):
            p.kill()
            fail("no second snapshot started", "".join(log))
        p.send_signal(signal.SIGKILL)
        p.communicate()
        states = glob.glob(os.path.join(d, "snap", "f_iter_*.solverstate"))
        its = sorted(int(re.search(r"_iter_(\d+)", s).group(1)) for s in states)
        if not its:
            fail("no snapshot survived", "".join(log))
        newest = its[-1]
        r = subprocess.run([tool, "train", "--solver=solver.prototxt",
                            "--snapshot=snap/f_iter_%d.solverstate" % newest], cwd=d, capture_output=True,
                           text=True, timeout=300, env=env)
        if r.returncode != 0:
            fail("resume from the newest snapshot (iteration %d) failed" % newest, r.stdout + r.stderr)
        got = losses(r.stdout + r.stderr)
        if not got or int(got[0][0]) != newest:
            fail("the resumed run did not start at iteration %d" % newest, r.stdout + r.stderr)
        bad = [(i, l, want.get(i)) for i, l in got if want.get(i) != l]
        if bad:
            fail("resumed losses differ from the uninterrupted run (iteration, resumed, reference): %s" % bad[:5])
    print("snapshot_kill_resume: killed at the iteration-10 snapshot, resumed from %d, %d losses identical"
          % (newest, len(got)))


def mount_tmpfs(path, size):
    os.makedirs(path, exist_ok=True)
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=%s" % size, "tmpfs", path], capture_output=True)
    return r.returncode == 0


def check_no_partial(where, finals, what):
    left = sorted(os.listdir(where))
    temps = [f for f in left if ".tmp" in f]
    if temps:
        fail("%s: temporary files left on the full disk: %s" % (what, temps))
    for f, whole_size in finals:
        path = os.path.join(where, f)
        if os.path.exists(path) and os.path.getsize(path) != whole_size:
            fail("%s: %s is under its final name with %d of %d bytes" % (what, f, os.path.getsize(path), whole_size))


def case_full_disk(caffe, seismic, tune, dsl):
    with tempfile.TemporaryDirectory(prefix="taihu_fault_") as d:
        disk = os.path.join(d, "disk")
        if not mount_tmpfs(disk, "64k"):
            print("SKIPPED: cannot mount a tmpfs here (needs root and mount permission)")
            sys.exit(SKIP)
        try:
            env = dict(os.environ, TAIHU_NUM_THREADS="1")
            # taihu-caffe: the first snapshot (a 100 KiB caffemodel) does not fit.
            caffe_dir(caffe, d, 4, 2, prefix="disk/f")
            r = subprocess.run([caffe, "train", "--solver=solver.prototxt"], cwd=d, capture_output=True, text=True,
                               timeout=300, env=env)
            out = r.stdout + r.stderr
            if r.returncode == 0 or "No space left on device" not in out:
                fail("taihu-caffe snapshot on a full disk: exit %d, want non-zero and the OS's reason" % r.returncode, out)
            check_no_partial(disk, [], "taihu-caffe")
            if glob.glob(os.path.join(disk, "f_iter_*")):
                fail("taihu-caffe left %s on the full disk" % os.listdir(disk))
            # taihu-seismic: a SEG-Y gather bigger than the disk.
            r = subprocess.run([seismic, "run", "--shape", "200x100", "--spacing", "10", "--tmax", "0.6", "--width", "10",
                                "--shots", "1000:1000:100", "--receivers", "0:1990:5", "--dir", "disk/s"], cwd=d,
                               capture_output=True, text=True, timeout=300, env=env)
            out = r.stdout + r.stderr
            if r.returncode == 0 or "No space left on device" not in out:
                fail("taihu-seismic on a full disk: exit %d, want non-zero and the OS's reason" % r.returncode, out)
            if os.path.isdir(os.path.join(disk, "s")):
                check_no_partial(os.path.join(disk, "s"), [], "taihu-seismic")
                for root, _, files in os.walk(os.path.join(disk, "s")):
                    for f in files:
                        path = os.path.join(root, f)
                        if ".tmp" in f:
                            fail("taihu-seismic left the temporary file %s" % path)
                        if f.endswith((".segy", ".npy")):  # each is bigger than the disk
                            fail("taihu-seismic left %s under its final name on the full disk" % path)
                        if f.endswith(".png"):  # the model picture fits: it must be whole
                            with open(path, "rb") as png:
                                if not png.read().endswith(b"IEND\xaeB`\x82"):
                                    fail("taihu-seismic left a truncated %s" % path)
            # taihu-tune emit: generated code bigger than what is left.
            subprocess.run(["dd", "if=/dev/zero", "of=" + os.path.join(disk, "fill"), "bs=1k", "count=64"],
                           capture_output=True)
            target = os.path.join(disk, "g.cpp")
            r = subprocess.run([tune, "emit", os.path.join(dsl, "gemm.tdsl"), "--shape", "M=64,N=64,K=64",
                                "--format=cpp", "--out", target], capture_output=True, text=True, timeout=300)
            out = r.stdout + r.stderr
            if r.returncode == 0 or "No space left on device" not in out:
                fail("taihu-tune emit on a full disk: exit %d, want non-zero and the OS's reason" % r.returncode, out)
            check_no_partial(disk, [], "taihu-tune emit")
            if os.path.exists(target):
                fail("taihu-tune emit left g.cpp on the full disk")
            # taihu-tune run: its records log (appended, one JSON line per trial) on the
            # full disk. The log may stay empty, but holds no torn line.
            log = os.path.join(disk, "log.jsonl")
            r = subprocess.run([tune, "run", os.path.join(dsl, "gemm.tdsl"), "--shape", "M=8,N=8,K=8",
                                "--budget", "3s", "--log", log], capture_output=True, text=True, timeout=300)
            out = r.stdout + r.stderr
            if r.returncode == 0 or "No space left on device" not in out:
                fail("taihu-tune run on a full disk: exit %d, want non-zero and the OS's reason" % r.returncode, out)
            if os.path.exists(log):
                with open(log, "rb") as f:
                    text = f.read()
                if text and not text.endswith(b"\n"):
                    fail("taihu-tune run left a torn record in its log", text[-300:].decode(errors="replace"))
        finally:
            subprocess.run(["umount", "-l", disk], capture_output=True)
    print("full_disk: taihu-caffe, taihu-seismic and taihu-tune report ENOSPC, exit non-zero, leave no partial file")


def expect_enospc(what, r, disk, finals):
    out = r.stdout + r.stderr
    if r.returncode <= 0 or "No space left on device" not in out:
        fail("%s on a full disk: exit %d, want a non-zero exit (not a signal) and the OS's reason" % (what, r.returncode),
             out)
    check_no_partial(disk, [], what)
    left = [f for f in finals if os.path.exists(os.path.join(disk, f))]
    if left:
        fail("%s left %s under its final name on the full disk" % (what, left))


def fill_disk(disk, keep_kib):
    # Everything but keep_kib of the 64 KiB tmpfs, so the next write runs out part-way.
    subprocess.run(["dd", "if=/dev/zero", "of=" + os.path.join(disk, "fill"), "bs=1k", "count=%d" % (64 - keep_kib)],
                   capture_output=True)


def case_full_disk_data(caffe, sim=None):
    with tempfile.TemporaryDirectory(prefix="taihu_fault_") as d:
        disk = os.path.join(d, "disk")
        if not mount_tmpfs(disk, "64k"):
            print("SKIPPED: cannot mount a tmpfs here (needs root and mount permission)")
            sys.exit(SKIP)
        env = dict(os.environ, TAIHU_NUM_THREADS="1")

        def run(args):
            return subprocess.run(args, cwd=d, capture_output=True, text=True, timeout=300, env=env)

        try:
            # make_digits: 2000 digits are ~1.1 MB of gzip, far more than the disk.
            r = run([caffe, "make_digits", "disk/img.gz", "disk/lab.gz", "--count=2000"])
            expect_enospc("taihu-caffe make_digits", r, disk, ["img.gz", "lab.gz"])
            # convert_mnist: an LMDB of 2000 records (~1.8 MB) into the empty disk, and
            # into one with 8 KiB left (full part-way through the first data page).
            r = run([caffe, "make_digits", "img.gz", "lab.gz", "--count=2000"])
            if r.returncode != 0:
                fail("taihu-caffe make_digits outside the full disk failed", r.stdout + r.stderr)
            for keep in (64, 8, 0):
                fill_disk(disk, keep)
                r = run([caffe, "convert_mnist", "img.gz", "lab.gz", "disk/db"])
                expect_enospc("taihu-caffe convert_mnist (%d KiB free)" % keep, r, disk, ["db"])
                if [f for f in os.listdir(disk) if f != "fill"]:
                    fail("taihu-caffe convert_mnist left %s on the full disk" % os.listdir(disk))
            # allreduce-sim --png: a 7 KiB plot on a disk with 4 KiB, then 0 KiB, left.
            if sim:
                for keep in (4, 0):
                    fill_disk(disk, keep)
                    r = run([sim, "--png", "disk/a.png"])
                    expect_enospc("taihu-allreduce-sim --png (%d KiB free)" % keep, r, disk, ["a.png"])
        finally:
            subprocess.run(["umount", "-l", disk], capture_output=True)
    print("full_disk_data: convert_mnist, make_digits%s report ENOSPC, exit non-zero, leave no file under a final name"
          % (" and allreduce-sim --png" if sim else ""))


def main():
    case = sys.argv[1]
    args = [os.path.abspath(a) if os.path.exists(a) else a for a in sys.argv[2:]]
    globals()["case_" + case](*args)


if __name__ == "__main__":
    main()
