#!/bin/sh
# LeNet end to end with taihu-caffe: data -> LMDB -> train with Caffe's LeNet solver.
#   examples/caffe/run_lenet.sh [WORKDIR] [MAX_ITER]
# Uses the real MNIST test set (8k train / 2k test) when $TAIHU_MNIST_DIR (default
# ../shared/data/mnist) holds t10k-*-ubyte.gz, otherwise 10k synthetic digits
# (taihu-caffe make_digits). MAX_ITER defaults to the solver's 10000; the demo uses 500.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
tool=${TAIHU_CAFFE:-$root/build/bin/taihu-caffe}
work=${1:-$root/build/lenet-example}
iters=${2:-}
mnist=${TAIHU_MNIST_DIR:-$root/../shared/data/mnist}
mkdir -p "$work/snapshots"
cd "$work"
rm -rf mnist_train_lmdb mnist_test_lmdb
if [ -f "$mnist/t10k-images-idx3-ubyte.gz" ]; then
  images=$mnist/t10k-images-idx3-ubyte.gz labels=$mnist/t10k-labels-idx1-ubyte.gz
  echo "data: real MNIST ($mnist), 8000 train / 2000 test"
else
  "$tool" make_digits digits-images.gz digits-labels.gz --count=10000 --seed=1 2>/dev/null
  images=digits-images.gz labels=digits-labels.gz
  echo "data: 10000 synthetic digits (no MNIST at $mnist), 8000 train / 2000 test"
fi
"$tool" convert_mnist "$images" "$labels" mnist_train_lmdb --count=8000 2>/dev/null
"$tool" convert_mnist "$images" "$labels" mnist_test_lmdb --first=8000 2>/dev/null
cp "$here/lenet_train_test.prototxt" "$here/lenet_solver.prototxt" .
if [ -n "$iters" ]; then
  set -- --iterations="$iters"
else
  set --
fi
"$tool" train --solver=lenet_solver.prototxt "$@" 2>&1 | tee train.log | grep -E "Test net output #0|Optimization Done|solver_mode"
model=$(ls -t snapshots/lenet_iter_*.caffemodel | head -1)
"$tool" test --model=lenet_train_test.prototxt --weights="$model" --iterations=20 2>&1 | grep -E "\] accuracy = "
echo "log: $work/train.log   curve: $work/snapshots/lenet_curve.png"
