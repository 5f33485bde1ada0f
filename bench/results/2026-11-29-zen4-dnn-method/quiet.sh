#!/bin/sh
# Quiet-window A/B of conv_cputime's method at 2 threads: old (rotation, caller-only flush),
# shuffle (per-round shuffle, caller-only flush), new (shuffle + every-thread flush).
cd /work/main
S="mb1ic1ih28oc20oh24kh5 mb1ic20ih12oc50oh8kh5 mb64ic1ih28oc20oh24kh5 mb64ic3ih32oc32oh32kh5ph2 mb1ic256ih14oc256oh14kh3ph1 mb1ic64ih56oc256oh56kh1 mb1ic2048ih7oc512oh7kh1"
E="TAIHU_ANCHORS_DIR=/work/main/build/anchors OMP_NUM_THREADS=2 OMP_PROC_BIND=true taskset -c 0,1 chrt -f 50"
for i in 1 2 3; do
(uptime; env $E /tmp/flushbefore/conv_cputime --threads=2 --rounds=5 $S; uptime) > /tmp/flush/old_$i.txt 2>&1
(uptime; env $E /tmp/flushshuffle/conv_cputime --threads=2 --rounds=5 $S; uptime) > /tmp/flush/shuffle_$i.txt 2>&1
(uptime; env $E build/bin/conv_cputime --threads=2 --rounds=5 $S; uptime) > /tmp/flush/new_$i.txt 2>&1
done
