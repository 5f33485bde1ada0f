"""threadpoolctl controller for libtaihu_blas.so (taihu's BLAS).

threadpoolctl finds BLAS libraries by file name (libopenblas, libmkl_rt, libblis,
...) and would not know libtaihu_blas. Without this module, threadpool_limits(1)
still reaches taihu through the OpenMP controller (libgomp): taihu's default thread
count is capped by the OpenMP nthreads-var. That path does not override an explicit
TAIHU_NUM_THREADS or taihu_set_num_threads(); this controller does:

    import threadpoolctl, taihu_threadpoolctl
    taihu_threadpoolctl.register()
    with threadpoolctl.threadpool_limits(1, user_api="blas"):
        ...  # taihu's GEMM runs on one thread

Needs threadpoolctl >= 3.2 (threadpoolctl.register). Installed to
<prefix>/share/taihu/python.
"""

import threadpoolctl


class TaihuController(threadpoolctl.LibController):
    """Reports and sets libtaihu_blas's thread count (taihu_get/set_num_threads)."""

    user_api = "blas"
    internal_api = "taihu"
    filename_prefixes = ("libtaihu_blas",)
    check_symbols = ("taihu_get_num_threads", "taihu_set_num_threads")

    def get_num_threads(self):
        return self.dynlib.taihu_get_num_threads()

    def set_num_threads(self, num_threads):
        self.dynlib.taihu_set_num_threads(int(num_threads))

    def get_version(self):
        return None  # libtaihu_blas exports no version query


def register():
    """Makes threadpoolctl see libtaihu_blas.so (threadpoolctl >= 3.2)."""
    threadpoolctl.register(TaihuController)
