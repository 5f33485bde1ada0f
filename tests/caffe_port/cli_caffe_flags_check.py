#!/usr/bin/env python3
"""taihu-caffe's flags as Caffe's tools/caffe.cpp (issue 25):
  1. --stage / --level build the NetState: layers with NetStateRule include/exclude
     (stage, not_stage, min_level, max_level) are kept or dropped in train, test, time;
  2. --weights=A,B copies each file in order (Caffe's CopyLayers): the last one wins
     for a layer both hold, each file is logged, a partial file only replaces its layers;
  3. --gpu (N, N,M, all) is accepted with exactly one warning and the run goes on on
     the CPU (also with solver_mode: GPU in the solver); a bad id is an error;
  4. device_query prints Caffe's lines for each device, or says there is none and exits
     as CPU-only Caffe does (1, "Cannot use GPU in CPU-only Caffe");
  5. rejections with gflags' / Caffe's messages (unknown flag, int32 value, missing
     argument, snapshot and weights, signal effect, phase, unknown action), exit 1 and
     nothing run.
Usage: cli_caffe_flags_check.py <taihu-caffe>"""
import os
import re
import subprocess
import sys
import tempfile

DATA = """layer { name: "mnist" type: "Data" top: "data" top: "label"
  transform_param { scale: 0.00390625 } data_param { source: "lmdb" batch_size: 20 backend: LMDB } }
"""
# ip_a only in stage "a"; ip_b when not in stage "a"; deep only from level 2; every
# layer writing "ip" feeds the loss.
STAGED = DATA + """
layer { name: "ip_a" type: "InnerProduct" bottom: "data" top: "ip" include { stage: "a" }
  inner_product_param { num_output: 10 weight_filler { type: "xavier" } } }
layer { name: "ip_b" type: "InnerProduct" bottom: "data" top: "ip" exclude { stage: "a" }
  inner_product_param { num_output: 10 weight_filler { type: "xavier" } } }
layer { name: "deep" type: "ReLU" bottom: "ip" top: "ip" include { min_level: 2 } }
layer { name: "shallow" type: "Sigmoid" bottom: "ip" top: "ip" include { max_level: 1 stage: "b" } }
layer { name: "loss" type: "SoftmaxWithLoss" bottom: "ip" bottom: "label" top: "loss" }
"""
NET = DATA + """
layer { name: "ip1" type: "InnerProduct" bottom: "data" top: "ip1" inner_product_param { num_output: 16 weight_filler { type: "xavier" } } }
layer { name: "relu" type: "ReLU" bottom: "ip1" top: "ip1" }
layer { name: "ip2" type: "InnerProduct" bottom: "ip1" top: "ip2" inner_product_param { num_output: 10 weight_filler { type: "xavier" } } }
layer { name: "loss" type: "SoftmaxWithLoss" bottom: "ip2" bottom: "label" top: "loss" }
"""
SOLVER = """net: "%s"
base_lr: %s
lr_policy: "fixed"
display: 0
max_iter: 2
snapshot_prefix: "%s"
random_seed: %d
"""


def run(tool, args, cwd):
    p = subprocess.run([tool] + args, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       timeout=120)
    return p.returncode, p.stdout


def ok(tool, args, cwd):
    rc, out = run(tool, args, cwd)
    assert rc == 0, 'taihu-caffe %s: exit %d\n%s' % (' '.join(args), rc, out[-3000:])
    return out


def fails(tool, args, cwd, line, started=False):
    """Exit 1 with exactly `line` (a regex matched against a whole line) and, unless
    `started`, before any net was set up."""
    rc, out = run(tool, args, cwd)
    what = 'taihu-caffe ' + ' '.join(args)
    assert rc == 1, '%s: exit %d (expected 1)\n%s' % (what, rc, out[-2000:])
    assert any(re.fullmatch(line, l) for l in out.splitlines()), '%s: no line matching %r in\n%s' % (what, line, out)
    assert started or ('Setting up' not in out and 'Solving' not in out), '%s: the command ran anyway\n%s' % (what, out)


