"""caffe solvers from Python: one SGD step equals the update computed in numpy from
the net's own gradient; every solver type trains a small regression; snapshot and
restore continue with the same losses; get_solver follows the file's type; test nets
share the train net's weights."""
import os

import numpy as np
import pytest

import caffe
from conftest import write

NET = """name: "reg"
layer { name: "input" type: "Input" top: "data" top: "target"
  input_param { shape { dim: 16 dim: 5 } shape { dim: 16 dim: 3 } } }
layer { name: "ip" type: "InnerProduct" bottom: "data" top: "ip"
  inner_product_param { num_output: 3 weight_filler { type: "gaussian" std: 0.3 }
                        bias_filler { type: "constant" value: 0.1 } } }
layer { name: "loss" type: "EuclideanLoss" bottom: "ip" bottom: "target" top: "loss" }
"""

SOLVER = """net: "{net}"
base_lr: {lr}
lr_policy: "fixed"
momentum: {momentum}
weight_decay: 0
max_iter: 1000
display: 0
snapshot_prefix: "{prefix}"
random_seed: 3
type: "{type}"
test_iter: 1
test_interval: 100000
test_initialization: false
"""


def make_solver(tmp_path, kind="SGD", lr=0.05, momentum=0.0, factory=None, test_net=False):
    net = write(tmp_path / "net.prototxt", NET)
    text = SOLVER.format(net=net, lr=lr, momentum=momentum, prefix=str(tmp_path / "snap"), type=kind)
    if not test_net:
        text = "\n".join(l for l in text.splitlines() if not l.startswith("test_"))
    path = write(tmp_path / ("solver_%s.prototxt" % kind), text)
    solver = (factory or caffe.get_solver)(path)
    rng = np.random.RandomState(8)
    x = rng.randn(16, 5).astype(np.float32)
    a = rng.randn(5, 3).astype(np.float32)
    solver.net.blobs["data"].data[...] = x
    solver.net.blobs["target"].data[...] = x @ a + 0.5
    return solver


def test_sgd_step_matches_numpy_update(tmp_path):
    solver = make_solver(tmp_path, lr=0.05)
    net = solver.net
    net.forward()
    for p in net.params["ip"]:
        p.diff[...] = 0
    net.backward()
    expected = [p.data - 0.05 * p.diff for p in net.params["ip"]]
    solver.step(1)
    assert solver.iter == 1
    for p, e in zip(net.params["ip"], expected):
        np.testing.assert_allclose(p.data, e, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("kind,factory,lr", [
    ("SGD", caffe.SGDSolver, 0.05), ("Nesterov", caffe.NesterovSolver, 0.05),
    ("AdaGrad", caffe.AdaGradSolver, 0.2), ("RMSProp", caffe.RMSPropSolver, 0.02),
    ("Adam", caffe.AdamSolver, 0.05)])
def test_each_solver_trains(tmp_path, kind, factory, lr):
    momentum = {"SGD": 0.9, "Nesterov": 0.9, "Adam": 0.9}.get(kind, 0.0)
    solver = make_solver(tmp_path, kind="SGD", lr=lr, momentum=momentum, factory=factory)
    assert solver.type == kind  # the named constructor forces the type
    solver.net.forward()
    first = float(solver.net.blobs["loss"].data)
    solver.step(200)
    assert solver.iter == 200
    last = float(solver.net.blobs["loss"].data)
    assert last < 0.05 * first, (kind, first, last)


def test_get_solver_uses_file_type(tmp_path):
    assert make_solver(tmp_path, kind="Adam", lr=0.01, momentum=0.9).type == "Adam"


def test_snapshot_restore_continues_identically(tmp_path):
    solver = make_solver(tmp_path, lr=0.05, momentum=0.9)
    solver.step(5)
    state = solver.snapshot()
    assert os.path.isfile(state) and state.endswith("_iter_5.solverstate")
    assert os.path.isfile(state.replace(".solverstate", ".caffemodel"))
    losses = []
    for _ in range(4):
        solver.step(1)
        losses.append(float(solver.net.blobs["loss"].data))
    resumed = make_solver(tmp_path, lr=0.05, momentum=0.9)
    resumed.restore(state)
    assert resumed.iter == 5
    again = []
    for _ in range(4):
        resumed.step(1)
        again.append(float(resumed.net.blobs["loss"].data))
    assert again == losses


def test_test_nets_share_train_weights(tmp_path):
    solver = make_solver(tmp_path, test_net=True)
    assert len(solver.test_nets) == 1
    test_net = solver.test_nets[0]
    solver.step(3)
    np.testing.assert_array_equal(test_net.params["ip"][0].data, solver.net.params["ip"][0].data)
    assert np.shares_memory(test_net.params["ip"][0].data, solver.net.params["ip"][0].data)


def test_solve_runs_to_max_iter(tmp_path):
    solver = make_solver(tmp_path)
    path = write(tmp_path / "short.prototxt",
                 open(str(tmp_path / "solver_SGD.prototxt")).read().replace("max_iter: 1000", "max_iter: 7"))
    solver = caffe.get_solver(path)
    solver.solve()
    assert solver.iter == 7
    assert os.path.isfile(str(tmp_path / "snap_iter_7.caffemodel"))


def test_step_releases_the_gil(tmp_path):
    import threading
    import time
    solver = make_solver(tmp_path)
    solver.step(20)  # warm-up
    t0 = time.perf_counter()
    solver.step(2000)
    per_iter = (time.perf_counter() - t0) / 2000
    iters = max(2000, int(0.5 / per_iter))  # one step() call of about half a second
    stamps = []
    stop = threading.Event()

    def spin():
        while not stop.is_set():
            stamps.append(time.perf_counter())
            time.sleep(0.0005)

    t = threading.Thread(target=spin)
    t.start()
    time.sleep(0.02)
    t0 = time.perf_counter()
    solver.step(iters)
    t1 = time.perf_counter()
    stop.set()
    t.join()
    # While step() runs, the other Python thread runs only if the GIL was released:
    # it must have stamped the time in the middle of the call, not just at its ends.
    lo, hi = t0 + 0.2 * (t1 - t0), t1 - 0.2 * (t1 - t0)
    inside = [s for s in stamps if lo < s < hi]
    assert len(inside) >= 2, (len(inside), t1 - t0)
