"""Caffe's "learning LeNet" notebook (examples/01-learning-lenet.ipynb) as a test:
NetSpec -> train/test prototxt in a temp dir -> the notebook's solver prototxt ->
caffe.SGDSolver -> the notebook's checks of blob and parameter shapes -> solver.step
-> test accuracy counted as the notebook counts it (argmax of score == label).

  - test_tutorial_synthetic_digits (fast): 2000 train / 500 test synthetic digits from
    `taihu-caffe make_digits`, 150 iterations, accuracy >= 0.9;
  - test_tutorial_real_mnist (~1.5 min on 2 idle cores): the real MNIST test set from
    ../shared/data/mnist (or $TAIHU_SHARED_DATA/mnist) split 8000 train / 2000 test as
    examples/caffe/run_lenet.sh does, 2000 iterations, accuracy >= 0.98 on all 2000
    test images; skipped without the data.
The net, solver and accuracy count are examples/caffe/learning_lenet.py's (the script the
README shows). The LMDBs are written by `taihu-caffe convert_mnist` (the notebook's
create_mnist.sh step); the tool is found through $TAIHU_CAFFE, next to the package
(build/bin) or on PATH.
"""
import os
import shutil
import subprocess
from pathlib import Path

import sys

import numpy as np
import pytest

import caffe

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / 'examples' / 'caffe'))
from learning_lenet import SOLVER, lenet, notebook_accuracy  # noqa: E402  (the notebook's net, solver, count)
SHARED = Path(os.environ.get('TAIHU_SHARED_DATA', ROOT.parent / 'shared' / 'data'))

pytestmark = pytest.mark.skipif(not hasattr(caffe, 'SGDSolver'),
                                reason='caffe.SGDSolver is not in this build of the caffe package')


def taihu_caffe():
    candidates = [os.environ.get('TAIHU_CAFFE'),
                  Path(caffe.__file__).resolve().parents[2] / 'bin' / 'taihu-caffe',  # build/python/caffe
                  ROOT / 'build' / 'bin' / 'taihu-caffe', shutil.which('taihu-caffe')]
    for c in candidates:
        if c and os.access(str(c), os.X_OK):
            return str(c)
    pytest.skip('taihu-caffe (which writes the LMDBs) not found: set TAIHU_CAFFE')


def convert(tool, images, labels, out, *flags):
    subprocess.run([tool, 'convert_mnist', str(images), str(labels), str(out)] + list(flags), check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=300)


def run_tutorial(work, train_lmdb, test_lmdb, niter, test_batches):
    """The notebook's cells; returns (train losses, final test accuracy)."""
    train_proto, test_proto = work / 'lenet_auto_train.prototxt', work / 'lenet_auto_test.prototxt'
    train_proto.write_text(str(lenet(str(train_lmdb), 64)))
    test_proto.write_text(str(lenet(str(test_lmdb), 100)))
    solver_proto = work / 'lenet_auto_solver.prototxt'
    solver_proto.write_text(SOLVER.format(train=train_proto, test=test_proto, prefix=work / 'lenet'))

    caffe.set_mode_cpu()
    solver = caffe.SGDSolver(str(solver_proto))
    # "each output is (batch size, feature dim, spatial dim)"
    assert [(k, v.data.shape) for k, v in solver.net.blobs.items()] == [
        ('data', (64, 1, 28, 28)), ('label', (64,)), ('conv1', (64, 20, 24, 24)), ('pool1', (64, 20, 12, 12)),
        ('conv2', (64, 50, 8, 8)), ('pool2', (64, 50, 4, 4)), ('fc1', (64, 500)), ('score', (64, 10)),
        ('loss', ())]
    # "just print the weight sizes (we'll omit the biases)"
    assert [(k, v[0].data.shape) for k, v in solver.net.params.items()] == [
        ('conv1', (20, 1, 5, 5)), ('conv2', (50, 20, 5, 5)), ('fc1', (500, 800)), ('score', (10, 500))]
    assert [k for k in solver.test_nets[0].blobs] == list(solver.net.blobs)

    solver.net.forward()  # train net
    solver.test_nets[0].forward()  # test net (there can be more than one)
    data, labels = solver.net.blobs['data'].data, solver.net.blobs['label'].data
    assert data.min() >= 0 and data.max() <= 1 and data.max() > 0.9  # scale 1/255
    assert np.array_equal(labels, np.round(labels)) and labels.min() >= 0 and labels.max() <= 9
    assert solver.test_nets[0].blobs['data'].data.shape == (100, 1, 28, 28)

    solver.step(1)
    assert solver.iter == 1
    assert np.abs(solver.net.params['conv1'][0].diff).sum() > 0  # gradients reached the first layer

    train_loss = np.zeros(niter)
    output = np.zeros((niter, 8, 10))
    for it in range(niter):
        solver.step(1)  # SGD by Caffe
        train_loss[it] = solver.net.blobs['loss'].data  # the train loss
        solver.test_nets[0].forward(start='conv1')  # the test net on its current batch
        output[it] = solver.test_nets[0].blobs['score'].data[:8]
    assert solver.iter == niter + 1
    assert np.isfinite(train_loss).all() and np.isfinite(output).all()
    return train_loss, notebook_accuracy(solver.test_nets[0], test_batches)


def test_tutorial_synthetic_digits(tmp_path):
    tool = taihu_caffe()
    subprocess.run([tool, 'make_digits', str(tmp_path / 'img.gz'), str(tmp_path / 'lab.gz'), '--count=2500',
                    '--seed=1'], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=300)
    convert(tool, tmp_path / 'img.gz', tmp_path / 'lab.gz', tmp_path / 'train_lmdb', '--count=2000')
    convert(tool, tmp_path / 'img.gz', tmp_path / 'lab.gz', tmp_path / 'test_lmdb', '--first=2000')
    loss, acc = run_tutorial(tmp_path, tmp_path / 'train_lmdb', tmp_path / 'test_lmdb', niter=150, test_batches=5)
    assert loss[-20:].mean() < 0.25 * loss[:5].mean(), loss
    assert acc >= 0.9, 'test accuracy %.3f after 150 iterations on synthetic digits' % acc


def test_tutorial_real_mnist(tmp_path):
    mnist = SHARED / 'mnist'
    images, labels = mnist / 't10k-images-idx3-ubyte.gz', mnist / 't10k-labels-idx1-ubyte.gz'
    if not images.exists() or not labels.exists():
        pytest.skip('no MNIST at %s (../shared/data absent)' % mnist)
    tool = taihu_caffe()
    convert(tool, images, labels, tmp_path / 'train_lmdb', '--count=8000')
    convert(tool, images, labels, tmp_path / 'test_lmdb', '--first=8000')
    loss, acc = run_tutorial(tmp_path, tmp_path / 'train_lmdb', tmp_path / 'test_lmdb', niter=2000, test_batches=20)
    print('LeNet tutorial on real MNIST (8000 train / 2000 test): test accuracy %.4f after 2001 iterations' % acc)
    assert acc >= 0.98, 'test accuracy %.4f after 2001 iterations (target 0.98)' % acc