def set_up(out):
    """The layers a log's nets set up, in order."""
    return re.findall(r'\] Setting up (\S+)', out)


def warnings(out):
    return [l for l in out.splitlines() if l.startswith('W')]


def fields(buf):
    """(field number, wire type, value) of a protobuf message's bytes (varint and
    length-delimited fields; what a .caffemodel holds)."""
    i = 0
    while i < len(buf):
        key, i = varint(buf, i)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, i = varint(buf, i)
        elif wire == 2:
            n, i = varint(buf, i)
            value, i = buf[i:i + n], i + n
        elif wire == 5:
            value, i = buf[i:i + 4], i + 4
        elif wire == 1:
            value, i = buf[i:i + 8], i + 8
        else:
            raise ValueError('wire type %d' % wire)
        yield number, wire, value


def varint(buf, i):
    shift = value = 0
    while True:
        b = buf[i]
        i += 1
        value |= (b & 0x7F) << shift
        shift += 7
        if b < 0x80:
            return value, i


def layer_weights(path):
    """{layer name: [blob data bytes, ...]} of a .caffemodel (NetParameter.layer = 100,
    LayerParameter.name = 1, .blobs = 7, BlobProto.data = 5 packed floats)."""
    weights = {}
    with open(path, 'rb') as f:
        net = f.read()
    for number, _, layer in fields(net):
        if number != 100:
            continue
        name, blobs = None, []
        for n, _, v in fields(layer):
            if n == 1:
                name = v.decode()
            elif n == 7:
                blobs.append(b''.join(d for k, _, d in fields(v) if k == 5))
        weights[name] = blobs
    return weights


def write(d, name, text):
    with open(os.path.join(d, name), 'w') as f:
        f.write(text)


def check_stage_level(tool, d):
    write(d, 'staged.prototxt', STAGED)
    cases = [  # flags -> the layers kept (Data and loss always)
        ([], ['ip_b']),
        (['--stage=a'], ['ip_a']),
        (['--stage', 'b'], ['ip_b', 'shallow']),
        (['--stage=a,b'], ['ip_a', 'shallow']),
        (['--level=2'], ['ip_b', 'deep']),
        (['--level=2', '--stage=b'], ['ip_b', 'deep']),  # shallow needs level <= 1
        (['--level=-3', '--stage=b,a'], ['ip_a', 'shallow']),
    ]
    for flags, kept in cases:
        want = ['mnist'] + kept + ['loss']
        got = set_up(ok(tool, ['time', '--model=staged.prototxt', '--iterations=1'] + flags, d))
        assert got == want, 'time %s: set up %s, expected %s' % (flags, got, want)
        weights = 'staged_a.caffemodel' if 'ip_a' in kept else 'staged_b.caffemodel'
        got = set_up(ok(tool, ['test', '--model=staged.prototxt', '--weights=' + weights, '--iterations=1'] + flags, d))
        assert got == want, 'test %s: set up %s, expected %s' % (flags, got, want)
        # train: the solver's train_state gets them (no test net here).
        got = set_up(ok(tool, ['train', '--solver=staged_solver.prototxt'] + flags, d))
        assert got == want, 'train %s: set up %s, expected %s' % (flags, got, want)
    # A train_state stage in the solver is kept and --stage adds to it.
    write(d, 'staged_solver2.prototxt', 'train_state { stage: "b" }\n' + SOLVER % ('staged.prototxt', 0.01, 'snap/st2', 1))
    got = set_up(ok(tool, ['train', '--solver=staged_solver2.prototxt', '--stage=a'], d))
    assert got == ['mnist', 'ip_a', 'shallow', 'loss'], got


