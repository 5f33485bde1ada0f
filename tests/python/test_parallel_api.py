"""caffe's data-parallel set-up in a plain (single-process) run: one rank, pycaffe's
multi-GPU calls accepted only when they agree with the launcher, bad options rejected
naming the value. The mpirun behaviour is mpi_data_parallel_check.py's (ctest
python_data_parallel_np2)."""
import pytest

import caffe


def test_a_plain_run_is_one_rank():
    assert caffe.solver_count() == 1
    assert caffe.solver_rank() == 0


def test_pycaffe_multi_gpu_calls_must_match_the_launcher():
    caffe.set_solver_count(1)
    caffe.set_solver_rank(0)
    with pytest.raises(ValueError, match=r"set_solver_count\(2\).*mpirun -np 2"):
        caffe.set_solver_count(2)
    with pytest.raises(ValueError, match=r"set_solver_rank\(1\)"):
        caffe.set_solver_rank(1)


def test_data_parallel_options_are_checked():
    caffe.set_data_parallel_options(bucket_mb=4, compress="topk:0.01", allreduce="ring")
    with pytest.raises(ValueError, match="bucket_mb=0"):
        caffe.set_data_parallel_options(bucket_mb=0)
    with pytest.raises(caffe.CaffeError, match="compress=topk:7"):
        caffe.set_data_parallel_options(compress="topk:7")
    with pytest.raises(caffe.CaffeError, match="allreduce"):
        caffe.set_data_parallel_options(allreduce="no-such-algorithm")
    caffe.set_data_parallel_options()  # back to taihu-caffe train's defaults
