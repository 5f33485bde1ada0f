"""caffe: pycaffe's API on taihu (https://github.com/BVLC/caffe's python/caffe).

Net, Blob, the solvers and the modes come from the compiled core (_caffe); pycaffe.py
adds pycaffe's Python conveniences (Net.blobs, Net.params, forward(**inputs), ...).
The pure-Python modules (io, net_spec, draw) are imported when present; caffe.draw
needs pydot and is imported on demand (``from caffe import draw``).

Under mpirun (or another MPI launcher) with several ranks, `import caffe` starts MPI and
the solvers train data-parallel as `mpirun -np P taihu-caffe train` does; an uncaught
exception on one rank then aborts the whole job instead of leaving the others waiting.
"""
import importlib.util as _ilu
import sys as _sys

from ._caffe import (TRAIN, TEST, Blob, CaffeError, Phase, set_mode_cpu, set_mode_gpu, set_device,
                     set_random_seed, layer_type_list, Solver, SGDSolver, NesterovSolver, AdaGradSolver, RMSPropSolver,
                     AdamSolver, get_solver, solver_count, solver_rank, set_multiprocess, set_solver_count,
                     set_solver_rank, set_data_parallel_options)
from . import _caffe
from .pycaffe import Net, Layer
from .proto import caffe_pb2

__version__ = "1.0.0+taihu"


def _has(module):
    return _ilu.find_spec(__name__ + "." + module) is not None


if _has("io"):
    from . import io
if _has("net_spec"):
    from .net_spec import layers, params, NetSpec, to_proto


def _abort_job_on_uncaught_exception():
    previous = _sys.excepthook

    def hook(kind, value, traceback):
        previous(kind, value, traceback)
        _sys.stderr.flush()
        _caffe._abort_job(1)  # MPI_Abort: the other ranks would wait in a collective forever

    _sys.excepthook = hook


if solver_count() > 1:
    _abort_job_on_uncaught_exception()
