"""caffe.draw: a NetParameter as a graphviz picture, as pycaffe's caffe.draw.

get_pydot_graph(net, rankdir) builds a pydot.Dot with one box per layer (named
"<layer>_<type>", labelled with its type and main parameters; in-place neuron layers
as ovals), one octagon per blob, and edges bottom -> layer -> top; draw_net renders it
with graphviz's `dot` to bytes of the given format; draw_net_to_file writes a file
(format from its extension, written atomically). `phase` (caffe_pb2.TRAIN/TEST) keeps
only the layers that phase includes; None keeps all.
Needs pydot and graphviz's `dot` (Debian: python3-pydot graphviz); without them the
functions raise ImportError / RuntimeError saying so.
"""
import os
import tempfile

from .proto import caffe_pb2

# Styles as pycaffe draws them.
LAYER_STYLE_DEFAULT = {'shape': 'record', 'fillcolor': '#6495ED', 'style': 'filled'}
NEURON_LAYER_STYLE = {'shape': 'record', 'fillcolor': '#90EE90', 'style': 'filled'}
BLOB_STYLE = {'shape': 'octagon', 'fillcolor': '#E0E0E0', 'style': 'filled'}


def _pydot():
    try:
        import pydot
    except ImportError as e:
        raise ImportError('caffe.draw needs pydot and graphviz (Debian: apt-get install python3-pydot graphviz; '
                          'pip: pip install pydot, plus graphviz\'s dot program)') from e
    return pydot


def get_pooling_types_dict():
    """{PoolingParameter enum value: its name}."""
    return {v.number: v.name for v in caffe_pb2.PoolingParameter.PoolMethod.DESCRIPTOR.values}


def get_edge_label(layer):
    """The label of a layer's top edges: the batch size for data layers, the number of
    outputs for Convolution/Deconvolution/InnerProduct, nothing otherwise."""
    if layer.type == 'Data' and layer.HasField('data_param'):
        return 'Batch ' + str(layer.data_param.batch_size)
    if layer.type in ('Convolution', 'Deconvolution'):
        return str(layer.convolution_param.num_output)
    if layer.type == 'InnerProduct':
        return str(layer.inner_product_param.num_output)
    return '""'


def _first(repeated, default):
    return repeated[0] if len(repeated) else default


def get_layer_label(layer, rankdir, display_lrm=False):
    """The text in a layer's box: name, type and, for Convolution/Deconvolution and
    Pooling, kernel, stride and pad; with display_lrm the learning-rate multipliers."""
    # Vertical graphs have room for the fields on one line; horizontal ones stack them.
    separator = ' ' if rankdir in ('TB', 'BT') else '\\n'
    lines = ['"%s%s(%s)' % (layer.name, separator, layer.type)]
    if layer.type in ('Convolution', 'Deconvolution'):
        p = layer.convolution_param
        lines.append('kernel size: %d%sstride: %d%spad: %d' % (
            _first(p.kernel_size, p.kernel_h or 1), separator, _first(p.stride, p.stride_h or 1), separator,
            _first(p.pad, p.pad_h)))
    elif layer.type == 'Pooling':
        p = layer.pooling_param
        lines.append('pool type: %s%skernel size: %d%sstride: %d%spad: %d' % (
            get_pooling_types_dict()[p.pool], separator, p.kernel_size or p.kernel_h, separator, p.stride,
            separator, p.pad))
    if display_lrm and len(layer.param):
        lines.append('lr mult: %s' % ', '.join('%g' % ps.lr_mult for ps in layer.param))
    return separator.join(lines) + '"'


def choose_color_by_layertype(layertype):
    """Box colour: convolutions blue-green, pooling orange, inner products purple."""
    if layertype in ('Convolution', 'Deconvolution'):
        return '#FF5050'
    if layertype == 'Pooling':
        return '#FF9900'
    if layertype == 'InnerProduct':
        return '#CC33FF'
    return '#6495ED'


