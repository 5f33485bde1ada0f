#!/usr/bin/env bash
# tests/cluster/pmpi_iallreduce_check.sh <scripts/cluster> <plain_mpi_iallreduce> <preload.so>:
# the PMPI preload's MPI_Iallreduce takeover across 4 cluster hosts (TCP, 1 rank per host):
# plain_mpi_iallreduce (crossed posting orders on two communicators, queued requests,
# MPI_Test loop, pass-through) passes its checks, every Iallreduce result bitwise equal to
# the blocking path, and TAIHU_VERBOSE shows the sums run by the worker threads.
set -euo pipefail
cluster=$1 program=$2 preload=$3
log=$(mktemp /tmp/taihu-cluster-iallreduce.XXXXXX)
trap 'rm -f "$log"' EXIT
"$cluster" mpirun -np 4 -x LD_PRELOAD="$preload" -x TAIHU_PMPI_THREADS=serial -x TAIHU_COMM_PROBE=never \
  -x TAIHU_VERBOSE=1 "$program" --expect-bitwise >"$log" 2>&1 || { cat "$log"; echo "FAIL: the program failed"; exit 1; }
grep -aq '^provided MPI_THREAD_MULTIPLE' "$log" || { cat "$log"; echo "FAIL: MPI did not provide MPI_THREAD_MULTIPLE"; exit 1; }
for comm in comm_a comm_b MPI_COMM_WORLD; do
  grep -aq "pmpi: rank 0: MPI_Iallreduce, MPI_[A-Z]* MPI_SUM on $comm (4 ranks).*-> taihu .* (worker thread)" "$log" ||
    { cat "$log"; echo "FAIL: no worker-thread Iallreduce shown on $comm"; exit 1; }
done
echo "OK: $(grep -ac '^case ' "$log") Iallreduce cases on 4 hosts, taken over, bitwise equal to the blocking path"
