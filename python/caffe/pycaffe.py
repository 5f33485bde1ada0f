"""pycaffe's Python conveniences on taihu's Net (as BVLC caffe/pycaffe.py adds them):
blobs, params and layer_dict as OrderedDicts, inputs/outputs by name, forward and
backward with keyword inputs and start/end layers, top_names/bottom_names, and the
caffe.Layer base class of Python layers.

Blob lookups that fail raise KeyError naming the blob and the net's blobs.
"""
from collections import OrderedDict

import numpy as np

from ._caffe import Net


class _NamedDict(OrderedDict):
    """An OrderedDict whose KeyError names what was asked for and what exists."""

    def __init__(self, what, items):
        super().__init__(items)
        self._what = what

    def __missing__(self, key):
        raise KeyError("no %s named %r (the net has: %s)" % (self._what, key, ", ".join(self.keys())))


def _cached(name, make):
    def getter(self):
        try:
            return self.__dict__[name]
        except KeyError:
            value = make(self)
            self.__dict__[name] = value
            return value
    return property(getter)


def _blobs(self):
    return _NamedDict("blob", zip(self._blob_names, self._blobs))


def _params(self):
    return _NamedDict("layer with parameters",
                      [(name, layer.blobs) for name, layer in zip(self._layer_names, self.layers)
                       if len(layer.blobs) > 0])


def _layer_dict(self):
    return _NamedDict("layer", zip(self._layer_names, self.layers))


def _inputs(self):
    return [self._blob_names[i] for i in self._inputs]


def _outputs(self):
    return [self._blob_names[i] for i in self._outputs]


def _top_names(self):
    return OrderedDict((name, [self._blob_names[i] for i in self._top_ids(k)])
                       for k, name in enumerate(self._layer_names))


def _bottom_names(self):
    return OrderedDict((name, [self._blob_names[i] for i in self._bottom_ids(k)])
                       for k, name in enumerate(self._layer_names))


def _layer_index(self, name, what):
    try:
        return list(self._layer_names).index(name)
    except ValueError:
        raise KeyError("%s=%r: no layer of that name (the net has: %s)"
                       % (what, name, ", ".join(self._layer_names))) from None


def _reshape_if_inputs_changed(self):
    # Caffe reshapes every layer on each Forward; taihu's Net keeps shapes until
    # reshape(), so re-shape when an input blob's shape moved since the last forward.
    shapes = tuple(self.blobs[name].shape for name in self.inputs)
    if shapes != self.__dict__.get("_input_shapes", shapes):
        self.reshape()
    self.__dict__["_input_shapes"] = shapes


def _forward(self, blobs=None, start=None, end=None, **kwargs):
    """Runs layers start..end (names; default all) and returns {output name: data}.

    kwargs set input blobs (numpy arrays of the blob's shape); `blobs` names extra
    blobs to return. With `end`, the end layer's tops are returned.
    """
    blobs = list(blobs or [])
    start_ind = _layer_index(self, start, "start") if start is not None else 0
    if end is not None:
        end_ind = _layer_index(self, end, "end")
        outputs = [self._blob_names[i] for i in self._top_ids(end_ind)] + blobs
        if not outputs and end in self.blobs:
            outputs = [end]
    else:
        end_ind = len(self.layers) - 1
        outputs = self.outputs + blobs
    if kwargs:
        unknown = set(kwargs) - set(self.inputs)
        if unknown:
            raise KeyError("forward(): %s not among the net's inputs (%s)"
                           % (", ".join(sorted(unknown)), ", ".join(self.inputs)))
        for name, value in kwargs.items():
            value = np.asarray(value)
            if value.ndim == 0 or value.shape[0] != self.blobs[name].shape[0]:
                raise ValueError("forward(): input %r has shape %s; the net's batch is %s"
                                 % (name, value.shape, self.blobs[name].shape))
            self.blobs[name].data[...] = value
    _reshape_if_inputs_changed(self)
    self._forward(start_ind, end_ind)
    return {name: self.blobs[name].data for name in dict.fromkeys(outputs)}


def _backward(self, diffs=None, start=None, end=None, **kwargs):
    """Runs backward from layer `start` (default last) down to `end` (default first)
    and returns {input name: diff}. kwargs set the diffs of output blobs."""
    diffs = list(diffs or [])
    start_ind = _layer_index(self, start, "start") if start is not None else len(self.layers) - 1
    if end is not None:
        end_ind = _layer_index(self, end, "end")
        outputs = [self._blob_names[i] for i in self._bottom_ids(end_ind)] + diffs
    else:
        end_ind = 0
        outputs = self.inputs + diffs
    if kwargs:
        unknown = set(kwargs) - set(self.outputs)
        if unknown:
            raise KeyError("backward(): %s not among the net's outputs (%s)"
                           % (", ".join(sorted(unknown)), ", ".join(self.outputs)))
        for name, value in kwargs.items():
            self.blobs[name].diff[...] = value
    self._backward(start_ind, end_ind)
    return {name: self.blobs[name].diff for name in dict.fromkeys(outputs)}


def _forward_all(self, blobs=None, **kwargs):
    """forward() over inputs of any batch count, in net-sized batches; returns the
    outputs (and `blobs`) concatenated."""
    names = list(self.outputs) + list(blobs or [])
    if not kwargs:
        return self.forward(blobs=blobs)
    total = len(next(iter(kwargs.values())))
    batch = self.blobs[self.inputs[0]].shape[0]
    pieces = {name: [] for name in names}
    for lo in range(0, total, batch):
        chunk = {}
        for name, value in kwargs.items():
            part = np.asarray(value[lo:lo + batch])
            if len(part) < batch:  # pad the last batch as pycaffe does
                pad = np.zeros((batch - len(part),) + part.shape[1:], part.dtype)
                part = np.concatenate([part, pad])
            chunk[name] = part
        out = self.forward(blobs=blobs, **chunk)
        n = min(batch, total - lo)
        for name in names:
            pieces[name].append(out[name][:n].copy())
    return {name: np.concatenate(p) for name, p in pieces.items()}


Net.blobs = _cached("_blobs_dict", _blobs)
Net.params = _cached("_params_dict", _params)
Net.layer_dict = _cached("_layer_dict", _layer_dict)
Net.inputs = _cached("_input_list", _inputs)
Net.outputs = _cached("_output_list", _outputs)
Net.top_names = _cached("_top_names", _top_names)
Net.bottom_names = _cached("_bottom_names", _bottom_names)
Net.blob_loss_weights = property(lambda self: OrderedDict(
    (self._blob_names[i], self._output_loss_weight(k)) for k, i in enumerate(self._outputs)))
Net.forward = _forward
Net.backward = _backward
Net.forward_all = _forward_all


class Layer:
    """Base class of Python layers (``type: "Python"``). taihu sets ``param_str``,
    ``phase`` and ``blobs`` (the layer's parameter Blobs; ``blobs.add_blob(*shape)``)
    before calling setup(bottom, top); then reshape, forward(bottom, top) and
    backward(top, propagate_down, bottom) with lists of Blobs, as pycaffe does."""

    def setup(self, bottom, top):
        pass

    def reshape(self, bottom, top):
        raise NotImplementedError("Python layer %s must define reshape()" % type(self).__name__)

    def forward(self, bottom, top):
        raise NotImplementedError("Python layer %s must define forward()" % type(self).__name__)

    def backward(self, top, propagate_down, bottom):
        raise NotImplementedError("Python layer %s must define backward()" % type(self).__name__)