def _included(layer, phase):
    if phase is None:
        return True
    if len(layer.include) and len(layer.exclude):
        raise ValueError('layer %s has both include and exclude rules' % layer.name)
    if len(layer.include):
        return any(rule.phase == phase for rule in layer.include)
    return not any(rule.HasField('phase') and rule.phase == phase for rule in layer.exclude)


def get_pydot_graph(caffe_net, rankdir, label_edges=True, phase=None, display_lrm=False):
    """A pydot.Dot of `caffe_net` (a caffe_pb2.NetParameter)."""
    pydot = _pydot()
    graph = pydot.Dot(caffe_net.name or 'Net', graph_type='digraph', rankdir=rankdir)
    nodes = OrderedNodes()
    edges = []
    for layer in caffe_net.layer:
        if not _included(layer, phase):
            continue
        node_name = '%s_%s' % (layer.name, layer.type)
        label = get_layer_label(layer, rankdir, display_lrm=display_lrm)
        in_place = len(layer.bottom) == 1 and len(layer.top) == 1 and layer.bottom[0] == layer.top[0]
        style = dict(NEURON_LAYER_STYLE if in_place else LAYER_STYLE_DEFAULT)
        if not in_place:
            style['fillcolor'] = choose_color_by_layertype(layer.type)
        nodes.add(node_name, pydot.Node(node_name, label=label, **style))
        for bottom in layer.bottom:
            nodes.add(bottom + '_blob', pydot.Node(bottom + '_blob', label='"%s"' % bottom, **BLOB_STYLE))
            edges.append((bottom + '_blob', node_name, '""'))
        for top in layer.top:
            nodes.add(top + '_blob', pydot.Node(top + '_blob', label='"%s"' % top, **BLOB_STYLE))
            edges.append((node_name, top + '_blob', get_edge_label(layer) if label_edges else '""'))
    for node in nodes.values():
        graph.add_node(node)
    for src, dst, label in edges:
        graph.add_edge(pydot.Edge(nodes[src], nodes[dst], label=label))
    return graph


class OrderedNodes(dict):
    """Nodes by name; the first definition of a name is kept."""

    def add(self, name, node):
        self.setdefault(name, node)


def draw_net(caffe_net, rankdir, ext='png', phase=None, display_lrm=False):
    """The picture of `caffe_net` as bytes in format `ext` (png, svg, pdf, dot, ...)."""
    graph = get_pydot_graph(caffe_net, rankdir, phase=phase, display_lrm=display_lrm)
    try:
        return graph.create(format=ext)
    except FileNotFoundError as e:  # pydot found no `dot` program
        raise RuntimeError('caffe.draw: graphviz\'s dot program is not installed (Debian: apt-get install '
                           'graphviz): %s' % e) from e
    except Exception as e:
        if 'dot' in str(e) and ('not found' in str(e) or 'No such file' in str(e)):
            raise RuntimeError('caffe.draw: graphviz\'s dot program is not installed (Debian: apt-get install '
                               'graphviz): %s' % e) from e
        raise


def draw_net_to_file(caffe_net, filename, rankdir='LR', phase=None, display_lrm=False):
    """Writes the picture of `caffe_net` to `filename`, in the format its extension
    names; atomically (a temporary file in the same folder, then a rename)."""
    ext = os.path.splitext(filename)[1][1:] or 'png'
    data = draw_net(caffe_net, rankdir, ext, phase=phase, display_lrm=display_lrm)
    folder = os.path.dirname(os.path.abspath(filename))
    fd, tmp = tempfile.mkstemp(prefix='.' + os.path.basename(filename) + '.', dir=folder)
    umask = os.umask(0)
    os.umask(umask)
    try:
        os.fchmod(fd, 0o666 & ~umask)  # as open() would create it, not mkstemp's 0600
        with os.fdopen(fd, 'wb') as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, filename)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
