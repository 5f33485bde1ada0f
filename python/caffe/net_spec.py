"""caffe.net_spec: writing a NetParameter from Python, as pycaffe's NetSpec does.

    from caffe import layers as L, params as P
    n = caffe.NetSpec()
    n.data, n.label = L.Data(batch_size=64, backend=P.Data.LMDB, source='train_lmdb',
                             transform_param=dict(scale=1. / 255), ntop=2)
    n.conv1 = L.Convolution(n.data, kernel_size=5, num_output=20, weight_filler=dict(type='xavier'))
    n.relu1 = L.ReLU(n.conv1, in_place=True)
    print(n.to_proto())          # a caffe_pb2.NetParameter; str() is the prototxt

Rules (pycaffe's): `L.<Type>(*bottoms, **kwargs)` makes a layer of that type; each
bottom must be a Top. `ntop=k` gives k tops (0: the layer itself), `in_place=True`
writes the top over the bottom. A keyword ending in `param` (param, include,
transform_param, loss_param, ...) is a LayerParameter field; any other keyword goes to
the layer type's own `<type>_param` message when that has the field, else to the
LayerParameter. Values: scalars, lists (repeated fields), dicts (messages), lists of
dicts (repeated messages). Layer and top names are the NetSpec attribute names; unnamed
tops get `<Type><k>`. `P.<Type>.<ENUM>` reads enum values, e.g. P.Pooling.MAX.
"""
from collections import Counter, OrderedDict

from .proto import caffe_pb2


def param_name_dict():
    """{layer type: the prefix of its `<prefix>_param` field}, read from LayerParameter
    (e.g. 'Convolution': 'convolution', 'Data': 'data'), with Caffe's types that share
    another type's parameters."""
    layer = caffe_pb2.LayerParameter()
    names = {}
    for field in layer.DESCRIPTOR.fields:
        if not field.name.endswith('_param') or field.message_type is None:
            continue
        type_name = field.message_type.name
        if type_name.endswith('Parameter'):
            names[type_name[:-len('Parameter')]] = field.name[:-len('_param')]
    # Types whose parameters live in another type's message.
    for type_name, prefix in (('Deconvolution', 'convolution'), ('SoftmaxWithLoss', 'softmax'),
                              ('LSTM', 'recurrent'), ('RNN', 'recurrent')):
        if prefix + '_param' in layer.DESCRIPTOR.fields_by_name:
            names.setdefault(type_name, prefix)
    return names


_param_names = param_name_dict()


def assign_proto(proto, name, val):
    """Sets proto.<name> from a Python value: a dict fills a message, a list extends a
    repeated field (dicts in it add messages), a scalar sets (or, for a repeated
    field, appends)."""
    field = proto.DESCRIPTOR.fields_by_name.get(name)
    if field is None:
        raise AttributeError('%s has no field named %r' % (proto.DESCRIPTOR.name, name))
    repeated = field.label == field.LABEL_REPEATED
    if repeated and not isinstance(val, (list, tuple)):
        val = [val]
    if isinstance(val, (list, tuple)):
        if not repeated:
            raise ValueError('%s.%s is not a repeated field; got a list %r' % (proto.DESCRIPTOR.name, name, val))
        target = getattr(proto, name)
        for item in val:
            if isinstance(item, dict):
                message = target.add()
                for k, v in item.items():
                    assign_proto(message, k, v)
            else:
                target.append(item)
    elif isinstance(val, dict):
        message = getattr(proto, name)
        for k, v in val.items():
            assign_proto(message, k, v)
    else:
        setattr(proto, name, val)


class Top:
    """One output (top blob) of a layer Function: its n-th top."""

    def __init__(self, fn, n):
        self.fn = fn
        self.n = n

    def to_proto(self):
        """The NetParameter of every layer this top depends on."""
        return to_proto(self)

    def _to_proto(self, layers, names, autonames):
        return self.fn._to_proto(layers, names, autonames)


