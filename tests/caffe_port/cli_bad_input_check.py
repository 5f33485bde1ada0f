#!/usr/bin/env python3
"""taihu-caffe given hostile but realistic input (issue 23): each case must end with
exit status 1 (not a signal) and a one-line error naming the file, layer, flag or
value, without allocating what a header claims. Usage: cli_bad_input_check.py <taihu-caffe>"""
import os
import resource
import shutil
import struct
import subprocess
import sys
import tempfile
import time

NET = """name: "BadInputNet"
layer { name: "mnist" type: "Data" top: "data" top: "label"
  transform_param { scale: 0.00390625 } data_param { source: "%s" batch_size: 20 backend: LMDB } }
layer { name: "ip" type: "InnerProduct" bottom: "data" top: "ip" inner_product_param { num_output: %s weight_filler { type: "xavier" } } }
layer { name: "accuracy" type: "Accuracy" bottom: "ip" bottom: "label" top: "accuracy" include { phase: TEST } }
layer { name: "loss" type: "SoftmaxWithLoss" bottom: "ip" bottom: "label" top: "loss" }
"""
SOLVER = """net: "net.prototxt"
base_lr: 0.05
lr_policy: "fixed"
display: 0
max_iter: 4
snapshot: 4
snapshot_prefix: "snap/bad"
random_seed: 1
"""
GIB = 1 << 30


def limit_memory():
    # 1 GiB of address space: a reader that allocates what a header claims fails here
    # with std::bad_alloc instead of a message.
    resource.setrlimit(resource.RLIMIT_AS, (GIB, GIB))


def built_with_asan(tool):
    # ASan reserves terabytes of address space for its shadow memory at start-up, so an
    # address-space limit kills it before main (the sanitize build of scripts/test);
    # there the time limit of the checks below still catches a reader that fills memory.
    with open(tool, 'rb') as f:
        return b'libasan.so' in f.read()


def run(tool, args, cwd, limit=False):
    limit = limit and not built_with_asan(tool)
    t0 = time.monotonic()
    p = subprocess.run([tool] + args, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       timeout=120, preexec_fn=limit_memory if limit else None)
    return p.returncode, p.stdout, time.monotonic() - t0


def expect_error(tool, args, cwd, *needles, limit=False, seconds=10.0):
    rc, out, secs = run(tool, args, cwd, limit)
    what = 'taihu-caffe ' + ' '.join(args)
    assert rc == 1, '%s: exit %d (expected 1; negative = killed by a signal)\n%s' % (what, rc, out[-2000:])
    # taihu's "taihu-caffe CMD: error: ..." or, for flag errors, gflags' "ERROR: ...".
    errors = [l for l in out.splitlines() if ': error: ' in l or l.startswith('ERROR: ')]
    assert len(errors) == 1, '%s: expected one error line\n%s' % (what, out[-2000:])
    for n in needles:
        assert n in errors[0], '%s: %r not in %r' % (what, n, errors[0])
    assert 'Solving' not in out, '%s: training started anyway' % what
    assert secs < seconds, '%s: took %.1f s' % (what, secs)
    return errors[0]


def ok(tool, args, cwd):
    rc, out, _ = run(tool, args, cwd)
    assert rc == 0, 'taihu-caffe %s: exit %d\n%s' % (' '.join(args), rc, out[-2000:])
    return out


