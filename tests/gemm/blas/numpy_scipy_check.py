"""numpy and scipy give the same results with libtaihu_blas.so preloaded.

Usage: numpy_scipy_check.py LIBTAIHU_BLAS. Exit 0: passed; 77: numpy or scipy is not
importable (ctest SKIP_RETURN_CODE); 1: failed.

Runs one child without and one with LD_PRELOAD=libtaihu_blas.so (TAIHU_VERBOSE=1):
numpy.dot (float32, float64; numpy calls cblas_?gemm of the system BLAS),
scipy.linalg.solve_triangular (LAPACK ?trtrs, which calls ?trsm_), scipy.linalg.solve
(?gesv: LU, whose trailing updates call ?gemm_ and ?trsm_) and a symmetric rank-k
update through scipy.linalg.blas.dsyrk. The preloaded child's results must agree with
the system BLAS's to rounding, and its stderr must show taihu serving cblas_dgemm,
cblas_sgemm, cblas_dsyrk (numpy's A A^T) and dsyrk_. Debian's LAPACK is OpenBLAS's,
which calls its own trsm/gemm internally (not through the dynamic linker): the solves
are checked for equal results, not for being served by taihu.
"""

import os
import subprocess
import sys
import tempfile

try:
    import numpy
    import scipy.linalg  # noqa: F401
except ImportError:
    print("SKIPPED: numpy or scipy is not importable (Debian's python3-numpy, python3-scipy)")
    sys.exit(77)

CHILD = r"""
import sys
import numpy as np
import scipy.linalg as la
from scipy.linalg import blas
rng = np.random.default_rng(7)
n = 300
a64 = rng.standard_normal((n, n)); b64 = rng.standard_normal((n, 40))
a32 = a64.astype(np.float32); b32 = rng.standard_normal((n, n)).astype(np.float32)
lower = np.tril(a64) / n + np.eye(n) * 2
out = {
    "dot64": np.dot(a64, lower),
    "syrk64": np.dot(a64, a64.T),  # numpy recognises A A^T: cblas_dsyrk
    "dot32": np.dot(a32, b32),
    "solve_triangular": la.solve_triangular(lower, b64, lower=True),
    "solve_triangular_t": la.solve_triangular(lower, b64, lower=True, trans="T"),
    "solve": la.solve(a64 + np.eye(n) * n, b64),
    "dsyrk": blas.dsyrk(1.0, a64),
}
np.savez(sys.argv[1], **out)
"""


def run(path, preload):
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)
    if preload:
        env["LD_PRELOAD"] = preload
        env["TAIHU_VERBOSE"] = "1"
    r = subprocess.run([sys.executable, "-c", CHILD, path], env=env, capture_output=True,
                       text=True, timeout=120)
    if r.returncode != 0:
        print(r.stdout, r.stderr)
        sys.exit(1)
    return r.stderr


lib = sys.argv[1]
with tempfile.TemporaryDirectory() as tmp:
    plain, taihu = os.path.join(tmp, "system.npz"), os.path.join(tmp, "taihu.npz")
    run(plain, None)
    log = run(taihu, lib)
    want, got = numpy.load(plain), numpy.load(taihu)
    failures = []
    for key in want.files:
        w, g = want[key], got[key]
        eps = numpy.finfo(w.dtype).eps
        err = float(numpy.max(numpy.abs(g - w)) / (numpy.max(numpy.abs(w)) + 1e-300))
        ok = err <= 300 * eps
        print(f"{key}: relative difference {err:.3g} ({'ok' if ok else 'TOO LARGE'})")
        if not ok:
            failures.append(key)
    served = sorted({line.split("blas: ")[1].split(" served")[0]
                     for line in log.splitlines() if "served by libtaihu_blas" in line})
    print("served by taihu:", ", ".join(served) or "nothing")
    for routine in ("cblas_dgemm", "cblas_sgemm", "cblas_dsyrk", "DSYRK"):
        if routine not in served:
            failures.append(f"{routine} not served by taihu")
if failures:
    print("FAILED:", ", ".join(failures))
    sys.exit(1)
print("numpy and scipy agree with taihu preloaded")
