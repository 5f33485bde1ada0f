#!/bin/bash
# usage: spills.sh <arm> <layer> <outdir>: emits the layer's fixed record as Halide AOT and counts, per produce block (Halide's closure functions), ymm moves to/from the stack
cd /tmp/wino43
arm=$1; l=$2; o=$3; mkdir -p $o
declare -A SH=([cifar2]=N=1,C=32,H=16,W=16,KO=32,R=5,S=5,P=2 [cifar3]=N=1,C=32,H=8,W=8,KO=64,R=5,S=5,P=2 [lenet2]=N=1,C=20,H=12,W=12,KO=50,R=5,S=5,P=0 [res3]=N=1,C=128,H=28,W=28,KO=128,R=3,S=3,P=1 [res4]=N=1,C=256,H=14,W=14,KO=256,R=3,S=3,P=1)
LD_LIBRARY_PATH=/tmp/wino43/$arm TAIHU_NUM_THREADS=1 ./$arm/taihu-tune emit /work/main/examples/dsl/conv2d.tdsl --shape ${SH[$l]} --format=halide-aot --log fixed/$l.jsonl --out $o/$l --name $l >/dev/null 2>&1
for a in $o/$l/*.a $o/$l*.a; do [ -f $a ] || continue; objdump -d --no-show-raw-insn $a > ${a%.a}.s; done
ls $o/$l* 