def check_weights(tool, d):
    # Two different trained nets A and B of the same shape, and C with only ip2 of them.
    for name, seed in [('a', 1), ('b', 2)]:
        write(d, 'solver_%s.prototxt' % name, SOLVER % ('net.prototxt', 0.05, 'snap/' + name, seed))
        ok(tool, ['train', '--solver=solver_%s.prototxt' % name], d)
    write(d, 'net_c.prototxt', NET.replace('"ip1"', '"other"'))
    write(d, 'solver_c.prototxt', SOLVER % ('net_c.prototxt', 0.05, 'snap/c', 3))
    ok(tool, ['train', '--solver=solver_c.prototxt'], d)
    read = lambda p: open(os.path.join(d, p), 'rb').read()
    A, B = read('snap/a_iter_2.caffemodel'), read('snap/b_iter_2.caffemodel')
    assert A != B
    # base_lr 0: the weights after training are the ones loaded.
    write(d, 'solver_zero.prototxt', SOLVER % ('net.prototxt', 0, 'snap/z', 4))
    out = ok(tool, ['train', '--solver=solver_zero.prototxt', '--weights=snap/a_iter_2.caffemodel,snap/b_iter_2.caffemodel'], d)
    finetune = re.findall(r'\] Finetuning from (\S+)', out)
    assert finetune == ['snap/a_iter_2.caffemodel', 'snap/b_iter_2.caffemodel'], finetune
    assert read('snap/z_iter_2.caffemodel') == B, 'A then B must leave B'
    ok(tool, ['train', '--solver=solver_zero.prototxt', '--weights=snap/b_iter_2.caffemodel,snap/a_iter_2.caffemodel'], d)
    assert read('snap/z_iter_2.caffemodel') == A, 'B then A must leave A'
    # B then C: ip1 stays B's, ip2 becomes C's: neither file, and C's copy is logged.
    out = ok(tool, ['train', '--solver=solver_zero.prototxt', '--weights=snap/b_iter_2.caffemodel,snap/c_iter_2.caffemodel'], d)
    assert re.search(r'Finetuning from snap/c_iter_2.caffemodel\n.*\n?.*Ignoring source layer other', out), out[-3000:]
    assert 'Copying source layer ip2' in out.split('Finetuning from snap/c_iter_2.caffemodel')[1]
    mixed = layer_weights(os.path.join(d, 'snap/z_iter_2.caffemodel'))
    b = layer_weights(os.path.join(d, 'snap/b_iter_2.caffemodel'))
    c = layer_weights(os.path.join(d, 'snap/c_iter_2.caffemodel'))
    assert len(mixed['ip1']) == 2 and len(mixed['ip1'][0]) == 16 * 784 * 4, [len(x) for x in mixed['ip1']]
    assert mixed['ip1'] == b['ip1'] and mixed['ip2'] == c['ip2'] and b['ip2'] != c['ip2']
    # With a test net (net: + test_iter), each file goes into both nets (Caffe's CopyLayers):
    # ip1 and ip2 are copied twice per file, and nothing is reported as ignored.
    write(d, 'solver_zero_t.prototxt', 'test_iter: 1\ntest_interval: 2\n' + SOLVER % ('net.prototxt', 0, 'snap/zt', 4))
    out = ok(tool, ['train', '--solver=solver_zero_t.prototxt', '--weights=snap/a_iter_2.caffemodel,snap/b_iter_2.caffemodel'], d)
    for part in out.split('Finetuning from ')[1:]:
        assert part.count('Copying source layer ip1') == 2 and part.count('Copying source layer ip2') == 2, part
    assert not [w for w in warnings(out) if 'GPU' not in w], warnings(out)
    assert read('snap/zt_iter_2.caffemodel') == B
    fails(tool, ['train', '--solver=solver_zero.prototxt', '--weights=snap/a_iter_2.caffemodel,missing.caffemodel'], d,
          r'taihu-caffe train: error: missing.caffemodel: cannot open.*', started=True)


