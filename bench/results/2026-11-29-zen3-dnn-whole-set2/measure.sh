#!/bin/sh
# Whole-set conv_cputime at 1 and 2 threads plus the batch-32 layers, training, gemm: the quiet end-of-session set (Zen 3, avx2).
L="mb1ic128ih28oc128oh28kh3ph1 mb1ic256ih56oc256oh56kh3ph1 mb1ic64ih56oc64oh56kh3ph1 mb1ic256ih14oc256oh14kh3ph1 mb1ic512ih7oc512oh7kh3ph1 mb1ic256ih56oc64oh56kh1 mb1ic64ih56oc256oh56kh1 mb1ic512ih28oc128oh28kh1 mb1ic1024ih14oc256oh14kh1 mb1ic2048ih7oc512oh7kh1 mb1ic3ih224oc64oh112kh7sh2ph3 mb1ic3ih227oc96oh55kh11sh4 g2mb1ic96ih27oc256oh27kh5ph2 mb1ic1ih28oc20oh24kh5 mb1ic20ih12oc50oh8kh5 mb1ic64ih224oc64oh224kh3ph1 mb64ic1ih28oc20oh24kh5 mb64ic20ih12oc50oh8kh5 mb64ic3ih32oc32oh32kh5ph2 mb64ic32ih16oc32oh16kh5ph2 mb64ic32ih8oc64oh8kh5ph2"
B="mb32ic128ih28oc128oh28kh3ph1 mb32ic256ih56oc256oh56kh3ph1 mb32ic64ih56oc64oh56kh3ph1 mb32ic256ih14oc256oh14kh3ph1 mb32ic256ih56oc64oh56kh1 mb32ic3ih227oc96oh55kh11sh4 g2mb32ic96ih27oc256oh27kh5ph2 mb32ic1ih28oc20oh24kh5 mb32ic20ih12oc50oh8kh5 mb32ic64ih224oc64oh224kh3ph1"
O=${O:-/tmp/final43}  # t1b / t2b: the same two conv_cputime lines run again
mkdir -p $O
cd /work/main
export TAIHU_ANCHORS_DIR=/work/main/build/anchors
git log --oneline -1 > $O/head.txt
(uptime; OMP_PROC_BIND=true taskset -c 1 chrt -f 50 build/bin/conv_cputime --rounds=5 $L; uptime) > $O/t1.txt 2>&1
(uptime; OMP_NUM_THREADS=2 OMP_PROC_BIND=true taskset -c 0,1 chrt -f 50 build/bin/conv_cputime --threads=2 --rounds=5 $L; uptime) > $O/t2.txt 2>&1
(uptime; OMP_PROC_BIND=true taskset -c 1 chrt -f 50 build/bin/conv_cputime --rounds=3 $B; uptime) > $O/b32.txt 2>&1
(uptime; OMP_PROC_BIND=true build/bin/bench_caffe; uptime) > $O/caffe.txt 2>&1
