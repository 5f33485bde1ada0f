"""Bad input raises a Python exception with the message, never a crash: a wrong blob
or layer name (KeyError), assigning data of the wrong shape (ValueError from numpy),
missing prototxt/weights (FileNotFoundError naming the path), a prototxt parse error
(caffe.CaffeError with file:line:column), weights that do not fit, a bad phase, bad
forward() inputs."""
import numpy as np
import pytest

import caffe
from conftest import write

NET = """name: "tiny"
layer { name: "data" type: "Input" top: "data" input_param { shape { dim: 2 dim: 3 } } }
layer { name: "ip" type: "InnerProduct" bottom: "data" top: "ip"
  inner_product_param { num_output: 4 weight_filler { type: "gaussian" std: 0.1 } } }
"""


@pytest.fixture
def net_path(tmp_path):
    return write(tmp_path / "tiny.prototxt", NET)


def test_wrong_blob_name_is_key_error(net_path):
    net = caffe.Net(net_path, caffe.TEST)
    with pytest.raises(KeyError, match="no blob named 'dta'.*data, ip"):
        net.blobs["dta"]
    with pytest.raises(KeyError, match="iq"):
        net.params["iq"]
    with pytest.raises(KeyError, match="end='nope'"):
        net.forward(end="nope")
    with pytest.raises(KeyError, match="label"):
        net.forward(label=np.zeros((2, 3)))


def test_wrong_shape_assignment_is_value_error(net_path):
    net = caffe.Net(net_path, caffe.TEST)
    with pytest.raises(ValueError, match="could not broadcast"):
        net.blobs["data"].data[...] = np.zeros((5, 7))
    with pytest.raises(ValueError, match="batch"):
        net.forward(data=np.zeros((5, 3)))
    with pytest.raises(ValueError, match="dimension 0 is -1"):
        net.blobs["data"].reshape(-1, 3)


def test_missing_files_name_the_path(tmp_path, net_path):
    missing = str(tmp_path / "nope.prototxt")
    with pytest.raises(FileNotFoundError, match="nope.prototxt") as err:
        caffe.Net(missing, caffe.TEST)
    assert err.value.filename == missing
    with pytest.raises(IOError, match="nope.caffemodel"):
        caffe.Net(net_path, str(tmp_path / "nope.caffemodel"), caffe.TEST)
    with pytest.raises(IOError, match="nope.caffemodel"):
        caffe.Net(net_path, caffe.TEST).copy_from(str(tmp_path / "nope.caffemodel"))
    with pytest.raises(IOError, match="nope_solver"):
        caffe.SGDSolver(str(tmp_path / "nope_solver.prototxt"))


def test_parse_error_has_file_line_column(tmp_path):
    bad = write(tmp_path / "bad.prototxt", 'name: "x"\nlayer {\n  nmae: "oops"\n}\n')
    with pytest.raises(caffe.CaffeError, match=r"bad\.prototxt:3:\d+: .*nmae"):
        caffe.Net(bad, caffe.TEST)


def test_bad_net_and_weights(tmp_path, net_path):
    unknown = write(tmp_path / "unknown.prototxt", NET.replace('"InnerProduct"', '"InnerProdukt"'))
    with pytest.raises(caffe.CaffeError, match="InnerProdukt"):
        caffe.Net(unknown, caffe.TEST)
    garbage = write(tmp_path / "garbage.caffemodel", "this is not a caffemodel")
    with pytest.raises(caffe.CaffeError, match="garbage.caffemodel"):
        caffe.Net(net_path, garbage, caffe.TEST)
    # Weights of another shape: the error names the layer.
    other = caffe.Net(write(tmp_path / "wide.prototxt", NET.replace("num_output: 4", "num_output: 6")), caffe.TEST)
    other.save(str(tmp_path / "wide.caffemodel"))
    with pytest.raises(caffe.CaffeError, match="ip"):
        caffe.Net(net_path, str(tmp_path / "wide.caffemodel"), caffe.TEST)
    with pytest.raises(TypeError):
        caffe.Net(net_path, "TEST")
