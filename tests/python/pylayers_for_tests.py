"""Python layers used by the tests (importable as a module, as python_param needs).

EuclideanLossLayer is Caffe's examples/pycaffe/layers/pyloss.py computed in numpy;
ScaleByParam has a learnable parameter (self.blobs); Failing raises in forward."""
import numpy as np

import caffe


class EuclideanLossLayer(caffe.Layer):
    def setup(self, bottom, top):
        if len(bottom) != 2:
            raise Exception("Need two inputs to compute distance.")

    def reshape(self, bottom, top):
        if bottom[0].count != bottom[1].count:
            raise Exception("Inputs must have the same dimension.")
        self.diff = np.zeros_like(bottom[0].data, dtype=np.float32)
        top[0].reshape(1)

    def forward(self, bottom, top):
        self.diff[...] = bottom[0].data - bottom[1].data
        top[0].data[...] = np.sum(self.diff ** 2) / bottom[0].num / 2.

    def backward(self, top, propagate_down, bottom):
        for i in range(2):
            if not propagate_down[i]:
                continue
            sign = 1 if i == 0 else -1
            bottom[i].diff[...] = sign * self.diff / bottom[i].num


class ScaleByParam(caffe.Layer):
    """top = bottom * w (one learnable scalar w, initialised from param_str)."""

    def setup(self, bottom, top):
        self.blobs.add_blob(1)
        self.blobs[0].data[...] = float(self.param_str)

    def reshape(self, bottom, top):
        top[0].reshape(*bottom[0].shape)

    def forward(self, bottom, top):
        top[0].data[...] = bottom[0].data * self.blobs[0].data[0]

    def backward(self, top, propagate_down, bottom):
        self.blobs[0].diff[0] += np.sum(top[0].diff * bottom[0].data)
        if propagate_down[0]:
            bottom[0].diff[...] = top[0].diff * self.blobs[0].data[0]


class Failing(caffe.Layer):
    def setup(self, bottom, top):
        pass

    def reshape(self, bottom, top):
        top[0].reshape(*bottom[0].shape)

    def forward(self, bottom, top):
        raise ValueError("Failing.forward: deliberate error (param_str=%s, train=%s)"
                         % (self.param_str, self.phase == caffe.TRAIN))

    def backward(self, top, propagate_down, bottom):
        pass
