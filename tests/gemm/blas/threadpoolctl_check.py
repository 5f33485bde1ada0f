"""threadpoolctl's threadpool_limits(1) takes effect on libtaihu_blas.so.

Usage: threadpoolctl_check.py LIBTAIHU_BLAS GEMM_BLAS_SOURCE_DIR. Exit 0: passed;
77: threadpoolctl is not importable (ctest SKIP_RETURN_CODE); 1: failed.

1. Without help: libtaihu_blas loaded as a program loads a BLAS (ctypes here, numpy
   or LD_PRELOAD elsewhere); threadpoolctl finds libgomp beside it and limits the
   OpenMP nthreads-var, which caps taihu's default thread count.
2. With taihu's controller registered (gemm/blas/taihu_threadpoolctl.py, threadpoolctl
   >= 3.2): threadpoolctl lists taihu as a BLAS and limits it even over an explicit
   thread count.
Each limited count is checked with taihu_get_num_threads and by a cblas_sgemm call.
"""

import ctypes
import os
import sys

try:
    import threadpoolctl
except ImportError:
    print("SKIPPED: threadpoolctl is not importable (pip install threadpoolctl, or "
          "Debian's python3-threadpoolctl)")
    sys.exit(77)

lib_path, source_dir = sys.argv[1], sys.argv[2]
lib = ctypes.CDLL(lib_path, mode=ctypes.RTLD_GLOBAL)
failures = []


def check(what, got, want):
    print(f"{what}: {got} (want {want})")
    if got != want:
        failures.append(what)


def gemm_is_right():
    n = 96
    f = ctypes.c_float * (n * n)
    a = f(*[float(i % 7 - 3) for i in range(n * n)])
    b = f(*[float(i % 5 - 2) for i in range(n * n)])
    c = f()
    lib.cblas_sgemm(102, 111, 111, n, n, n, ctypes.c_float(1.0), a, n, b, n,
                    ctypes.c_float(0.0), c, n)
    for j in (0, n // 2, n - 1):
        for i in (0, n // 3, n - 1):
            want = sum(a[p * n + i] * b[j * n + p] for p in range(n))
            if c[j * n + i] != want:
                return False
    return True


lib.taihu_set_num_threads(0)
before = lib.taihu_get_num_threads()
print(f"threadpoolctl {threadpoolctl.__version__}; taihu's default: {before} threads")
with threadpoolctl.threadpool_limits(limits=1):
    check("default count under threadpool_limits(1)", lib.taihu_get_num_threads(), 1)
    check("product under threadpool_limits(1)", gemm_is_right(), True)
check("default count after the limit", lib.taihu_get_num_threads(), before)
if before == 1:
    print("note: one core here, so the default was 1 before the limit too")

if hasattr(threadpoolctl, "register"):
    sys.path.insert(0, source_dir)
    import taihu_threadpoolctl

    taihu_threadpoolctl.register()
    lib.taihu_set_num_threads(3)
    apis = [i["internal_api"] for i in threadpoolctl.threadpool_info()]
    check("taihu listed by threadpool_info()", "taihu" in apis, True)
    with threadpoolctl.threadpool_limits(limits=1, user_api="blas"):
        check("explicit count 3 under threadpool_limits(1, 'blas')",
              lib.taihu_get_num_threads(), 1)
        check("product under the blas limit", gemm_is_right(), True)
    check("explicit count after the limit", lib.taihu_get_num_threads(), 3)
    lib.taihu_set_num_threads(0)
else:
    print("note: threadpoolctl < 3.2 has no register(): taihu's controller not checked")

if failures:
    print("FAILED: " + ", ".join(failures))
    sys.exit(1)
print("threadpoolctl limits reach taihu")