class Function:
    """A layer: its type, bottoms (Tops) and keyword parameters."""

    def __init__(self, type_name, inputs, params):
        self.type_name = type_name
        for index, bottom in enumerate(inputs):
            if not isinstance(bottom, Top):
                raise TypeError('%s input %d is not a Top (type is %s)' % (type_name, index, type(bottom).__name__))
        self.inputs = inputs
        self.params = dict(params)
        self.ntop = self.params.pop('ntop', 1)
        self.in_place = self.params.pop('in_place', False)
        if self.in_place and len(inputs) != 1:
            raise ValueError('%s: in_place needs exactly one bottom, got %d' % (type_name, len(inputs)))
        self.tops = tuple(Top(self, n) for n in range(self.ntop))

    def _get_name(self, names, autonames):
        if self not in names and self.ntop > 0:
            names[self] = self._get_top_name(self.tops[0], names, autonames)
        elif self not in names:
            autonames[self.type_name] += 1
            names[self] = self.type_name + str(autonames[self.type_name])
        return names[self]

    def _get_top_name(self, top, names, autonames):
        if top not in names:
            autonames[top.fn.type_name] += 1
            names[top] = top.fn.type_name + str(autonames[top.fn.type_name])
        return names[top]

    def _to_proto(self, layers, names, autonames):
        if self in layers:
            return
        bottom_names = []
        for bottom in self.inputs:
            bottom._to_proto(layers, names, autonames)
            bottom_names.append(layers[bottom.fn].top[bottom.n])
        layer = caffe_pb2.LayerParameter()
        layer.type = self.type_name
        layer.bottom.extend(bottom_names)
        if self.in_place:
            layer.top.extend(layer.bottom)
        else:
            for top in self.tops:
                layer.top.append(self._get_top_name(top, names, autonames))
        layer.name = self._get_name(names, autonames)
        for k, v in self.params.items():
            if k.endswith('param'):  # param, transform_param, loss_param, ...: LayerParameter's own
                assign_proto(layer, k, v)
                continue
            prefix = _param_names.get(self.type_name)
            type_param = getattr(layer, prefix + '_param') if prefix else None
            if type_param is not None and k in type_param.DESCRIPTOR.fields_by_name:
                assign_proto(type_param, k, v)
            elif k in layer.DESCRIPTOR.fields_by_name:
                assign_proto(layer, k, v)
            else:
                where = ('%s_param or LayerParameter' % prefix) if prefix else 'LayerParameter'
                raise AttributeError('%s layer %s: unknown parameter %r (not a field of %s)'
                                     % (self.type_name, layer.name, k, where))
        layers[self] = layer


class NetSpec:
    """Named tops, in assignment order; to_proto() writes every layer they need, each
    named after the attribute its (first) top was assigned to."""

    def __init__(self):
        super().__setattr__('tops', OrderedDict())

    def __setattr__(self, name, value):
        if not isinstance(value, Top):
            raise TypeError('NetSpec.%s: a NetSpec holds layer tops, got %s' % (name, type(value).__name__))
        self.tops[name] = value

    def __getattr__(self, name):
        try:
            return self.tops[name]
        except KeyError:
            raise AttributeError('NetSpec has no top named %r' % name) from None

    def __setitem__(self, key, value):
        self.__setattr__(key, value)

    def __getitem__(self, item):
        return self.__getattr__(item)

    def __delitem__(self, name):
        del self.tops[name]

    def keys(self):
        return list(self.tops.keys())

    def vals(self):
        return list(self.tops.values())

    def to_proto(self):
        names = {v: k for k, v in self.tops.items()}
        autonames = Counter()
        layers = OrderedDict()
        for top in self.tops.values():
            top._to_proto(layers, names, autonames)
        net = caffe_pb2.NetParameter()
        net.layer.extend(layers.values())
        return net


def to_proto(*tops):
    """The NetParameter of the layers the given tops depend on (names generated)."""
    layers = OrderedDict()
    autonames = Counter()
    for top in tops:
        top.fn._to_proto(layers, {}, autonames)
    net = caffe_pb2.NetParameter()
    net.layer.extend(layers.values())
    return net


class Layers:
    """L.<Type>(*bottoms, **params): a layer of that type; returns its Top (ntop=1),
    its tuple of Tops, or the Function itself (ntop=0)."""

    def __getattr__(self, name):
        if name.startswith('__'):
            raise AttributeError(name)

        def layer_fn(*args, **kwargs):
            fn = Function(name, args, kwargs)
            if fn.ntop == 0:
                return fn
            if fn.ntop == 1:
                return fn.tops[0]
            return fn.tops
        return layer_fn


class Parameters:
    """P.<Type>.<NAME>: a value of <Type>Parameter's enums, e.g. P.Pooling.MAX."""

    def __getattr__(self, name):
        if name.startswith('__'):
            raise AttributeError(name)
        message = getattr(caffe_pb2, name + 'Parameter', None)
        if message is None:
            raise AttributeError('caffe_pb2 has no %sParameter' % name)

        class Param:
            def __getattr__(self, param_name):
                if param_name.startswith('__'):
                    raise AttributeError(param_name)
                return getattr(message, param_name)
        return Param()


layers = Layers()
params = Parameters()
