#!/usr/bin/env python3
"""PyTorch CPU anchor for bench_caffe: training throughput of Caffe's LeNet and
CIFAR-10 quick, written in PyTorch the way a user would, with the settings of
examples/caffe's prototxts and solver files.

    torch_train.py NET BATCH THREADS WARMUP ITERS [SECONDS]

NET is lenet or cifar10_quick. After WARMUP untimed iterations it times at least
ITERS iterations and at least SECONDS seconds (default 0). One iteration is
zero_grad + forward + loss + backward + optimizer.step (+ the lr scheduler's step),
the same work as one Caffe Solver::step. Prints one JSON object on stdout:
    {"images_per_s", "ms_per_iter", "iter_ms": [every timed iteration], "torch",
     "threads", "iters", "stat", "params": "conv1=20x1x5x5+20 ..."}
ms_per_iter is the median iteration, or the fastest with TAIHU_BENCH_STAT=best (then
1-thread iterations are timed by the thread's CPU clock): the statistic bench_common
uses for taihu's side. "params" lists each layer's weight and bias shapes so
bench_caffe can check that the two nets agree.

The nets match the prototxts layer by layer: Caffe's pooling output size rounds up
(ceil_mode=True; with pad 0 both frameworks divide average pools by the in-image
window size), ReLUs are in place, InnerProduct flattens C*H*W, SoftmaxWithLoss is
the batch-mean cross entropy. Inputs are random images and labels, as on taihu's
side. Weights are filled as the prototxts say (xavier = uniform(+-sqrt(3/fan_in)),
gaussian std, constant 0 biases) so both sides do arithmetic on like values.

SGD follows the solver files: base_lr, momentum 0.9, weight_decay on every blob,
lr_mult 2 for biases, lr_policy "inv" (LeNet) or "fixed" (CIFAR-10 quick).
torch.optim.SGD applies lr after the momentum sum, Caffe before; with these small
steps the work per iteration is the same, which is all that is timed.
"""
import math
import os
import statistics
import sys
import time

NETS = ("lenet", "cifar10_quick")


def main(argv):
    if len(argv) not in (6, 7) or argv[1] not in NETS:
        sys.stderr.write(__doc__)
        return 2
    net_name = argv[1]
    batch, threads, warmup, iters = (int(a) for a in argv[2:6])
    seconds = float(argv[6]) if len(argv) == 7 else 0.0
    # Before torch loads its OpenMP runtime, so every pool it creates has this size.
    os.environ["OMP_NUM_THREADS"] = str(threads)
    os.environ["MKL_NUM_THREADS"] = str(threads)
    import torch
    from torch import nn

    torch.set_num_threads(threads)
    torch.set_num_interop_threads(1)
    torch.manual_seed(1)

    def xavier(m):
        fan_in = m.weight[0].numel()
        bound = math.sqrt(3.0 / fan_in)
        nn.init.uniform_(m.weight, -bound, bound)
        nn.init.zeros_(m.bias)
        return m

    def gaussian(m, std):
        nn.init.normal_(m.weight, 0.0, std)
        nn.init.zeros_(m.bias)
        return m

    if net_name == "lenet":
        # examples/caffe/lenet_train_test.prototxt, lenet_solver.prototxt
        channels, hw = 1, 28
        net = nn.Sequential()
        net.add_module("conv1", xavier(nn.Conv2d(1, 20, 5)))
        net.add_module("pool1", nn.MaxPool2d(2, 2, ceil_mode=True))
        net.add_module("conv2", xavier(nn.Conv2d(20, 50, 5)))
        net.add_module("pool2", nn.MaxPool2d(2, 2, ceil_mode=True))
        net.add_module("flatten", nn.Flatten())
        net.add_module("ip1", xavier(nn.Linear(50 * 4 * 4, 500)))
        net.add_module("relu1", nn.ReLU(inplace=True))
        net.add_module("ip2", xavier(nn.Linear(500, 10)))
        base_lr, weight_decay = 0.01, 0.0005
        gamma, power = 0.0001, 0.75

        def lr_factor(it):  # lr_policy "inv"
            return (1.0 + gamma * it) ** (-power)
    else:
        # examples/caffe/cifar10_quick_train_test.prototxt, cifar10_quick_solver.prototxt
        channels, hw = 3, 32
        net = nn.Sequential()
        net.add_module("conv1", gaussian(nn.Conv2d(3, 32, 5, padding=2), 0.0001))
        net.add_module("pool1", nn.MaxPool2d(3, 2, ceil_mode=True))
        net.add_module("relu1", nn.ReLU(inplace=True))
        net.add_module("conv2", gaussian(nn.Conv2d(32, 32, 5, padding=2), 0.01))
        net.add_module("relu2", nn.ReLU(inplace=True))
        net.add_module("pool2", nn.AvgPool2d(3, 2, ceil_mode=True))
        net.add_module("conv3", gaussian(nn.Conv2d(32, 64, 5, padding=2), 0.01))
        net.add_module("relu3", nn.ReLU(inplace=True))
        net.add_module("pool3", nn.AvgPool2d(3, 2, ceil_mode=True))
        net.add_module("flatten", nn.Flatten())
        net.add_module("ip1", gaussian(nn.Linear(64 * 4 * 4, 64), 0.1))
        net.add_module("ip2", gaussian(nn.Linear(64, 10), 0.1))
        base_lr, weight_decay = 0.001, 0.004

        def lr_factor(it):  # lr_policy "fixed"
            return 1.0

    net.train()
    weights = [m.weight for m in net if hasattr(m, "weight")]
    biases = [m.bias for m in net if hasattr(m, "bias")]
    opt = torch.optim.SGD(
        [{"params": weights, "lr": base_lr}, {"params": biases, "lr": 2 * base_lr}],  # bias lr_mult 2
        lr=base_lr, momentum=0.9, weight_decay=weight_decay)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lr_factor)
    loss_fn = nn.CrossEntropyLoss()
    gen = torch.Generator().manual_seed(1)
    x = torch.rand(batch, channels, hw, hw, generator=gen)
    y = torch.randint(0, 10, (batch,), generator=gen)

    def step():
        opt.zero_grad()
        loss = loss_fn(net(x), y)
        loss.backward()
        opt.step()
        sched.step()
        return loss

    best = os.environ.get("TAIHU_BENCH_STAT") == "best"
    clock = time.thread_time if best and threads == 1 else time.perf_counter
    for _ in range(warmup):
        step()
    times = []
    start = time.perf_counter()
    while len(times) < iters or time.perf_counter() - start < seconds:
        t0 = clock()
        step()
        times.append(clock() - t0)
    per_iter = min(times) if best else statistics.median_low(times)

    def shape(t):
        return "x".join(str(d) for d in t.shape)

    params = " ".join(f"{name}={shape(m.weight)}+{shape(m.bias)}" for name, m in net.named_children()
                      if hasattr(m, "weight"))
    print("{" + ", ".join([
        f'"images_per_s": {batch / per_iter:.6g}',
        f'"ms_per_iter": {per_iter * 1e3:.6g}',
        '"iter_ms": [' + ", ".join(f"{t * 1e3:.6g}" for t in times) + "]",
        f'"torch": "{torch.__version__}"',
        f'"threads": {torch.get_num_threads()}',
        f'"iters": {len(times)}',
        f'"stat": "{"best" if best else "median"}"',
        f'"params": "{params}"',
    ]) + "}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
