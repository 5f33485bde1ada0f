#!/bin/bash
# usage: time.sh <arm dir> <rounds> <layer...>: each layer's fixed winograd record timed in its own fresh process (taihu-tune time, 1 thread, pinned)
cd /tmp/wino43
arm=$1; rounds=$2; shift 2
declare -A SH=([cifar2]=N=1,C=32,H=16,W=16,KO=32,R=5,S=5,P=2 [cifar3]=N=1,C=32,H=8,W=8,KO=64,R=5,S=5,P=2 [lenet2]=N=1,C=20,H=12,W=12,KO=50,R=5,S=5,P=0 [res3]=N=1,C=128,H=28,W=28,KO=128,R=3,S=3,P=1 [res4]=N=1,C=256,H=14,W=14,KO=256,R=3,S=3,P=1)
for l in "$@"; do
  printf "%s %s %s " $arm $l "$(date -u +%H:%M:%S)"
  LD_LIBRARY_PATH=/tmp/wino43/$arm OMP_PROC_BIND=true taskset -c 1 chrt -f 50 ./$arm/taihu-tune time /work/main/examples/dsl/conv2d.tdsl --shape ${SH[$l]} --log fixed/$l.jsonl --rounds $rounds --threads 1 2>&1 | grep "median of" | tail -1
done
