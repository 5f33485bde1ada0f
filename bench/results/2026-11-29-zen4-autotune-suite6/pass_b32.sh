#!/bin/bash
cd /tmp/at6
cp suite_b1_t1.jsonl suite_b32_t1.jsonl
flock /tmp/taihu-bench.lock ./grp.sh b32_t1_A 32 1 15s resnet50_res3_3x3,resnet50_res2_3x3,resnet50_res4_3x3,resnet50_res2_1x1
sleep 5
flock /tmp/taihu-bench.lock ./grp.sh b32_t1_B 32 1 15s lenet_conv1,lenet_conv2,cifar_quick_conv1,cifar_quick_conv2,cifar_quick_conv3
sleep 5
flock /tmp/taihu-bench.lock ./grp.sh b32_t1_C 32 1 15s vgg16_conv3_2,vgg16_conv1_2
sleep 5
flock /tmp/taihu-bench.lock ./grp.sh b1_t2 1 2 20s resnet50_res3_3x3,resnet50_res2_3x3,resnet50_res4_3x3,resnet50_res2_1x1
echo done > pass_b32.done