def check_gpu(tool, d):
    write(d, 'solver_gpu.prototxt', 'solver_mode: GPU\ndevice_id: 0\n' + SOLVER % ('net.prototxt', 0.05, 'snap/g', 1))
    for flags in [['--gpu=0'], ['--gpu', '0,1'], ['--gpu=all'], []]:
        out = ok(tool, ['train', '--solver=solver_gpu.prototxt'] + flags, d)
        w = warnings(out)
        assert len(w) == 1 and ('GPU' in w[0] or 'gpu' in w[0]), 'train %s: warnings %s' % (flags, w)
        assert 'Optimization Done.' in out
    out = ok(tool, ['train', '--solver=solver_a.prototxt', '--gpu=1'], d)
    w = warnings(out)
    assert len(w) == 1 and '--gpu=1' in w[0] and 'CPU' in w[0], w
    assert 'Use CPU.' in out
    for cmd in [['test', '--model=net.prototxt', '--weights=snap/a_iter_2.caffemodel', '--iterations=1'],
                ['time', '--model=net.prototxt', '--iterations=1']]:
        out = ok(tool, cmd + ['--gpu=0'], d)
        assert len(warnings(out)) == 1 and '--gpu=0' in warnings(out)[0], out
        assert not warnings(ok(tool, cmd, d))
    fails(tool, ['train', '--solver=solver_a.prototxt', '--gpu=x,1'], d,
          r"taihu-caffe train: error: --gpu=x,1: 'x' is not a device id \(give N, a list N,M,\.\.\. or all\)")
    fails(tool, ['test', '--model=net.prototxt', '--weights=snap/a_iter_2.caffemodel', '--gpu=-1'], d,
          r"taihu-caffe test: error: --gpu=-1: '-1' is not a device id.*")


def check_device_query(tool, d):
    out = ok(tool, ['device_query'], d)
    assert re.search(r'\] Querying GPUs $', out, re.M), out
    m = re.search(r'\] No device given .* CUDA: (.*); taihu-caffe runs on \d+ CPU thread', out)
    assert m, out
    devices = re.match(r'(\d+) device', m.group(1))
    rc, out = run(tool, ['device_query', '--gpu=0'], d)
    assert re.search(r'\] Querying GPUs 0$', out, re.M), out
    if not devices:  # CPU only: Caffe's NO_GPU, exit 1
        assert rc == 1 and 'Cannot use GPU in CPU-only Caffe: check mode.' in out, out
        fails(tool, ['device_query', '--gpu=all'], d, r'.*Cannot use GPU in CPU-only Caffe: check mode\..*')
        return 'CPU only (%s)' % m.group(1)
    assert rc == 0, out
    fields = ['Device id', 'Major revision number', 'Minor revision number', 'Name', 'Total global memory',
              'Total shared memory per block', 'Total registers per block', 'Warp size', 'Maximum memory pitch',
              'Maximum threads per block', 'Maximum dimension of block', 'Maximum dimension of grid', 'Clock rate',
              'Total constant memory', 'Texture alignment', 'Concurrent copy and execution',
              'Number of multiprocessors', 'Kernel execution timeout']
    got = re.findall(r'\] ([A-Z][A-Za-z ]+):\s+(.*)$', out, re.M)
    assert [k for k, _ in got] == fields, got
    values = dict(got)
    assert values['Device id'] == '0' and int(values['Total global memory']) > (1 << 30)
    assert int(values['Warp size']) == 32 and int(values['Number of multiprocessors']) > 0
    assert re.fullmatch(r'\d+, \d+, \d+', values['Maximum dimension of block'])
    n = int(devices.group(1))
    out = ok(tool, ['device_query', '--gpu=all'], d)
    assert len(re.findall(r'\] Device id: ', out)) == n
    fails(tool, ['device_query', '--gpu=%d' % n], d, r'.*invalid device ordinal %d.*' % n)
    return '%d device(s): %s' % (n, values['Name'])


