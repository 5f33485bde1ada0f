"""Shared fixtures of the caffe package's tests: the taihu-caffe binary, a folder of
synthetic digits (taihu-caffe make_digits), and prototxt writing."""
import os
import subprocess

import pytest

_REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: a test that trains for more than a few seconds")


@pytest.fixture(scope="session")
def caffe_tool():
    """Path of taihu-caffe ($TAIHU_CAFFE, else build/bin/taihu-caffe)."""
    tool = os.path.abspath(os.environ.get("TAIHU_CAFFE", os.path.join(_REPO, "build", "bin", "taihu-caffe")))
    if not os.access(tool, os.X_OK):
        pytest.skip("taihu-caffe not built (%s)" % tool)
    return tool


@pytest.fixture(scope="session")
def digits(caffe_tool, tmp_path_factory):
    """(images, labels): 1200 synthetic 28x28 digits as MNIST IDX files."""
    d = tmp_path_factory.mktemp("digits")
    img, lab = str(d / "img.gz"), str(d / "lab.gz")
    subprocess.run([caffe_tool, "make_digits", img, lab, "--count=1200", "--seed=3"], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return img, lab


def write(path, text):
    """Writes `text` to `path` (a pathlib.Path or str) and returns the path as str."""
    with open(str(path), "w") as f:
        f.write(text)
    return str(path)
