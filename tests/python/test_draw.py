"""caffe.draw and `python -m caffe.draw_net`: one DOT node per layer (and per blob),
an edge per bottom and top, phase filtering, a real PNG written (magic bytes, size from
its IHDR), clear errors for a bad prototxt and for missing pydot."""
import os
import struct
import subprocess
import sys
from pathlib import Path

import pytest
from google.protobuf import text_format

import caffe
from caffe.proto import caffe_pb2

pydot = pytest.importorskip('pydot')
import caffe.draw  # noqa: E402  (after the skip: it needs pydot only when called)

ROOT = Path(__file__).resolve().parents[2]
LENET = ROOT / 'examples' / 'caffe' / 'lenet_train_test.prototxt'
PNG_MAGIC = b'\x89PNG\r\n\x1a\n'
HAVE_DOT = any(os.access(os.path.join(p, 'dot'), os.X_OK) for p in os.environ.get('PATH', '').split(os.pathsep))


def read_net(path):
    net = caffe_pb2.NetParameter()
    text_format.Merge(Path(path).read_text(), net)
    return net


def node_names(graph):
    return [n.get_name().strip('"') for n in graph.get_nodes()]


def test_graph_has_one_node_per_layer_and_blob():
    net = read_net(LENET)
    graph = caffe.draw.get_pydot_graph(net, 'LR')
    names = node_names(graph)
    layer_nodes = [n for n in names if not n.endswith('_blob')]
    # Two Data layers share the name "mnist" (TRAIN and TEST) and so one node, as in pycaffe.
    assert sorted(layer_nodes) == sorted({'%s_%s' % (l.name, l.type) for l in net.layer})
    blobs = {b for l in net.layer for b in list(l.bottom) + list(l.top)}
    assert sorted(n for n in names if n.endswith('_blob')) == sorted(b + '_blob' for b in blobs)
    assert len(graph.get_edges()) == sum(len(l.bottom) + len(l.top) for l in net.layer)
    dot = graph.to_string()
    assert 'rankdir=LR' in dot and 'num_output' not in dot
    conv1 = graph.get_node('conv1_Convolution')[0]
    assert 'kernel size: 5' in conv1.get('label')


def test_phase_filter_and_in_place_style():
    net = read_net(LENET)
    train = node_names(caffe.draw.get_pydot_graph(net, 'TB', phase=caffe_pb2.TRAIN))
    test = node_names(caffe.draw.get_pydot_graph(net, 'TB', phase=caffe_pb2.TEST))
    assert 'accuracy_Accuracy' not in train and 'accuracy_Accuracy' in test
    graph = caffe.draw.get_pydot_graph(net, 'TB')
    relu = graph.get_node('relu1_ReLU')[0]
    assert relu.get('fillcolor').strip('"') == caffe.draw.NEURON_LAYER_STYLE['fillcolor']
    assert caffe.draw.get_edge_label(net.layer[2]) == '20'  # conv1's num_output on its top edge


def png_size(data):
    assert data[:8] == PNG_MAGIC, data[:16]
    assert data[12:16] == b'IHDR'
    return struct.unpack('>II', data[16:24])


@pytest.mark.skipif(not HAVE_DOT, reason="graphviz's dot is not installed")
def test_draw_net_to_file_writes_png(tmp_path):
    net = read_net(LENET)
    out = tmp_path / 'lenet.png'
    caffe.draw.draw_net_to_file(net, str(out), 'LR')
    w, h = png_size(out.read_bytes())
    assert w > h > 0  # left to right: wider than tall
    assert [p.name for p in tmp_path.iterdir()] == ['lenet.png']  # no temp file left
    svg = caffe.draw.draw_net(net, 'TB', ext='svg')
    assert b'<svg' in svg and b'conv1' in svg


@pytest.mark.skipif(not HAVE_DOT, reason="graphviz's dot is not installed")
def test_draw_net_module_cli(tmp_path):
    out = tmp_path / 'net.png'
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    p = subprocess.run([sys.executable, '-m', 'caffe.draw_net', str(LENET), str(out), '--rankdir', 'TB'],
                       capture_output=True, text=True, env=env, timeout=120)
    assert p.returncode == 0, p.stderr
    w, h = png_size(out.read_bytes())
    assert h > w > 0  # top to bottom: taller than wide

    bad = tmp_path / 'bad.prototxt'
    bad.write_text('layer {\n  name: "x"\n  nmae: "y"\n}\n')
    p = subprocess.run([sys.executable, '-m', 'caffe.draw_net', str(bad), str(tmp_path / 'bad.png')],
                       capture_output=True, text=True, env=env, timeout=120)
    assert p.returncode == 1
    assert str(bad) + ':3:' in p.stderr and 'nmae' in p.stderr, p.stderr
    assert not (tmp_path / 'bad.png').exists()
    p = subprocess.run([sys.executable, '-m', 'caffe.draw_net', str(LENET), str(out), '--rankdir', 'XY'],
                       capture_output=True, text=True, env=env, timeout=120)
    assert p.returncode == 2 and 'XY' in p.stderr


def test_missing_pydot_is_a_clear_error(monkeypatch):
    monkeypatch.setitem(sys.modules, 'pydot', None)
    with pytest.raises(ImportError, match='python3-pydot graphviz'):
        caffe.draw.get_pydot_graph(read_net(LENET), 'LR')
