#!/usr/bin/env python3
"""taihu-caffe's CLI end to end, and its log read by Caffe's tools/extra/parse_log.py
logic (the regexes and the glog time parsing copied from BVLC Caffe, BSD 2-clause):
make_digits -> convert_mnist (twice: train/test LMDBs) -> train (Data layers on the
LMDBs) -> parse the log -> check train and test rows, then resume from the snapshot,
test and time. Usage: cli_log_check.py <path to taihu-caffe>"""
import datetime
import os
import re
import subprocess
import sys
import tempfile

# --- parse_log.py / extract_seconds.py (BVLC Caffe), unchanged logic ----------------
regex_iteration = re.compile(r'Iteration (\d+)')
regex_train_output = re.compile(r'Train net output #(\d+): (\S+) = ([\.\deE+-]+)')
regex_test_output = re.compile(r'Test net output #(\d+): (\S+) = ([\.\deE+-]+)')
regex_learning_rate = re.compile(r'lr = ([-+]?[0-9]*\.?[0-9]+([eE]?[-+]?[0-9]+)?)')


def extract_datetime_from_line(line, year):
    line = line.strip().split()
    month = int(line[0][1:3])
    day = int(line[0][3:5])
    timestamp = line[1]
    pos = timestamp.rfind('.')
    ts = [int(x) for x in timestamp[:pos].split(':')]
    microsecond = int(timestamp[pos + 1:])
    return datetime.datetime(year, month, day, ts[0], ts[1], ts[2], microsecond)


def get_start_time(line_iterable, year):
    for line in line_iterable:
        line = line.strip()
        if line.find('Solving') != -1:
            return extract_datetime_from_line(line, year)
    return None


def parse_line_for_net_output(regex_obj, row, row_dict_list, line, iteration, seconds, learning_rate):
    output_match = regex_obj.search(line)
    if output_match:
        if not row or row['NumIters'] != iteration:
            if row:
                row_dict_list.append(row)
            row = {'NumIters': iteration, 'Seconds': seconds, 'LearningRate': learning_rate}
        row[output_match.group(2)] = float(output_match.group(3))
    if row and len(row_dict_list) >= 1 and len(row) == len(row_dict_list[0]):
        row_dict_list.append(row)
        row = None
    return row_dict_list, row


def parse_log(path):
    iteration = -1
    learning_rate = float('NaN')
    train, test = [], []
    train_row = test_row = None
    year = datetime.datetime.fromtimestamp(os.path.getctime(path)).year
    with open(path) as f:
        start_time = get_start_time(f, year)
        assert start_time is not None, 'no "Solving" line'
        last_time = start_time
        for line in f:
            m = regex_iteration.search(line)
            if m:
                iteration = float(m.group(1))
            if iteration == -1:
                continue
            try:
                time = extract_datetime_from_line(line, year)
            except ValueError:
                continue
            if time.month < last_time.month:
                year += 1
                time = extract_datetime_from_line(line, year)
            last_time = time
            seconds = (time - start_time).total_seconds()
            m = regex_learning_rate.search(line)
            if m:
                learning_rate = float(m.group(1))
            train, train_row = parse_line_for_net_output(regex_train_output, train_row, train, line, iteration, seconds, learning_rate)
            test, test_row = parse_line_for_net_output(regex_test_output, test_row, test, line, iteration, seconds, learning_rate)
    for rows in (train, test):  # fix_initial_nan_learning_rate
        if len(rows) > 1:
            rows[0]['LearningRate'] = rows[1]['LearningRate']
    return train, test
# ---------------------------------------------------------------------------------------

NET = """name: "CliNet"
layer { name: "mnist" type: "Data" top: "data" top: "label" include { phase: TRAIN }
  transform_param { scale: 0.00390625 } data_param { source: "train_lmdb" batch_size: 32 backend: LMDB } }
layer { name: "mnist" type: "Data" top: "data" top: "label" include { phase: TEST }
  transform_param { scale: 0.00390625 } data_param { source: "test_lmdb" batch_size: 50 backend: LMDB } }
layer { name: "ip1" type: "InnerProduct" bottom: "data" top: "ip1" inner_product_param { num_output: 32 weight_filler { type: "xavier" } } }
layer { name: "relu1" type: "ReLU" bottom: "ip1" top: "ip1" }
layer { name: "ip2" type: "InnerProduct" bottom: "ip1" top: "ip2" inner_product_param { num_output: 10 weight_filler { type: "xavier" } } }
layer { name: "accuracy" type: "Accuracy" bottom: "ip2" bottom: "label" top: "accuracy" include { phase: TEST } }
layer { name: "loss" type: "SoftmaxWithLoss" bottom: "ip2" bottom: "label" top: "loss" }
"""
SOLVER = """net: "net.prototxt"
test_iter: 4
test_interval: 30
base_lr: 0.05
momentum: 0.9
lr_policy: "step"
gamma: 0.5
stepsize: 25
display: 10
max_iter: 60
snapshot: 30
snapshot_prefix: "snap/cli"
random_seed: 3
solver_mode: GPU
"""


