""".caffemodel interop through Python: weights written by `taihu-caffe train` load
with caffe.Net(model, weights, TEST) and give the same test outputs as
`taihu-caffe test` (both average the outputs of the same batches; the log prints 6
significant digits, hence rtol 1e-5); a model saved from Python is read by
`taihu-caffe test`."""
import re
import subprocess

import numpy as np

import caffe
from conftest import write

NET = """name: "Small"
layer {{ name: "data" type: "FileData" top: "data" top: "label" include {{ phase: TRAIN }}
  transform_param {{ scale: 0.00390625 }}
  file_data_param {{ source: "{img}" label_source: "{lab}" batch_size: 32 count: 1000 shuffle: true }} }}
layer {{ name: "data" type: "FileData" top: "data" top: "label" include {{ phase: TEST }}
  transform_param {{ scale: 0.00390625 }}
  file_data_param {{ source: "{img}" label_source: "{lab}" batch_size: 50 first: 1000 }} }}
layer {{ name: "conv1" type: "Convolution" bottom: "data" top: "conv1"
  convolution_param {{ num_output: 8 kernel_size: 5 weight_filler {{ type: "xavier" }} }} }}
layer {{ name: "pool1" type: "Pooling" bottom: "conv1" top: "pool1" pooling_param {{ pool: MAX kernel_size: 2 stride: 2 }} }}
layer {{ name: "ip1" type: "InnerProduct" bottom: "pool1" top: "ip1" inner_product_param {{ num_output: 32 weight_filler {{ type: "xavier" }} }} }}
layer {{ name: "relu1" type: "ReLU" bottom: "ip1" top: "ip1" }}
layer {{ name: "ip2" type: "InnerProduct" bottom: "ip1" top: "ip2" inner_product_param {{ num_output: 10 weight_filler {{ type: "xavier" }} }} }}
layer {{ name: "accuracy" type: "Accuracy" bottom: "ip2" bottom: "label" top: "accuracy" include {{ phase: TEST }} }}
layer {{ name: "loss" type: "SoftmaxWithLoss" bottom: "ip2" bottom: "label" top: "loss" }}
"""
SOLVER = """net: "{net}"
base_lr: 0.01
momentum: 0.9
lr_policy: "fixed"
max_iter: 40
display: 0
snapshot_prefix: "{prefix}"
random_seed: 5
"""


def cli_test_outputs(tool, model, weights, iterations):
    p = subprocess.run([tool, "test", "--model=" + model, "--weights=" + weights, "--iterations=%d" % iterations],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, check=True)
    return {name: float(v) for name, v in re.findall(r"\] (\w+) = ([-\d.eE+]+)(?: \(\*.*\))?\s*$", p.stdout, re.M)}


def python_test_outputs(net, iterations):
    sums = {}
    for _ in range(iterations):
        out = net.forward()
        for name, value in out.items():
            sums[name] = sums.get(name, 0.0) + float(np.asarray(value).ravel()[0])
    return {name: s / iterations for name, s in sums.items()}


def test_cli_trained_model_in_python(tmp_path, caffe_tool, digits):
    img, lab = digits
    model = write(tmp_path / "net.prototxt", NET.format(img=img, lab=lab))
    solver = write(tmp_path / "solver.prototxt", SOLVER.format(net=model, prefix=str(tmp_path / "small")))
    subprocess.run([caffe_tool, "train", "--solver=" + solver], check=True, cwd=str(tmp_path),
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    weights = str(tmp_path / "small_iter_40.caffemodel")
    cli = cli_test_outputs(caffe_tool, model, weights, 4)
    assert set(cli) == {"accuracy", "loss"}
    net = caffe.Net(model, weights, caffe.TEST)
    py = python_test_outputs(net, 4)
    for name in cli:
        np.testing.assert_allclose(py[name], cli[name], rtol=1e-5, atol=1e-6, err_msg=name)

    # And back: weights edited and saved from Python are what taihu-caffe test reads.
    net.params["ip2"][1].data[...] += 5.0 * (np.arange(10) == 3)  # bias towards class 3
    edited = str(tmp_path / "edited.caffemodel")
    net.save(edited)
    fresh = caffe.Net(model, edited, caffe.TEST)
    py = python_test_outputs(fresh, 4)
    cli = cli_test_outputs(caffe_tool, model, edited, 4)
    for name in cli:
        np.testing.assert_allclose(py[name], cli[name], rtol=1e-5, atol=1e-6, err_msg=name)
