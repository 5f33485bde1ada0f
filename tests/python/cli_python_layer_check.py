#!/usr/bin/env python3
"""taihu-caffe train with a Python layer (the numpy Euclidean loss of
pylayers_for_tests.py) through the embedded interpreter: with the caffe package and
the layer's module on PYTHONPATH (as ctest sets it) training runs and the loss falls;
with a module that does not exist the run fails with a message naming the module and
no crash. Exits 77 (skipped) when taihu-caffe or the plugin is not built."""
import os
import re
import subprocess
import sys
import tempfile

tool = os.environ.get("TAIHU_CAFFE", "")
if not os.access(tool, os.X_OK):
    print("skipped: TAIHU_CAFFE (%r) is not an executable" % tool)
    sys.exit(77)
plugin = os.path.join(os.path.dirname(os.path.dirname(tool)), "lib", "libtaihu_caffe_python.so")
if not os.path.isfile(plugin):
    print("skipped: %s not built" % plugin)
    sys.exit(77)

NET = """name: "pyreg"
layer {{ name: "data" type: "FileData" top: "data" top: "label"
  transform_param {{ scale: 0.00390625 }}
  file_data_param {{ source: "img.gz" label_source: "lab.gz" batch_size: 16 count: 256 }} }}
layer {{ name: "ip" type: "InnerProduct" bottom: "data" top: "ip"
  inner_product_param {{ num_output: 1 weight_filler {{ type: "gaussian" std: 0.01 }} }} }}
layer {{ name: "flat" type: "Reshape" bottom: "label" top: "target" reshape_param {{ shape {{ dim: -1 dim: 1 }} }} }}
layer {{ name: "loss" type: "Python" bottom: "ip" bottom: "target" top: "loss" loss_weight: 1
  python_param {{ module: "{module}" layer: "EuclideanLossLayer" }} }}
"""
SOLVER = """net: "net.prototxt"
base_lr: 0.001
momentum: 0.9
lr_policy: "fixed"
max_iter: 60
display: 10
snapshot_prefix: "snap/pyreg"
random_seed: 1
"""


def fail(msg, log=""):
    print("FAIL: " + msg)
    print(log[-4000:])
    sys.exit(1)


with tempfile.TemporaryDirectory() as d:
    subprocess.run([tool, "make_digits", "img.gz", "lab.gz", "--count=256", "--seed=4"], cwd=d, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.makedirs(os.path.join(d, "snap"))
    with open(os.path.join(d, "solver.prototxt"), "w") as f:
        f.write(SOLVER)

    with open(os.path.join(d, "net.prototxt"), "w") as f:
        f.write(NET.format(module="pylayers_for_tests"))
    p = subprocess.run([tool, "train", "--solver=solver.prototxt"], cwd=d, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, timeout=240)
    if p.returncode != 0:
        fail("train with a Python layer exited %d" % p.returncode, p.stdout)
    losses = [float(v) for v in re.findall(r"Iteration \d+.*, loss = ([-\d.eE+]+)", p.stdout)]
    if len(losses) < 3 or not losses[-1] < 0.5 * losses[0]:
        fail("loss did not fall: %s" % losses, p.stdout)
    if not os.path.isfile(os.path.join(d, "snap", "pyreg_iter_60.caffemodel")):
        fail("no final snapshot", p.stdout)

    with open(os.path.join(d, "net.prototxt"), "w") as f:
        f.write(NET.format(module="no_such_layer_module"))
    p = subprocess.run([tool, "train", "--solver=solver.prototxt"], cwd=d, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, timeout=120)
    if p.returncode == 0 or p.returncode < 0:
        fail("a missing Python module must fail cleanly (exit %d)" % p.returncode, p.stdout)
    if "no_such_layer_module" not in p.stdout or "layer loss (Python)" not in p.stdout:
        fail("the error must name the layer and the module", p.stdout)
print("OK: taihu-caffe trains with a Python layer (loss %.4g -> %.4g); a missing module is a clear error"
      % (losses[0], losses[-1]))
