#!/usr/bin/env python3
"""install.fresh_debian (issue 23 item 5): the .deb installs on a fresh Debian 12 and a
consumer built against it runs.

  fresh_debian_check.py --work DIR --consumer DIR --cache DIR
                        (--cpack-config FILE [--cpack CPACK] | --deb FILE)

A minbase bookworm (debootstrap) plus a compiler, cmake and pkg-config is bootstrapped
once and cached as a tarball in --cache; each run unpacks it into --work/root, installs
the package there with `apt-get install ./taihu.deb` (its Depends: from Debian's
mirror), builds tests/install/consumer with find_package(taihu) and with pkg-config,
and runs both with an empty environment. Exit 77 (skipped) without root, debootstrap
or a reachable mirror; exit 1 with the failing step's output otherwise.
"""
import argparse
import glob
import os
import shutil
import socket
import subprocess
import sys
import time

SKIP = 77
MIRROR = "http://deb.debian.org/debian"
TOOLCHAIN = ["g++", "cmake", "make", "pkg-config"]
TARBALL = "bookworm-minbase-toolchain.tar.gz"


def fail(what, out=""):
    sys.exit("FAILED: %s\n%s" % (what, out[-4000:]))


def run(what, args, timeout=600, **kw):
    t0 = time.monotonic()
    r = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=timeout, **kw)
    if r.returncode != 0:
        fail("%s: exit %d" % (what, r.returncode), r.stdout)
    print("%-48s %6.1f s" % (what, time.monotonic() - t0), flush=True)
    return r.stdout


def in_root(root, what, script, timeout=600):
    env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "DEBIAN_FRONTEND": "noninteractive", "HOME": "/root"}
    return run(what, ["chroot", root, "sh", "-ec", script], timeout=timeout, env=env)


def skip_reason():
    if os.geteuid() != 0:
        return "needs root (chroot)"
    for tool in ("debootstrap", "chroot", "tar"):
        if not shutil.which(tool):
            return tool + " is not installed"
    try:
        socket.create_connection(("deb.debian.org", 80), timeout=5).close()
    except OSError as e:
        return "Debian's mirror is not reachable (%s)" % e
    return None


def bootstrap(root, cache):
    tarball = os.path.join(cache, TARBALL)
    os.makedirs(root)
    if os.path.exists(tarball):
        run("unpacking the cached bookworm", ["tar", "-C", root, "-xzf", tarball])
        return
    run("debootstrap --variant=minbase bookworm", ["debootstrap", "--variant=minbase", "bookworm", root, MIRROR],
        timeout=900)
    in_root(root, "apt-get install " + " ".join(TOOLCHAIN),
            "apt-get update -q; apt-get install -y -q --no-install-recommends " + " ".join(TOOLCHAIN))
    os.makedirs(cache, exist_ok=True)
    tmp = "%s.tmp.%d" % (tarball, os.getpid())
    try:
        run("caching it in " + tarball, ["tar", "-C", root, "-czf", tmp, "."])
        os.replace(tmp, tarball)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", required=True)
    ap.add_argument("--consumer", required=True)
    ap.add_argument("--cache", required=True)
    ap.add_argument("--cpack-config")
    ap.add_argument("--deb")
    ap.add_argument("--cpack", default="cpack")
    a = ap.parse_args()
    why = skip_reason()
    if why:
        print("SKIPPED: " + why)
        sys.exit(SKIP)
    t0 = time.monotonic()
    shutil.rmtree(a.work, ignore_errors=True)
    deb = a.deb
    if not deb:
        run("cpack -G DEB", [a.cpack, "-G", "DEB", "--config", a.cpack_config, "-B", os.path.join(a.work, "deb")])
        debs = glob.glob(os.path.join(a.work, "deb", "*.deb"))
        if len(debs) != 1:
            fail("cpack -G DEB made %d packages: %s" % (len(debs), debs))
        deb = debs[0]
    if "cuda-cudart" in run("dpkg-deb -f Depends", ["dpkg-deb", "-f", deb, "Depends"]):
        print("SKIPPED: a .deb from a CUDA build depends on NVIDIA's CUDA runtime package, which "
              "Debian 12 does not have; the plain-Debian check is for -DTAIHU_WITH_CUDA=OFF builds")
        sys.exit(SKIP)
    root = os.path.join(a.work, "root")
    bootstrap(root, a.cache)
    proc = os.path.join(root, "proc")
    run("mount /proc in the root", ["mount", "-t", "proc", "proc", proc])
    try:
        shutil.copy(deb, os.path.join(root, "tmp", "taihu.deb"))
        shutil.copytree(a.consumer, os.path.join(root, "tmp", "consumer"))
        in_root(root, "apt-get install ./taihu.deb",
                "apt-get update -q; apt-get install -y -q --no-install-recommends /tmp/taihu.deb")
        # A sanitizer build's libraries need the ASan runtime loaded first.
        depends = run("dpkg-deb -f Depends", ["dpkg-deb", "-f", deb, "Depends"])
        pre = "LD_PRELOAD=$(c++ -print-file-name=libasan.so) ASAN_OPTIONS=detect_leaks=0 " if "libasan" in depends else ""
        out = in_root(root, "find_package(taihu) consumer: build, run",
                      "cd /tmp; cmake -S consumer -B cbuild; cmake --build cbuild; env -i %s./cbuild/consumer" % pre)
        if "consumer: OK" not in out:
            fail("the find_package consumer did not print 'consumer: OK'", out)
        out = in_root(root, "pkg-config consumer: build, run",
                      "cd /tmp; c++ -std=c++20 consumer/consumer.cpp $(pkg-config --cflags --libs taihu) -o cpc;"
                      " env -i %s./cpc" % pre)
        if "consumer: OK" not in out:
            fail("the pkg-config consumer did not print 'consumer: OK'", out)
        in_root(root, "installed tools start (--help)",
                "for t in /usr/bin/taihu-*; do env -i %s$t --help >/dev/null; done" % pre)
    finally:
        subprocess.run(["umount", "-l", proc], capture_output=True)
    shutil.rmtree(a.work, ignore_errors=True)
    print("fresh_debian: %s installs on a fresh Debian 12, both consumers run (%.0f s)"
          % (os.path.basename(deb), time.monotonic() - t0))


if __name__ == "__main__":
    main()
