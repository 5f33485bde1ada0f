#!/usr/bin/env python3
"""Caffe's "learning LeNet" notebook (examples/01-learning-lenet.ipynb) as a script, on taihu.

    PYTHONPATH=build/python python3 examples/caffe/learning_lenet.py [WORKDIR] [--iters 2000]

Writes the notebook's train/test prototxt with caffe.NetSpec and its solver prototxt,
trains with caffe.SGDSolver in a solver.step(1) loop and prints the test accuracy the
notebook computes (argmax of `score` against `label` over the whole test split).
Data: the real MNIST test set (8000 train / 2000 test, as run_lenet.sh) when
$TAIHU_MNIST_DIR (default ../shared/data/mnist) holds t10k-*-ubyte.gz, otherwise 10000
synthetic digits (`taihu-caffe make_digits`). The LMDBs come from `taihu-caffe
convert_mnist` ($TAIHU_CAFFE, default build/bin/taihu-caffe), the notebook's
create_mnist.sh step. Exit status 0 when the accuracy reaches --target (default 0.98).

Data-parallel, unchanged: `mpirun -np 2 python3 examples/caffe/learning_lenet.py`. Each
rank prepares its own copy of the files (WORKDIR/rank<r>), reads its shard of the
training set (batch 64 per rank), and the ranks average their gradients every iteration;
only rank 0 prints.
"""
import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

import caffe
from caffe import layers as L
from caffe import params as P

ROOT = Path(__file__).resolve().parents[2]


def lenet(lmdb, batch_size):
    """The notebook's network: LeNet on an LMDB, pixels scaled to [0, 1]."""
    n = caffe.NetSpec()
    n.data, n.label = L.Data(batch_size=batch_size, backend=P.Data.LMDB, source=lmdb,
                             transform_param=dict(scale=1. / 255), ntop=2)
    n.conv1 = L.Convolution(n.data, kernel_size=5, num_output=20, weight_filler=dict(type='xavier'))
    n.pool1 = L.Pooling(n.conv1, kernel_size=2, stride=2, pool=P.Pooling.MAX)
    n.conv2 = L.Convolution(n.pool1, kernel_size=5, num_output=50, weight_filler=dict(type='xavier'))
    n.pool2 = L.Pooling(n.conv2, kernel_size=2, stride=2, pool=P.Pooling.MAX)
    n.fc1 = L.InnerProduct(n.pool2, num_output=500, weight_filler=dict(type='xavier'))
    n.relu1 = L.ReLU(n.fc1, in_place=True)
    n.score = L.InnerProduct(n.relu1, num_output=10, weight_filler=dict(type='xavier'))
    n.loss = L.SoftmaxWithLoss(n.score, n.label)
    return n.to_proto()


# The notebook's lenet_auto_solver.prototxt, with a random seed for a reproducible run.
SOLVER = """train_net: "{train}"
test_net: "{test}"
test_iter: 100
test_interval: 500
base_lr: 0.01
momentum: 0.9
weight_decay: 0.0005
lr_policy: "inv"
gamma: 0.0001
power: 0.75
display: 100
max_iter: 10000
snapshot: 5000
snapshot_prefix: "{prefix}"
random_seed: 1
"""


def make_lmdbs(work, tool, mnist_dir):
    """train_lmdb (8000 images) and test_lmdb (2000) in `work`; returns a description."""
    images, labels = Path(mnist_dir) / 't10k-images-idx3-ubyte.gz', Path(mnist_dir) / 't10k-labels-idx1-ubyte.gz'
    # Under mpirun the tool must not see the launcher's variables (it would start MPI).
    env = {k: v for k, v in os.environ.items() if not k.startswith(('OMPI_', 'PMIX_', 'PMI_', 'MPI_LOCALNRANKS'))}
    quiet = dict(check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    if images.exists() and labels.exists():
        what = 'real MNIST (%s), 8000 train / 2000 test' % mnist_dir
    else:
        images, labels = work / 'digits-images.gz', work / 'digits-labels.gz'
        subprocess.run([tool, 'make_digits', str(images), str(labels), '--count=10000', '--seed=1'], **quiet)
        what = '10000 synthetic digits (no MNIST at %s), 8000 train / 2000 test' % mnist_dir
    for name, flag in [('train_lmdb', '--count=8000'), ('test_lmdb', '--first=8000')]:
        if not (work / name).exists():
            subprocess.run([tool, 'convert_mnist', str(images), str(labels), str(work / name), flag], **quiet)
    return what


def notebook_accuracy(net, batches):
    """The notebook's count: argmax(score) == label over `batches` test batches."""
    correct = 0
    for _ in range(batches):
        net.forward()
        correct += int(np.sum(net.blobs['score'].data.argmax(1) == net.blobs['label'].data))
    return correct / float(batches * net.blobs['label'].data.shape[0])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('workdir', nargs='?', default=str(ROOT / 'build' / 'lenet-python'))
    parser.add_argument('--iters', type=int, default=2000, help='solver.step(1) calls after the first (default 2000)')
    parser.add_argument('--target', type=float, default=0.98, help='accuracy needed for exit status 0')
    args = parser.parse_args(argv)
    work = Path(args.workdir).resolve()
    rank = caffe.solver_rank()
    if caffe.solver_count() > 1:
        work = work / ('rank%d' % rank)  # no two ranks write the same file
    say = print if rank == 0 else (lambda *a, **k: None)
    work.mkdir(parents=True, exist_ok=True)
    tool = os.environ.get('TAIHU_CAFFE', str(ROOT / 'build' / 'bin' / 'taihu-caffe'))
    mnist = os.environ.get('TAIHU_MNIST_DIR', str(ROOT.parent / 'shared' / 'data' / 'mnist'))
    say('data:', make_lmdbs(work, tool, mnist))

    (work / 'lenet_auto_train.prototxt').write_text(str(lenet(str(work / 'train_lmdb'), 64)))
    (work / 'lenet_auto_test.prototxt').write_text(str(lenet(str(work / 'test_lmdb'), 100)))
    (work / 'lenet_auto_solver.prototxt').write_text(SOLVER.format(
        train=work / 'lenet_auto_train.prototxt', test=work / 'lenet_auto_test.prototxt', prefix=work / 'lenet'))

    caffe.set_mode_cpu()
    solver = caffe.SGDSolver(str(work / 'lenet_auto_solver.prototxt'))
    for k, v in solver.net.blobs.items():
        say('  blob %-6s %s' % (k, v.data.shape))
    solver.step(1)
    start = time.time()
    for it in range(args.iters):
        solver.step(1)
        if (it + 1) % 500 == 0:
            say('iteration %5d  train loss %.4f  (%.1f s)' % (solver.iter, float(solver.net.blobs['loss'].data),
                                                                time.time() - start))
    seconds = time.time() - start
    acc = notebook_accuracy(solver.test_nets[0], 20)  # 20 x 100 = the 2000 test images
    say('test accuracy %.4f after %d iterations (%.1f s, %.1f ms/iteration with the solver\'s tests%s)'
        % (acc, solver.iter, seconds, 1e3 * seconds / max(args.iters, 1),
           ', %d ranks' % caffe.solver_count() if caffe.solver_count() > 1 else ''))
    return 0 if acc >= args.target else 1


if __name__ == '__main__':
    sys.exit(main())
