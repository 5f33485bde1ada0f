"""caffe.Net against independent references: forward of InnerProduct + ReLU + Softmax
computed in numpy, backward against central finite differences, numpy views that
share the blobs' memory, the net-surgery flow (edit params, save, reload), and
pycaffe's Net API (blobs, params, layers, inputs/outputs, top/bottom names, reshape,
forward(start=, end=, **inputs))."""
import numpy as np
import pytest

import caffe
from conftest import write

MLP = """name: "mlp"
layer { name: "data" type: "Input" top: "data" input_param { shape { dim: 4 dim: 6 } } }
layer { name: "ip1" type: "InnerProduct" bottom: "data" top: "ip1"
  inner_product_param { num_output: 5 weight_filler { type: "gaussian" std: 0.5 }
                        bias_filler { type: "gaussian" std: 0.2 } } }
layer { name: "relu1" type: "ReLU" bottom: "ip1" top: "ip1" }
layer { name: "ip2" type: "InnerProduct" bottom: "ip1" top: "ip2"
  inner_product_param { num_output: 3 weight_filler { type: "gaussian" std: 0.5 }
                        bias_filler { type: "gaussian" std: 0.2 } } }
layer { name: "prob" type: "Softmax" bottom: "ip2" top: "prob" }
"""

# A loss net for gradients: data -> InnerProduct -> TanH -> EuclideanLoss(target).
LOSS_NET = """name: "reg"
force_backward: true
layer { name: "input" type: "Input" top: "data" top: "target"
  input_param { shape { dim: 3 dim: 4 } shape { dim: 3 dim: 2 } } }
layer { name: "ip" type: "InnerProduct" bottom: "data" top: "ip"
  inner_product_param { num_output: 2 weight_filler { type: "gaussian" std: 0.7 }
                        bias_filler { type: "gaussian" std: 0.3 } } }
layer { name: "tanh" type: "TanH" bottom: "ip" top: "ip" }
layer { name: "loss" type: "EuclideanLoss" bottom: "ip" bottom: "target" top: "loss" }
"""


def mlp_reference(net, x):
    w1, b1 = (b.data.astype(np.float64) for b in net.params["ip1"])
    w2, b2 = (b.data.astype(np.float64) for b in net.params["ip2"])
    h = np.maximum(x @ w1.T + b1, 0)
    z = h @ w2.T + b2
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


@pytest.fixture
def mlp(tmp_path):
    caffe.set_random_seed(7)
    return caffe.Net(write(tmp_path / "mlp.prototxt", MLP), caffe.TEST)


def test_forward_matches_numpy(mlp):
    x = np.random.RandomState(0).randn(4, 6).astype(np.float32)
    out = mlp.forward(data=x)
    assert list(out) == ["prob"]
    np.testing.assert_allclose(out["prob"], mlp_reference(mlp, x), rtol=1e-5, atol=1e-6)


def test_net_structure(mlp):
    assert list(mlp.blobs) == ["data", "ip1", "ip2", "prob"]
    assert list(mlp.params) == ["ip1", "ip2"]
    assert [p.data.shape for p in mlp.params["ip1"]] == [(5, 6), (5,)]
    assert [layer.type for layer in mlp.layers] == ["Input", "InnerProduct", "ReLU", "InnerProduct", "Softmax"]
    assert list(mlp._layer_names) == ["data", "ip1", "relu1", "ip2", "prob"]
    assert mlp.inputs == ["data"] and mlp.outputs == ["prob"]
    assert mlp.top_names["relu1"] == ["ip1"] and mlp.bottom_names["ip2"] == ["ip1"]
    assert mlp.layer_dict["ip2"].type == "InnerProduct"
    blob = mlp.blobs["data"]
    assert blob.shape == (4, 6) and blob.count == 24
    assert (blob.num, blob.channels, blob.height, blob.width) == (4, 6, 1, 1)


def test_blob_views_share_memory(mlp):
    data = mlp.blobs["data"].data
    assert not data.flags.owndata and data.dtype == np.float32
    # Two reads view the same storage: no copies.
    assert np.shares_memory(data, mlp.blobs["data"].data)
    x = np.random.RandomState(1).randn(4, 6).astype(np.float32)
    data[...] = x                      # written through the view, not through forward()
    out = mlp.forward()
    np.testing.assert_allclose(out["prob"], mlp_reference(mlp, x), rtol=1e-5, atol=1e-6)
    # Editing a parameter in numpy changes what the net computes.
    mlp.params["ip2"][0].data[...] = 0
    mlp.params["ip2"][1].data[...] = [1, 2, 3]
    expected = np.exp([1, 2, 3]) / np.exp([1, 2, 3]).sum()
    np.testing.assert_allclose(mlp.forward()["prob"], np.tile(expected, (4, 1)), rtol=1e-6)