def run(tool, args, cwd, log=None):
    p = subprocess.run([tool] + args, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120)
    if log:
        with open(os.path.join(cwd, log), 'w') as f:
            f.write(p.stdout)
    if p.returncode != 0:
        sys.exit('FAILED: taihu-caffe %s\n%s' % (' '.join(args), p.stdout[-3000:]))
    return p.stdout


def main():
    tool = os.path.abspath(sys.argv[1])
    with tempfile.TemporaryDirectory(prefix='taihu_caffe_cli_') as d:
        run(tool, ['make_digits', 'img.gz', 'lab.gz', '--count=1400', '--seed=5'], d)
        run(tool, ['convert_mnist', 'img.gz', 'lab.gz', 'train_lmdb', '--count=1200'], d)
        run(tool, ['convert_mnist', 'img.gz', 'lab.gz', 'test_lmdb', '--first=1200'], d)
        os.mkdir(os.path.join(d, 'snap'))
        with open(os.path.join(d, 'net.prototxt'), 'w') as f:
            f.write(NET)
        with open(os.path.join(d, 'solver.prototxt'), 'w') as f:
            f.write(SOLVER)
        out = run(tool, ['train', '--solver=solver.prototxt'], d, log='train.log')
        warnings = [l for l in out.splitlines() if l.startswith('W') and 'solver_mode: GPU' in l]
        assert len(warnings) == 1, 'expected one GPU fallback warning line, got %r' % warnings
        assert 'Optimization Done.' in out
        train, test = parse_log(os.path.join(d, 'train.log'))
        assert [r['NumIters'] for r in train] == [0, 10, 20, 30, 40, 50], train
        assert all('loss' in r for r in train), train
        lrs = [r['LearningRate'] for r in train]
        # As with Caffe's own logs, a row carries the lr logged after the previous
        # display (the "lr =" line follows the outputs); step policy halves at 25, 50.
        assert lrs == [0.05, 0.05, 0.05, 0.05, 0.025, 0.025], lrs
        assert train[-1]['loss'] < train[0]['loss'], train
        assert [r['NumIters'] for r in test] == [0, 30, 60], test
        assert all(0.0 <= r['accuracy'] <= 1.0 and 'loss' in r for r in test), test
        assert test[-1]['accuracy'] > test[0]['accuracy'], test
        for f in ['cli_iter_30.caffemodel', 'cli_iter_30.solverstate', 'cli_iter_60.caffemodel', 'cli_curve.png']:
            assert os.path.exists(os.path.join(d, 'snap', f)), f
        with open(os.path.join(d, 'snap', 'cli_curve.png'), 'rb') as f:
            assert f.read(8) == b'\x89PNG\r\n\x1a\n'
        # Resume: the second half's loss lines equal the uninterrupted run's.
        resumed = run(tool, ['train', '--solver=solver.prototxt', '--snapshot=snap/cli_iter_30.solverstate'], d, log='resume.log')
        full_lines = [l.split('] ', 1)[1] for l in out.splitlines() if 'Train net output' in l]
        res_lines = [l.split('] ', 1)[1] for l in resumed.splitlines() if 'Train net output' in l]
        assert res_lines == full_lines[3:], (res_lines, full_lines)
        out = run(tool, ['test', '--model=net.prototxt', '--weights=snap/cli_iter_60.caffemodel', '--iterations=4'], d)
        assert re.search(r'\] accuracy = [0-9.]+', out), out[-800:]
        out = run(tool, ['time', '--model=net.prototxt', '--iterations=2'], d)
        assert re.search(r'ip1\s+forward: [0-9.e+-]+ ms', out) and 'Average Forward-Backward' in out, out[-1500:]
        # Errors name the file and position.
        with open(os.path.join(d, 'bad.prototxt'), 'w') as f:
            f.write('net: "net.prototxt"\nbase_lr: fast\n')
        p = subprocess.run([tool, 'train', '--solver=bad.prototxt'], cwd=d, capture_output=True, text=True)
        assert p.returncode != 0 and 'bad.prototxt:2:10' in p.stderr, p.stderr
    print('taihu-caffe CLI and parse_log.py checks passed')


if __name__ == '__main__':
    main()
