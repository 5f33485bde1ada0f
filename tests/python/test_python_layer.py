"""Python layers (type: "Python"): Caffe's numpy Euclidean loss trained side by side
with the built-in EuclideanLoss gives the same loss at every iteration (relative
difference <= 1e-5: the two sum float32 squares in a different order); a Python
layer's learnable blob is updated by the solver; param_str and phase reach the
layer; a missing module raises ImportError and an exception inside a layer comes back
as that exception, the interpreter intact."""
import os
import sys

import numpy as np
import pytest

import caffe
from conftest import write

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

NET = """name: "reg"
layer {{ name: "input" type: "Input" top: "data" top: "target"
  input_param {{ shape {{ dim: 8 dim: 4 }} shape {{ dim: 8 dim: 2 }} }} }}
layer {{ name: "ip" type: "InnerProduct" bottom: "data" top: "ip"
  inner_product_param {{ num_output: 2 weight_filler {{ type: "gaussian" std: 0.5 }} }} }}
{loss}
"""
BUILTIN = 'layer { name: "loss" type: "EuclideanLoss" bottom: "ip" bottom: "target" top: "loss" }'
PYTHON = """layer { name: "loss" type: "Python" bottom: "ip" bottom: "target" top: "loss" loss_weight: 1
  python_param { module: "pylayers_for_tests" layer: "EuclideanLossLayer" } }"""

SOLVER = """net: "{net}"
base_lr: 0.05
momentum: 0.9
lr_policy: "fixed"
max_iter: 100
display: 0
snapshot_prefix: "{prefix}"
random_seed: 21
"""


def train(tmp_path, name, loss_layer, iters=30):
    net = write(tmp_path / (name + ".prototxt"), NET.format(loss=loss_layer))
    solver = caffe.SGDSolver(write(tmp_path / (name + "_solver.prototxt"),
                                   SOLVER.format(net=net, prefix=str(tmp_path / name))))
    rng = np.random.RandomState(4)
    solver.net.blobs["data"].data[...] = rng.randn(8, 4)
    solver.net.blobs["target"].data[...] = rng.randn(8, 2)
    losses = []
    for _ in range(iters):
        solver.step(1)
        losses.append(float(solver.net.blobs["loss"].data.ravel()[0]))
    return np.array(losses), solver


def test_python_euclidean_loss_trains_like_builtin(tmp_path):
    builtin, s1 = train(tmp_path, "builtin", BUILTIN)
    python, s2 = train(tmp_path, "python", PYTHON)
    assert s2.net.layers[-1].type == "Python"
    assert builtin[-1] < 0.5 * builtin[0]  # it trains
    np.testing.assert_allclose(python, builtin, rtol=1e-5)
    np.testing.assert_allclose(s2.net.params["ip"][0].data, s1.net.params["ip"][0].data, rtol=1e-5, atol=1e-7)


def test_python_layer_parameter_is_learned(tmp_path):
    text = """name: "scale"
force_backward: true
layer { name: "input" type: "Input" top: "data" top: "target"
  input_param { shape { dim: 6 dim: 3 } shape { dim: 6 dim: 3 } } }
layer { name: "scale" type: "Python" bottom: "data" top: "scaled"
  python_param { module: "pylayers_for_tests" layer: "ScaleByParam" param_str: "0.5" } }
layer { name: "loss" type: "EuclideanLoss" bottom: "scaled" bottom: "target" top: "loss" }
"""
    net = write(tmp_path / "scale.prototxt", text)
    solver = caffe.SGDSolver(write(tmp_path / "scale_solver.prototxt",
                                   SOLVER.format(net=net, prefix=str(tmp_path / "scale"))))
    assert list(solver.net.params) == ["scale"]
    assert solver.net.params["scale"][0].data[0] == 0.5  # param_str reached setup
    x = np.random.RandomState(9).randn(6, 3).astype(np.float32)
    solver.net.blobs["data"].data[...] = x
    solver.net.blobs["target"].data[...] = 3 * x
    solver.step(300)
    assert abs(solver.net.params["scale"][0].data[0] - 3) < 1e-3


def test_phase_reaches_layer(tmp_path):
    text = """name: "p"
layer { name: "input" type: "Input" top: "data" input_param { shape { dim: 2 dim: 2 } } }
layer { name: "f" type: "Python" bottom: "data" top: "out"
  python_param { module: "pylayers_for_tests" layer: "Failing" param_str: "xyz" } }
"""
    path = write(tmp_path / "failing.prototxt", text)
    net = caffe.Net(path, caffe.TRAIN)
    with pytest.raises(ValueError, match=r"deliberate error \(param_str=xyz, train=True\)") as err:
        net.forward()
    assert "layer f (Python)" in str(err.value)
    # The interpreter and the net are still usable.
    assert net.blobs["out"].data.shape == (2, 2)
    with pytest.raises(ValueError):
        net.forward()


def test_missing_module_is_import_error(tmp_path):
    text = """name: "m"
layer { name: "input" type: "Input" top: "data" input_param { shape { dim: 2 dim: 2 } } }
layer { name: "py" type: "Python" bottom: "data" top: "out"
  python_param { module: "no_such_layer_module" layer: "Nothing" } }
"""
    with pytest.raises(ImportError, match="no_such_layer_module"):
        caffe.Net(write(tmp_path / "missing.prototxt", text), caffe.TEST)
    text = text.replace("no_such_layer_module", "pylayers_for_tests").replace("Nothing", "NoSuchClass")
    with pytest.raises(AttributeError, match="NoSuchClass"):
        caffe.Net(write(tmp_path / "missing_class.prototxt", text), caffe.TEST)
