"""A PEP 517 backend that wheels the caffe package laid out by taihu's CMake build.

It builds nothing: it zips <build>/python/caffe, which `cmake --build build --target
pycaffe` (or scripts/test, scripts/demo) lays out, into a wheel tagged for the running
interpreter, and says how to build when the extension is missing. <build> is
$TAIHU_BUILD_DIR, else the repository's build/. The extension keeps its runpath to
<build>/lib, where taihu's libraries are.
"""
import base64
import hashlib
import os
import sys
import sysconfig
import zipfile

NAME = "caffe"
VERSION = "1.0.0+taihu"
_HERE = os.path.dirname(os.path.abspath(__file__))
_REPO = os.path.dirname(os.path.dirname(_HERE))


def _build_dir():
    return os.path.abspath(os.environ.get("TAIHU_BUILD_DIR", os.path.join(_REPO, "build")))


def _package_dir():
    build = _build_dir()
    pkg = os.path.join(build, "python", NAME)
    built = os.path.isdir(pkg) and any(f.startswith("_caffe") and f.endswith(".so") for f in os.listdir(pkg))
    if not built:
        raise RuntimeError("%s has no compiled _caffe extension: build taihu first "
                           "(cmake --preset release && cmake --build build --target pycaffe), "
                           "or set TAIHU_BUILD_DIR" % pkg)
    return pkg


def _tag():
    impl = "cp%d%d" % sys.version_info[:2]
    plat = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    return "%s-%s-%s" % (impl, impl, plat)


def _record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return "%s,sha256=%s,%d" % (name, digest, len(data))


def get_requires_for_build_wheel(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    dist_info = "%s-%s.dist-info" % (NAME, VERSION)
    os.makedirs(os.path.join(metadata_directory, dist_info), exist_ok=True)
    with open(os.path.join(metadata_directory, dist_info, "METADATA"), "w") as f:
        f.write(_metadata())
    return dist_info


def _metadata():
    return ("Metadata-Version: 2.1\nName: %s\nVersion: %s\n"
            "Summary: pycaffe's API on taihu's Caffe port\nRequires-Python: >=3.8\n"
            "Requires-Dist: numpy\nRequires-Dist: protobuf\n" % (NAME, VERSION))


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    pkg = _package_dir()
    tag = _tag()
    wheel_name = "%s-%s-%s.whl" % (NAME, VERSION, tag)
    dist_info = "%s-%s.dist-info" % (NAME, VERSION)
    records = []
    path = os.path.join(wheel_directory, wheel_name)
    with zipfile.ZipFile(path + ".tmp", "w", zipfile.ZIP_DEFLATED) as z:
        def add(arcname, data):
            z.writestr(arcname, data)
            records.append(_record_line(arcname, data))
        for root, dirs, files in os.walk(pkg):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for f in sorted(files):
                full = os.path.join(root, f)
                arc = os.path.join(NAME, os.path.relpath(full, pkg))
                with open(full, "rb") as fh:
                    add(arc, fh.read())
        add(dist_info + "/METADATA", _metadata().encode())
        add(dist_info + "/WHEEL", ("Wheel-Version: 1.0\nGenerator: taihu_wheel\nRoot-Is-Purelib: false\n"
                                   "Tag: %s\n" % tag).encode())
        record = "\n".join(records + [dist_info + "/RECORD,,"]) + "\n"
        z.writestr(dist_info + "/RECORD", record)
    os.replace(path + ".tmp", path)  # never a truncated wheel under the final name
    return wheel_name
