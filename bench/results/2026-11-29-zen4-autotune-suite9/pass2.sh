#!/bin/bash
# After b1_B (left from pass.sh): VGG16 at batch 32 first (from suite8's batch-1 log), then VGG16 batch 1, ResNet-50 / small layers at batch 32, ResNet-50 at 2 threads
cd /tmp/at-suite9
R=resnet50_res3_3x3,resnet50_res2_3x3,resnet50_res4_3x3,resnet50_res2_1x1
S=lenet_conv1,lenet_conv2,cifar_quick_conv1,cifar_quick_conv2,cifar_quick_conv3
while pgrep -f "run.sh b1_B" > /dev/null; do sleep 2; done
cp p_b1_s8.jsonl p_v32.jsonl
flock /tmp/taihu-bench.lock ./run.sh b32_V1 32 1 15s vgg16_conv1_2 p_v32.jsonl; sleep 2
flock /tmp/taihu-bench.lock ./run.sh b32_V3 32 1 15s vgg16_conv3_2 p_v32.jsonl; sleep 2
flock /tmp/taihu-bench.lock ./run.sh b1_C 1 1 20s vgg16_conv3_2,vgg16_conv1_2 p_b1.jsonl; sleep 2
cp p_b1.jsonl p_b32.jsonl
flock /tmp/taihu-bench.lock ./run.sh b32_A 32 1 15s $R p_b32.jsonl; sleep 2
flock /tmp/taihu-bench.lock ./run.sh b32_B 32 1 15s $S p_b32.jsonl; sleep 2
flock /tmp/taihu-bench.lock ./run.sh b1_t2 1 2 20s $R p_t2.jsonl
echo done > pass2.done
