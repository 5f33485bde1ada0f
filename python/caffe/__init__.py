"""caffe: pycaffe's API on taihu (https://github.com/BVLC/caffe's python/caffe).

Net, Blob, the solvers and the modes come from the compiled core (_caffe); pycaffe.py
adds pycaffe's Python conveniences (Net.blobs, Net.params, forward(**inputs), ...).
The pure-Python modules (io, net_spec, draw) are imported when present; caffe.draw
needs pydot and is imported on demand (``from caffe import draw``).
"""
import importlib.util as _ilu

from ._caffe import (TRAIN, TEST, Blob, CaffeError, Phase, set_mode_cpu, set_mode_gpu, set_device,
                     set_random_seed, layer_type_list, Solver, SGDSolver, NesterovSolver, AdaGradSolver, RMSPropSolver,
                     AdamSolver, get_solver)
from .pycaffe import Net, Layer
from .proto import caffe_pb2

__version__ = "1.0.0+taihu"


def _has(module):
    return _ilu.find_spec(__name__ + "." + module) is not None


if _has("io"):
    from . import io
if _has("net_spec"):
    from .net_spec import layers, params, NetSpec, to_proto
