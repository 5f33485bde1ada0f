#!/bin/bash
# A (HEAD's libtaihu_autotune) and B3 (the row-of-tiles input transform), each from an empty log carried from R to S; chunks alternate A B A B
cd /tmp/wino43/suite
R=resnet50_res3_3x3,resnet50_res4_3x3
S=lenet_conv1,lenet_conv2,cifar_quick_conv1,cifar_quick_conv2,cifar_quick_conv3
rm -f log_A.jsonl log_B3.jsonl
for c in R S; do for arm in A B3; do
  flock /tmp/taihu-bench.lock ./run.sh $arm ${arm}_$c ${!c} log_$arm.jsonl; sleep 2
done; done
echo done > pass.done
