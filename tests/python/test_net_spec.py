"""caffe.NetSpec / caffe.layers / caffe.params: the prototxt of Caffe's "learning LeNet"
tutorial (pycaffe's documented output), and LeNet written with NetSpec compared field
by field with the hand-written prototxts (the repo's examples/caffe and BVLC's deploy
lenet.prototxt from ../shared/data/caffe when present)."""
import os
import sys
from pathlib import Path

import pytest
from google.protobuf import text_format

import caffe
from caffe import layers as L
from caffe import params as P
from caffe.proto import caffe_pb2

ROOT = Path(__file__).resolve().parents[2]
SHARED = Path(os.environ.get('TAIHU_SHARED_DATA', ROOT.parent / 'shared' / 'data'))
# The notebook's lenet(), as examples/caffe/learning_lenet.py writes it with the API.
sys.path.insert(0, str(ROOT / 'examples' / 'caffe'))
from learning_lenet import lenet as tutorial_lenet  # noqa: E402


def read_net(path):
    net = caffe_pb2.NetParameter()
    text_format.Merge(Path(path).read_text(), net)
    return net


# What pycaffe writes for the tutorial's lenet('mnist/mnist_train_lmdb', 64)
# (examples/mnist/lenet_auto_train.prototxt in BVLC Caffe).
TUTORIAL_PROTOTXT = """
layer { name: "data" type: "Data" top: "data" top: "label"
  transform_param { scale: 0.00392156862745 }
  data_param { source: "mnist/mnist_train_lmdb" batch_size: 64 backend: LMDB } }
layer { name: "conv1" type: "Convolution" bottom: "data" top: "conv1"
  convolution_param { num_output: 20 kernel_size: 5 weight_filler { type: "xavier" } } }
layer { name: "pool1" type: "Pooling" bottom: "conv1" top: "pool1"
  pooling_param { pool: MAX kernel_size: 2 stride: 2 } }
layer { name: "conv2" type: "Convolution" bottom: "pool1" top: "conv2"
  convolution_param { num_output: 50 kernel_size: 5 weight_filler { type: "xavier" } } }
layer { name: "pool2" type: "Pooling" bottom: "conv2" top: "pool2"
  pooling_param { pool: MAX kernel_size: 2 stride: 2 } }
layer { name: "fc1" type: "InnerProduct" bottom: "pool2" top: "fc1"
  inner_product_param { num_output: 500 weight_filler { type: "xavier" } } }
layer { name: "relu1" type: "ReLU" bottom: "fc1" top: "fc1" }
layer { name: "score" type: "InnerProduct" bottom: "fc1" top: "score"
  inner_product_param { num_output: 10 weight_filler { type: "xavier" } } }
layer { name: "loss" type: "SoftmaxWithLoss" bottom: "score" bottom: "label" top: "loss" }
"""


def test_tutorial_lenet_prototxt():
    net = tutorial_lenet('mnist/mnist_train_lmdb', 64)
    text = str(net)
    reparsed = caffe_pb2.NetParameter()
    text_format.Merge(text, reparsed)  # the written prototxt parses back ...
    assert reparsed == net             # ... to the same message
    expected = caffe_pb2.NetParameter()
    text_format.Merge(TUTORIAL_PROTOTXT, expected)
    assert len(net.layer) == 9
    assert abs(net.layer[0].transform_param.scale - 1 / 255.) < 1e-9
    expected.layer[0].transform_param.scale = net.layer[0].transform_param.scale  # float32 either way
    assert net == expected, text


def lenet_layers(n, data, label, with_accuracy):
    """BVLC's LeNet body with its lr_mult and bias fillers (lenet_train_test.prototxt)."""
    lr = [dict(lr_mult=1), dict(lr_mult=2)]
    n.conv1 = L.Convolution(data, param=lr, num_output=20, kernel_size=5, stride=1,
                            weight_filler=dict(type='xavier'), bias_filler=dict(type='constant'))
    n.pool1 = L.Pooling(n.conv1, pool=P.Pooling.MAX, kernel_size=2, stride=2)
    n.conv2 = L.Convolution(n.pool1, param=lr, num_output=50, kernel_size=5, stride=1,
                            weight_filler=dict(type='xavier'), bias_filler=dict(type='constant'))
    n.pool2 = L.Pooling(n.conv2, pool=P.Pooling.MAX, kernel_size=2, stride=2)
    n.ip1 = L.InnerProduct(n.pool2, param=lr, num_output=500,
                           weight_filler=dict(type='xavier'), bias_filler=dict(type='constant'))
    n.relu1 = L.ReLU(n.ip1, in_place=True)
    n.ip2 = L.InnerProduct(n.relu1, param=lr, num_output=10,
                           weight_filler=dict(type='xavier'), bias_filler=dict(type='constant'))
    if with_accuracy:
        n.accuracy = L.Accuracy(n.ip2, label, include=dict(phase=caffe.TEST))
        n.loss = L.SoftmaxWithLoss(n.ip2, label)


