#!/bin/bash
# A/B of the AVX2 leading Winograd templates: A = HEAD's libtaihu_autotune (lib/), B = the change (libB/);
# same binary, same starting log (the pass's log less these two layers), 20 s a layer, alternating processes.
cd /tmp/at-suite10
export TAIHU_ANCHORS_DIR=/work/main/build/anchors
L=cifar_quick_conv2,resnet50_res4_3x3
for i in 1 2 3; do for arm in A B; do
  cp ab_base.jsonl ab_${arm}$i.jsonl
  lib=lib; [ $arm = B ] && lib=libB
  flock /tmp/taihu-bench.lock env LIBDIR=$lib ./run_ab.sh ab_${arm}$i 1 1 20s $L ab_${arm}$i.jsonl; sleep 2
done; done
echo done > ab.done
