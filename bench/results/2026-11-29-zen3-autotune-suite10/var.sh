#!/bin/bash
# times each variant record of var/ in its own fresh process, 2 alternating passes (taihu-tune time, 1 thread, pinned)
cd /tmp/at-suite10
export LD_LIBRARY_PATH=/tmp/at-suite10/lib
shape=$1; shift
for pass in 1 2; do for v in "$@"; do
  printf "%s pass%s " $v $pass
  OMP_PROC_BIND=true taskset -c 1 chrt -f 50 ./taihu-tune time /work/main/examples/dsl/conv2d.tdsl --shape $shape --log var/$v.jsonl --rounds 12 --threads 1 2>&1 | grep -i "median\|ms" | tail -1
done; done