def main():
    tool = os.path.abspath(sys.argv[1])
    with tempfile.TemporaryDirectory(prefix='taihu_caffe_bad_input_') as d:
        def write(name, text, mode='w'):
            with open(os.path.join(d, name), mode) as f:
                f.write(text)
        ok(tool, ['make_digits', 'img.gz', 'lab.gz', '--count=200', '--seed=2'], d)
        ok(tool, ['convert_mnist', 'img.gz', 'lab.gz', 'lmdb'], d)
        write('net.prototxt', NET % ('lmdb', '10'))
        write('solver.prototxt', SOLVER)
        os.mkdir(os.path.join(d, 'snap'))
        ok(tool, ['train', '--solver=solver.prototxt'], d)

        # 1. A truncated data.mdb: LMDB would fault (SIGBUS) on a page past the end.
        shutil.copytree(os.path.join(d, 'lmdb'), os.path.join(d, 'cut_lmdb'))
        os.truncate(os.path.join(d, 'cut_lmdb', 'data.mdb'), 8192)
        write('cut.prototxt', NET % ('cut_lmdb', '10'))
        expect_error(tool, ['time', '--model=cut.prototxt', '--iterations=1'], d,
                     'layer mnist (Data)', 'cut_lmdb/data.mdb: truncated LMDB file: 8192 bytes')
        os.truncate(os.path.join(d, 'cut_lmdb', 'data.mdb'), 0)
        expect_error(tool, ['time', '--model=cut.prototxt', '--iterations=1'], d, 'cut_lmdb/data.mdb: empty file')

        # 2. test --iterations=0 (Caffe: CHECK_GT(iterations, 0)); it printed -nan and crashed.
        expect_error(tool, ['test', '--model=net.prototxt', '--weights=snap/bad_iter_4.caffemodel', '--iterations=0'], d,
                     '--iterations=0')
        out = ok(tool, ['test', '--model=net.prototxt', '--weights=snap/bad_iter_4.caffemodel', '--iterations=1'], d)
        assert '] accuracy = ' in out and 'nan' not in out, out[-1000:]

        # 3. IDX headers claiming more than the file holds: refused at once, in little memory.
        head = struct.pack('>IIII', 0x803, 1 << 21, 28, 28)
        write('claim21.idx', head + bytes(7800), 'wb')
        write('claim31.idx', struct.pack('>IIII', 0x803, 1 << 31, 28, 28) + bytes(7800), 'wb')
        import gzip
        write('claim21.idx.gz', gzip.compress(head + bytes(7800)), 'wb')
        for name in ['claim21.idx', 'claim31.idx', 'claim21.idx.gz']:
            expect_error(tool, ['convert_mnist', name, 'lab.gz', 'out_' + name], d,
                         name + ': truncated IDX file: the header claims', limit=True, seconds=2.0)
        # num_output too large for memory or an int: the layer and the size are named.
        # (An Input layer: LMDB maps 1 TiB of address space, more than the limit here.)
        ip_net = ('layer { name: "data" type: "Input" top: "data" input_param { shape { dim: 2 dim: 784 } } }\n'
                  'layer { name: "ip" type: "InnerProduct" bottom: "data" top: "ip" inner_product_param { num_output: %s } }\n')
        write('big_ip.prototxt', ip_net % '2000000000')
        expect_error(tool, ['time', '--model=big_ip.prototxt', '--iterations=1'], d,
                     'layer ip (InnerProduct)', '2000000000', limit=True)
        write('huge_ip.prototxt', ip_net % '4000000000')
        expect_error(tool, ['time', '--model=huge_ip.prototxt', '--iterations=1'], d,
                     'layer ip (InnerProduct)', 'num_output = 4000000000 does not fit', limit=True)

        # 4. Input dims beyond int were truncated to 0 ("Top shape: 0 0 1", exit 0).
        write('input.prototxt', 'layer { name: "data" type: "Input" top: "data" '
                                'input_param { shape { dim: 4294967296 dim: 4294967296 dim: 1 } } }\n')
        expect_error(tool, ['time', '--model=input.prototxt', '--iterations=1'], d,
                     'layer data (Input)', '4294967296 does not fit')
        write('input2.prototxt', 'layer { name: "data" type: "Input" top: "data" '
                                 'input_param { shape { dim: 65536 dim: 65536 dim: 1 } } }\n')
        expect_error(tool, ['time', '--model=input2.prototxt', '--iterations=1'], d,
                     'layer data (Input)', 'more than 2147483647 values')

        # 5. gflags: unknown flags and bad values are errors; training never starts.
        expect_error(tool, ['train', '--solver=solver.prototxt', '--snapshto=snap/bad_iter_4.solverstate'], d,
                     "unknown command line flag 'snapshto'", '--snapshot?')
        expect_error(tool, ['train', '--solver=solver.prototxt', '--iterations=-5'], d, '--iterations=-5')
        expect_error(tool, ['train', '--solver=solver.prototxt', '--iterations=3000000000'], d,
                     "illegal value '3000000000' specified for int32 flag 'iterations'")
        expect_error(tool, ['time', '--model=net.prototxt', '--phase=BOGUS'], d, '--phase=BOGUS', '"TRAIN" or "TEST"')
        expect_error(tool, ['time', '--model=net.prototxt', '--iterations=0'], d, '--iterations=0')
        # train takes no --phase: Caffe ignores it there, taihu says so and trains.
        out = ok(tool, ['train', '--solver=solver.prototxt', '--phase=BOGUS'], d)
        warned = [l for l in out.splitlines() if l.startswith('W') and '--phase is not used by train' in l]
        assert len(warned) == 1, 'train --phase=BOGUS: expected one warning that --phase is ignored\n' + out[-2000:]
        assert 'Optimization Done' in out, 'train --phase=BOGUS did not train\n' + out[-2000:]
        expect_error(tool, ['test', '--model=net.prototxt', '--weights=snap/bad_iter_4.caffemodel', '--allreduce=ring'], d,
                     "unknown command line flag 'allreduce'")
        expect_error(tool, ['train', '--solver=solver.prototxt', 'stray'], d, "no positional arguments (got 'stray')")

        # 6. A .solverstate as weights ran with random weights; weights matching no layer too.
        expect_error(tool, ['test', '--model=net.prototxt', '--weights=snap/bad_iter_4.solverstate', '--iterations=1'], d,
                     'snap/bad_iter_4.solverstate: a solver state, not weights', '--snapshot=', 'bad_iter_4.caffemodel')
        expect_error(tool, ['train', '--solver=solver.prototxt', '--weights=snap/bad_iter_4.solverstate'], d,
                     'a solver state, not weights')
        write('other.prototxt', NET.replace('"ip"', '"fc"') % ('lmdb', '10'))
        expect_error(tool, ['test', '--model=other.prototxt', '--weights=snap/bad_iter_4.caffemodel', '--iterations=1'], d,
                     'no layer of these weights matches', 'ip')
    print('taihu-caffe bad-input checks passed')


if __name__ == '__main__':
    main()