def mnist_data(phase, source, batch_size):
    n = caffe.NetSpec()
    n.data, n.label = L.Data(name='mnist', include=dict(phase=phase), transform_param=dict(scale=0.00390625),
                             source=source, batch_size=batch_size, backend=P.Data.LMDB, ntop=2)
    return n


def test_lenet_train_test_equals_hand_written():
    hand = read_net(ROOT / 'examples' / 'caffe' / 'lenet_train_test.prototxt')
    train = mnist_data(caffe.TRAIN, hand.layer[0].data_param.source, 64)
    lenet_layers(train, train.data, train.label, with_accuracy=True)
    test_data = mnist_data(caffe.TEST, hand.layer[1].data_param.source, 100).to_proto()
    generated = train.to_proto()
    net = caffe_pb2.NetParameter(name='LeNet')
    net.layer.extend([generated.layer[0], test_data.layer[0]] + list(generated.layer[1:]))
    # Field by field, so a difference names its layer.
    assert [l.name for l in net.layer] == [l.name for l in hand.layer]
    for mine, theirs in zip(net.layer, hand.layer):
        assert mine == theirs, 'layer %s differs:\n%s\nvs\n%s' % (mine.name, mine, theirs)
    assert net == hand


def test_lenet_deploy_equals_bvlc():
    path = SHARED / 'caffe' / 'lenet.prototxt'
    if not path.exists():
        pytest.skip('no %s (../shared/data absent)' % path)
    hand = read_net(path)
    n = caffe.NetSpec()
    n.data = L.Input(shape=dict(dim=[64, 1, 28, 28]))
    lenet_layers(n, n.data, None, with_accuracy=False)
    n.prob = L.Softmax(n.ip2)
    net = n.to_proto()
    net.name = 'LeNet'
    for mine, theirs in zip(net.layer, hand.layer):
        assert mine == theirs, 'layer %s differs:\n%s\nvs\n%s' % (mine.name, mine, theirs)
    assert net == hand


def test_automatic_names_and_ntop():
    ip = L.InnerProduct(L.Input(shape=dict(dim=[2, 3])), num_output=4)
    relu = L.ReLU(ip)
    net = caffe.to_proto(relu)
    assert [(l.name, l.type, list(l.bottom), list(l.top)) for l in net.layer] == [
        ('Input1', 'Input', [], ['Input1']),
        ('InnerProduct1', 'InnerProduct', ['Input1'], ['InnerProduct1']),
        ('ReLU1', 'ReLU', ['InnerProduct1'], ['ReLU1'])]
    assert net.layer[1].inner_product_param.num_output == 4
    silence = L.Silence(ip, ntop=0)  # ntop=0: the layer itself, named by its type
    assert isinstance(silence, caffe.net_spec.Function)
    assert len(L.Slice(ip, ntop=3)) == 3


def test_generic_params_python_layer_and_enums():
    n = caffe.NetSpec()
    n.data = L.Input(shape=[dict(dim=[1, 2]), dict(dim=[1])], ntop=1)
    n.py = L.Python(n.data, module='my_layers', layer='EuclideanLoss', param_str='{"w": 2}', loss_weight=1)
    n.drop = L.Dropout(n.py, dropout_ratio=0.25, include=dict(phase=caffe.TRAIN), in_place=True)
    net = n.to_proto()
    py = net.layer[1]
    assert py.python_param.module == 'my_layers' and py.python_param.layer == 'EuclideanLoss'
    assert py.python_param.param_str == '{"w": 2}' and list(py.loss_weight) == [1.0]
    assert len(net.layer[0].input_param.shape) == 2
    drop = net.layer[2]
    assert drop.name == 'drop' and list(drop.top) == ['py'] and drop.include[0].phase == caffe.TRAIN
    assert abs(drop.dropout_param.dropout_ratio - 0.25) < 1e-7
    assert P.Pooling.MAX == caffe_pb2.PoolingParameter.MAX
    assert P.Pooling.AVE == caffe_pb2.PoolingParameter.AVE
    assert P.Data.LMDB == caffe_pb2.DataParameter.LMDB


def test_bad_specs_raise_naming_the_problem():
    with pytest.raises(TypeError, match='Convolution input 0 is not a Top'):
        L.Convolution('data', num_output=1)
    n = caffe.NetSpec()
    n.data = L.Input(shape=dict(dim=[1, 1, 4, 4]))
    n.conv = L.Convolution(n.data, num_outputs=3)
    with pytest.raises(AttributeError, match="unknown parameter 'num_outputs'"):
        n.to_proto()
    with pytest.raises(AttributeError, match="no top named 'nothing'"):
        n.nothing
    with pytest.raises(TypeError, match='holds layer tops'):
        n.x = 3
    with pytest.raises(AttributeError, match='has no NoSuchParameter'):
        P.NoSuch.MAX
