#!/usr/bin/env python3
"""taihu-caffe train and signals, as Caffe's SignalHandler (issue 23): by default SIGINT
stops after the current iteration and the final snapshot is written (exit 0), SIGHUP
writes a snapshot and training goes on; --sigint_effect / --sighup_effect change that.
The stopped run's snapshot resumes. Usage: cli_signal_check.py <taihu-caffe>"""
import glob
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

NET = """name: "SignalNet"
layer { name: "mnist" type: "Data" top: "data" top: "label"
  transform_param { scale: 0.00390625 } data_param { source: "lmdb" batch_size: 20 backend: LMDB } }
layer { name: "ip" type: "InnerProduct" bottom: "data" top: "ip" inner_product_param { num_output: 10 weight_filler { type: "xavier" } } }
layer { name: "loss" type: "SoftmaxWithLoss" bottom: "ip" bottom: "label" top: "loss" }
"""
# Long enough never to finish by itself within the test; no periodic snapshots.
SOLVER = """net: "net.prototxt"
base_lr: 0.01
lr_policy: "fixed"
display: 1
max_iter: 100000000
snapshot_prefix: "snap/sig"
random_seed: 1
"""


class Training:
    def __init__(self, tool, d, *flags):
        self.p = subprocess.Popen([tool, 'train', '--solver=solver.prototxt'] + list(flags), cwd=d,
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.log = []

    def wait_for(self, pattern, timeout=60):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            line = self.p.stdout.readline()
            if not line:
                break
            self.log.append(line)
            m = re.search(pattern, line)
            if m:
                return m
        self.p.kill()
        sys.exit('FAILED: no line matching %r\n%s' % (pattern, ''.join(self.log[-40:])))

    def finish(self, timeout=60):
        out, _ = self.p.communicate(timeout=timeout)
        self.log.append(out)
        return self.p.returncode, ''.join(self.log)


def snapshots(d):
    return sorted(int(re.search(r'_iter_(\d+)\.solverstate$', f).group(1))
                  for f in glob.glob(os.path.join(d, 'snap', 'sig_iter_*.solverstate')))


def main():
    tool = os.path.abspath(sys.argv[1])
    with tempfile.TemporaryDirectory(prefix='taihu_caffe_signal_') as d:
        for name, text in [('net.prototxt', NET), ('solver.prototxt', SOLVER)]:
            with open(os.path.join(d, name), 'w') as f:
                f.write(text)
        os.mkdir(os.path.join(d, 'snap'))
        for args in (['make_digits', 'img.gz', 'lab.gz', '--count=200'], ['convert_mnist', 'img.gz', 'lab.gz', 'lmdb']):
            subprocess.run([tool] + args, cwd=d, check=True, capture_output=True)

        # Defaults: SIGHUP snapshots and goes on; SIGINT stops with a final snapshot.
        t = Training(tool, d)
        t.wait_for(r'Iteration 3 ')
        t.p.send_signal(signal.SIGHUP)
        hup_iter = int(t.wait_for(r'Snapshotting solver state to binary proto file snap/sig_iter_(\d+)\.solverstate').group(1))
        t.wait_for(r'Iteration %d ' % (hup_iter + 2))  # still training after the snapshot
        t.p.send_signal(signal.SIGINT)
        rc, log = t.finish()
        assert rc == 0, 'SIGINT: exit %d\n%s' % (rc, log[-3000:])
        assert 'Optimization stopped early.' in log, log[-2000:]
        stop_iter = int(re.search(r'Stop requested at iteration (\d+)', log).group(1))
        assert stop_iter > hup_iter + 2, (hup_iter, stop_iter)
        assert snapshots(d) == [hup_iter, stop_iter], snapshots(d)
        assert not glob.glob(os.path.join(d, 'snap', '*.tmp.*')), os.listdir(os.path.join(d, 'snap'))
        # The stopped run resumes from its final snapshot.
        r = subprocess.run([tool, 'train', '--solver=solver.prototxt', '--iterations=%d' % (stop_iter + 2),
                            '--snapshot=snap/sig_iter_%d.solverstate' % stop_iter],
                           cwd=d, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=60)
        assert r.returncode == 0 and 'Optimization Done.' in r.stdout, r.stdout[-2000:]
        assert 'Iteration %d ' % (stop_iter + 1) in r.stdout, r.stdout[-2000:]

        # Swapped effects: SIGINT snapshots, SIGHUP stops.
        for f in glob.glob(os.path.join(d, 'snap', '*')):
            os.remove(f)
        t = Training(tool, d, '--sigint_effect=snapshot', '--sighup_effect=stop')
        t.wait_for(r'Iteration 3 ')
        t.p.send_signal(signal.SIGINT)
        int_iter = int(t.wait_for(r'Snapshotting solver state to binary proto file snap/sig_iter_(\d+)\.solverstate').group(1))
        t.wait_for(r'Iteration %d ' % (int_iter + 1))
        t.p.send_signal(signal.SIGHUP)
        rc, log = t.finish()
        assert rc == 0 and 'Optimization stopped early.' in log, 'SIGHUP stop: exit %d\n%s' % (rc, log[-3000:])
        assert len(snapshots(d)) == 2 and snapshots(d)[0] == int_iter, snapshots(d)

        # none: the signal is ignored (the run is then ended by SIGTERM).
        t = Training(tool, d, '--sigint_effect=none')
        t.wait_for(r'Iteration 2 ')
        t.p.send_signal(signal.SIGINT)
        t.wait_for(r'Iteration 6 ')
        t.p.terminate()
        rc, log = t.finish()
        assert rc == -signal.SIGTERM and 'stopped early' not in log, (rc, log[-2000:])

        r = subprocess.run([tool, 'train', '--solver=solver.prototxt', '--sigint_effect=later'], cwd=d,
                           capture_output=True, text=True, timeout=60)
        assert r.returncode == 1 and '--sigint_effect=later: Invalid signal effect "later" was specified (stop, snapshot or none)' in r.stderr, r.stderr
    print('taihu-caffe signal checks passed')


if __name__ == '__main__':
    main()
