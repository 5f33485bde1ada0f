#!/bin/bash
cd /tmp/at-suite9
R=resnet50_res3_3x3,resnet50_res2_3x3,resnet50_res4_3x3,resnet50_res2_1x1
S=lenet_conv1,lenet_conv2,cifar_quick_conv1,cifar_quick_conv2,cifar_quick_conv3
V=vgg16_conv3_2,vgg16_conv1_2
rm -f p_b1.jsonl p_b32.jsonl p_t2.jsonl
flock /tmp/taihu-bench.lock ./run.sh b1_A 1 1 20s $R p_b1.jsonl; sleep 3
flock /tmp/taihu-bench.lock ./run.sh b1_B 1 1 20s $S p_b1.jsonl; sleep 3
flock /tmp/taihu-bench.lock ./run.sh b1_C 1 1 20s $V p_b1.jsonl; sleep 3
cp p_b1.jsonl p_b32.jsonl
flock /tmp/taihu-bench.lock ./run.sh b32_A 32 1 15s $R p_b32.jsonl; sleep 3
flock /tmp/taihu-bench.lock ./run.sh b32_B 32 1 15s $S p_b32.jsonl; sleep 3
flock /tmp/taihu-bench.lock ./run.sh b32_C1 32 1 15s vgg16_conv3_2 p_b32.jsonl; sleep 3
flock /tmp/taihu-bench.lock ./run.sh b32_C2 32 1 15s vgg16_conv1_2 p_b32.jsonl; sleep 3
flock /tmp/taihu-bench.lock ./run.sh b1_t2 1 2 20s $R p_t2.jsonl
echo done > pass.done
