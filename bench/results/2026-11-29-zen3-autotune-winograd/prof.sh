#!/bin/bash
# usage: prof.sh <arm> <layer> <rounds>: Halide profiler's per-Func time summed over every round's pipeline (one sample per ~1 ms)
cd /tmp/wino43
declare -A SH=([cifar2]=N=1,C=32,H=16,W=16,KO=32,R=5,S=5,P=2 [cifar3]=N=1,C=32,H=8,W=8,KO=64,R=5,S=5,P=2 [lenet2]=N=1,C=20,H=12,W=12,KO=50,R=5,S=5,P=0 [res3]=N=1,C=128,H=28,W=28,KO=128,R=3,S=3,P=1 [res4]=N=1,C=256,H=14,W=14,KO=256,R=3,S=3,P=1)
LD_LIBRARY_PATH=$1 TAIHU_HALIDE_PROFILE=1 OMP_PROC_BIND=true taskset -c 1 ./$1/taihu-tune time /work/main/examples/dsl/conv2d.tdsl --shape ${SH[$2]} --log fixed/$2.jsonl --rounds $3 --threads 1 2>&1 | python3 -c '
import sys,re,collections
t=collections.Counter(); runs=0; last=None
for l in sys.stdin:
    m=re.match(r"\s+(wino_\w+?)(_w\d+)?:\s+([\d.]+)ms",l)
    if m and float(m.group(3))>0: t[m.group(1)]+=1
    m=re.search(r"runs: (\d+)",l)
    if m: runs+=int(m.group(1))
    if "fresh " in l or "logged" in l: print(l.strip())
tot=sum(t.values())
print("runs",runs,"profiled ms",round(tot,2))
for k,v in t.most_common(): print("  %-12s %5.1f%%"%(k,100*v/tot if tot else 0))
'