def test_forward_start_end_and_reshape(mlp):
    x = np.random.RandomState(2).randn(4, 6).astype(np.float32)
    mlp.blobs["prob"].data[...] = -1
    out = mlp.forward(data=x, end="relu1")
    assert list(out) == ["ip1"]
    w1, b1 = (b.data for b in mlp.params["ip1"])
    np.testing.assert_allclose(out["ip1"], np.maximum(x @ w1.T + b1, 0), rtol=1e-5, atol=1e-6)
    assert (mlp.blobs["prob"].data == -1).all()  # layers after `end` did not run
    out = mlp.forward(start="ip2")
    np.testing.assert_allclose(out["prob"], mlp_reference(mlp, x), rtol=1e-5, atol=1e-6)
    # A new batch size: reshape the input blob, then the net.
    mlp.blobs["data"].reshape(7, 6)
    mlp.reshape()
    x7 = np.random.RandomState(3).randn(7, 6).astype(np.float32)
    out = mlp.forward(data=x7)
    assert out["prob"].shape == (7, 3)
    np.testing.assert_allclose(out["prob"], mlp_reference(mlp, x7), rtol=1e-5, atol=1e-6)


def test_forward_all_batches(mlp):
    x = np.random.RandomState(4).randn(10, 6).astype(np.float32)  # 2.5 batches of 4
    out = mlp.forward_all(data=x)
    np.testing.assert_allclose(out["prob"], mlp_reference(mlp, x), rtol=1e-5, atol=1e-6)


def test_backward_matches_finite_differences(tmp_path):
    caffe.set_random_seed(11)
    net = caffe.Net(write(tmp_path / "reg.prototxt", LOSS_NET), caffe.TRAIN)
    rng = np.random.RandomState(5)
    net.blobs["data"].data[...] = rng.randn(3, 4)
    net.blobs["target"].data[...] = rng.randn(3, 2)

    def loss():
        return float(net.forward()["loss"])

    loss()
    for p in net.params["ip"]:
        p.diff[...] = 0  # parameter gradients accumulate (the solver zeroes them)
    grads = net.backward()
    analytic = {"data": grads["data"].copy(), "w": net.params["ip"][0].diff.copy(),
                "b": net.params["ip"][1].diff.copy()}
    arrays = {"data": net.blobs["data"].data, "w": net.params["ip"][0].data, "b": net.params["ip"][1].data}
    eps = 1e-2
    for name, arr in arrays.items():
        numeric = np.zeros(arr.shape)
        for idx in np.ndindex(arr.shape):
            keep = arr[idx]
            arr[idx] = keep + eps
            up = loss()
            arr[idx] = keep - eps
            down = loss()
            arr[idx] = keep
            numeric[idx] = (up - down) / (2 * eps)
        np.testing.assert_allclose(analytic[name], numeric, rtol=2e-3, atol=2e-4, err_msg=name)


def test_net_surgery_save_and_reload(mlp, tmp_path):
    rng = np.random.RandomState(6)
    # Surgery: new weights written in numpy, a bias zeroed.
    mlp.params["ip1"][0].data[...] = rng.randn(5, 6)
    mlp.params["ip1"][1].data[...] = 0
    x = rng.randn(4, 6).astype(np.float32)
    expected = mlp.forward(data=x)["prob"].copy()
    weights = str(tmp_path / "surgery.caffemodel")
    mlp.save(weights)
    proto = str(tmp_path / "mlp.prototxt")
    for reloaded in (caffe.Net(proto, weights, caffe.TEST),
                     caffe.Net(proto, caffe.TEST, weights=weights),
                     caffe.Net(proto, phase=caffe.TEST, weights=weights)):
        for name in mlp.params:
            for a, b in zip(mlp.params[name], reloaded.params[name]):
                np.testing.assert_array_equal(a.data, b.data)
        np.testing.assert_array_equal(reloaded.forward(data=x)["prob"], expected)
    fresh = caffe.Net(proto, caffe.TEST)
    fresh.copy_from(weights)
    np.testing.assert_array_equal(fresh.forward(data=x)["prob"], expected)


def test_phase_as_int_and_layer_types(tmp_path):
    proto = write(tmp_path / "mlp.prototxt", MLP)
    assert caffe.Net(proto, caffe.caffe_pb2.TEST).phase == caffe.TEST  # pycaffe's phases are ints
    assert caffe.Net(proto, phase=0).phase == caffe.TRAIN
    types = caffe.layer_type_list()
    assert {"Convolution", "InnerProduct", "Python", "SoftmaxWithLoss"} <= set(types)
