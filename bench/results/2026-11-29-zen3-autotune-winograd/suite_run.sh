#!/bin/bash
# usage: run.sh <arm dir> <tag> <layers> <log>: bench_autotune --suite dnn, batch 1, 1 thread, 20 s a layer, from the arm's copied binary and libraries
cd /tmp/wino43/suite
arm=$1; tag=$2; layers=$3; log=$4
export LD_LIBRARY_PATH=/tmp/wino43/$arm TAIHU_ANCHORS_DIR=/work/main/build/anchors
{ echo "== $tag $(date -u +%H:%M:%S) $(uptime | sed 's/.*load/load/')"
  TAIHU_VERBOSE=1 OMP_PROC_BIND=true taskset -c 1 chrt -f 50 /tmp/wino43/$arm/bench_autotune --suite dnn --budget-per-layer 20s --batch 1 --threads 1 --anchors none --layers $layers --log $log --dnn-records rec_$tag.jsonl --csv $tag.csv 2>&1 | grep -v " medians (us)\|^halide\|^  \|^Func\|^Var\|^RVar\|^using\|^$\|taihu_verbose\|taihu: conv:\|taihu: dispatch\|taihu: gemm"
  echo "== end $(date -u +%H:%M:%S) $(uptime | sed 's/.*load/load/')"; } > $tag.txt