def check_rejections(tool, d):
    fails(tool, ['train', '--solver=solver_a.prototxt', '--foo=1'], d, r"ERROR: unknown command line flag 'foo'")
    fails(tool, ['train', '--solver=solver_a.prototxt', '-snapshto', 'x'], d,
          r"ERROR: unknown command line flag 'snapshto' \(did you mean --snapshot\?\)")
    fails(tool, ['test', '--model=net.prototxt', '--weights=snap/a_iter_2.caffemodel', '--compress=topk:0.1'], d,
          r"ERROR: unknown command line flag 'compress'.*")
    fails(tool, ['train', '--solver=solver_a.prototxt', '--level=two'], d,
          r"ERROR: illegal value 'two' specified for int32 flag 'level'")
    fails(tool, ['test', '--model=net.prototxt', '--weights=snap/a_iter_2.caffemodel', '--iterations=3000000000'], d,
          r"ERROR: illegal value '3000000000' specified for int32 flag 'iterations'")
    fails(tool, ['train', '--solver'], d,
          r"ERROR: flag 'solver' is missing its argument; flag description: .*")
    fails(tool, ['train', '--solver=solver_a.prototxt', '--snapshot=snap/a_iter_2.solverstate',
                 '--weights=snap/a_iter_2.caffemodel'], d,
          r'taihu-caffe train: error: Give a snapshot to resume training or weights to finetune but not both\.')
    fails(tool, ['train'], d, r'taihu-caffe train: error: Need a solver definition to train\..*')
    fails(tool, ['test', '--weights=snap/a_iter_2.caffemodel'], d,
          r'taihu-caffe test: error: Need a model definition to score\..*')
    fails(tool, ['test', '--model=net.prototxt'], d, r'taihu-caffe test: error: Need model weights to score\..*')
    fails(tool, ['time'], d, r'taihu-caffe time: error: Need a model definition to time\..*')
    fails(tool, ['train', '--solver=solver_a.prototxt', '--sigint_effect=pause'], d,
          r'taihu-caffe train: error: --sigint_effect=pause: Invalid signal effect "pause" was specified.*')
    fails(tool, ['time', '--model=net.prototxt', '--phase=VAL'], d,
          r'taihu-caffe time: error: --phase=VAL: phase must be "TRAIN" or "TEST"')
    fails(tool, ['brew'], d, r'taihu-caffe: Unknown action: brew .*')
    # A Caffe flag a command does not read is accepted, as gflags' flags are global.
    out = ok(tool, ['time', '--model=net.prototxt', '--iterations=1', '--solver=unused.prototxt'], d)
    assert any('--solver is not used by time' in w for w in warnings(out)), out
    # gflags syntax: -flag value, --flag=value, hex ints, "--" ends the flags.
    ok(tool, ['time', '-model', 'net.prototxt', '-iterations', '0x1'], d)
    out = ok(tool, ['--model', 'net.prototxt', '-iterations=1', 'time'], d)  # flags before the command
    assert 'Average Forward-Backward' in out, out[-2000:]
    fails(tool, ['--iterations=1'], d, r'taihu-caffe: no command given')
    fails(tool, ['time', '--model=net.prototxt', '--', '--iterations=1'], d,
          r"taihu-caffe time: error: time takes no positional arguments \(got '--iterations=1'\)")


def main():
    tool = os.path.abspath(sys.argv[1])
    with tempfile.TemporaryDirectory(prefix='taihu_caffe_flags_') as d:
        os.mkdir(os.path.join(d, 'snap'))
        ok(tool, ['make_digits', 'img.gz', 'lab.gz', '--count=200', '--seed=3'], d)
        ok(tool, ['convert_mnist', 'img.gz', 'lab.gz', 'lmdb'], d)
        write(d, 'net.prototxt', NET)
        write(d, 'staged_solver.prototxt', SOLVER % ('staged.prototxt', 0.01, 'snap/staged', 1))
        # Weights for `test` on the staged net: one file with ip_a, one with ip_b.
        write(d, 'staged.prototxt', STAGED)
        for stage, name in [('--stage=a', 'staged_a'), ('--stage=', 'staged_b')]:
            ok(tool, ['train', '--solver=staged_solver.prototxt', stage], d)
            os.replace(os.path.join(d, 'snap/staged_iter_2.caffemodel'), os.path.join(d, name + '.caffemodel'))
        check_stage_level(tool, d)
        check_weights(tool, d)
        check_gpu(tool, d)
        devices = check_device_query(tool, d)
        check_rejections(tool, d)
    print('taihu-caffe Caffe-flag checks passed (devices: %s)' % devices)


if __name__ == '__main__':
    main()
