"""`pip install ./python` into a fresh venv (made with --system-site-packages, so
Debian's numpy and protobuf serve; --no-index: offline) gives an importable caffe
that trains; skipped where the venv module is missing (python3-venv)."""
import os
import subprocess
import sys

import pytest

_REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_pip_install_into_venv(tmp_path):
    venv = str(tmp_path / "venv")
    python = os.path.join(venv, "bin", "python")
    # Debian's pip (python3-pip) through the system site packages saves bootstrapping
    # pip into the venv (a minute on a loaded 2-core machine); else ensurepip.
    for extra in (["--without-pip"], []):
        made = subprocess.run([sys.executable, "-m", "venv", "--system-site-packages"] + extra + [venv],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if made.returncode == 0 and subprocess.run([python, "-m", "pip", "--version"],
                                                   stdout=subprocess.DEVNULL).returncode == 0:
            break
    else:
        pytest.skip("no venv module with pip (python3-venv): " + made.stdout[-300:])
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)  # the installed package, not build/python
    subprocess.run([python, "-m", "pip", "install", "-q", "--no-index", os.path.join(_REPO, "python")],
                   check=True, env=env)
    script = ("import caffe, os\n"
              "assert os.path.dirname(caffe.__file__).startswith(%r), caffe.__file__\n"
              "open('n.prototxt', 'w').write('layer { name: \"d\" type: \"Input\" top: \"d\" "
              "input_param { shape { dim: 2 dim: 3 } } }')\n"
              "net = caffe.Net('n.prototxt', caffe.TEST)\n"
              "net.blobs['d'].data[...] = 7\n"
              "print(net.forward()['d'].sum())\n" % venv)
    out = subprocess.run([python, "-c", script], cwd=str(tmp_path), env=env, check=True,
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True).stdout
    assert float(out) == 42.0
