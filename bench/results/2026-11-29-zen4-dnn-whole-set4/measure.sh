#!/bin/sh
# Whole-set conv_cputime at 1 and 2 threads plus the batch-32 layers, as the quiet baseline.
cd /work/main
export TAIHU_ANCHORS_DIR=/work/main/build/anchors
L="mb1ic128ih28oc128oh28kh3ph1 mb1ic256ih56oc256oh56kh3ph1 mb1ic64ih56oc64oh56kh3ph1 mb1ic256ih14oc256oh14kh3ph1 \
   mb1ic512ih7oc512oh7kh3ph1 mb1ic256ih56oc64oh56kh1 mb1ic64ih56oc256oh56kh1 mb1ic512ih28oc128oh28kh1 \
   mb1ic1024ih14oc256oh14kh1 mb1ic2048ih7oc512oh7kh1 mb1ic3ih224oc64oh112kh7sh2ph3 mb1ic3ih227oc96oh55kh11sh4 \
   g2mb1ic96ih27oc256oh27kh5ph2 mb1ic1ih28oc20oh24kh5 mb1ic20ih12oc50oh8kh5 mb1ic64ih224oc64oh224kh3ph1 \
   mb64ic1ih28oc20oh24kh5 mb64ic20ih12oc50oh8kh5 mb64ic3ih32oc32oh32kh5ph2 mb64ic32ih16oc32oh16kh5ph2 mb64ic32ih8oc64oh8kh5ph2"
B="mb32ic128ih28oc128oh28kh3ph1 mb32ic256ih56oc256oh56kh3ph1 mb32ic64ih56oc64oh56kh3ph1 mb32ic256ih14oc256oh14kh3ph1 mb32ic256ih56oc64oh56kh1 mb32ic3ih227oc96oh55kh11sh4 g2mb32ic96ih27oc256oh27kh5ph2 mb32ic1ih28oc20oh24kh5 mb32ic20ih12oc50oh8kh5 mb32ic64ih224oc64oh224kh3ph1"
git log --oneline -1 > /tmp/final41/head.txt
(uptime; OMP_PROC_BIND=true taskset -c 1 chrt -f 50 build/bin/conv_cputime --rounds=5 $L; uptime) > /tmp/final41/t1.txt 2>&1
(uptime; OMP_NUM_THREADS=2 OMP_PROC_BIND=true taskset -c 0,1 chrt -f 50 build/bin/conv_cputime --threads=2 --rounds=5 $L; uptime) > /tmp/final41/t2.txt 2>&1
(uptime; OMP_PROC_BIND=true taskset -c 1 chrt -f 50 build/bin/conv_cputime --rounds=3 $B; uptime) > /tmp/final41/b32.txt 2>&1
(uptime; OMP_PROC_BIND=true taskset -c 1 chrt -f 50 build/bin/conv_cputime --rounds=5 $L; uptime) > /tmp/final41/t1b.txt 2>&1
(uptime; OMP_NUM_THREADS=2 OMP_PROC_BIND=true taskset -c 0,1 chrt -f 50 build/bin/conv_cputime --threads=2 --rounds=5 $L; uptime) > /tmp/final41/t2b.txt 2>&1
(uptime; OMP_PROC_BIND=true build/bin/bench_caffe; uptime) > /tmp/final41/caffe.txt 2>&1
# The same training runs with the AVX2 kernels on this CPU (what AVX-512 adds here).
(uptime; TAIHU_ISA=avx2 OMP_PROC_BIND=true build/bin/bench_caffe; uptime) > /tmp/final41/caffe_avx2.txt 2>&1
(uptime; for isa in avx2 avx512 avx2 avx512; do echo "== TAIHU_ISA=$isa"; TAIHU_ISA=$isa OMP_PROC_BIND=true taskset -c 1 build/bin/bench_dnn_ops --benchmark_filter=threads:1; done; uptime) > /tmp/final41/ops.txt 2>&1
