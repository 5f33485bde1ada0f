#!/bin/bash
# usage: run.sh <tag> <batch> <threads> <budget> <layers> <log> [extra]  (the copied binary and libs, scratch /tmp/at-suite10)
cd /tmp/at-suite10
tag=$1; b=$2; t=$3; bud=$4; layers=$5; log=$6; shift 6
export LD_LIBRARY_PATH=/tmp/at-suite10/lib
{ echo "== $tag $(date -u +%H:%M:%S) $(uptime | sed 's/.*load/load/')"
  TAIHU_VERBOSE=1 OMP_PROC_BIND=true taskset -c 1 chrt -f 50 ./bench_autotune_10 --suite dnn --budget-per-layer $bud --batch $b --threads $t --anchors none --layers $layers --log $log --dnn-records rec_$tag.jsonl --csv $tag.csv "$@" 2>&1 | grep -v " medians (us)\|^halide\|^  \|^Func\|^Var\|^RVar\|^using\|^$\|taihu_verbose\|taihu: conv:\|taihu: dispatch\|taihu: gemm"
  echo "== end $(date -u +%H:%M:%S) $(uptime | sed 's/.*load/load/')"; } > $tag.txt
