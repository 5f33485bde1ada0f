#!/bin/bash
cd /tmp/at6
flock /tmp/taihu-bench.lock ./grp.sh b1_t1_A 1 1 20s resnet50_res3_3x3,resnet50_res2_3x3,resnet50_res4_3x3,resnet50_res2_1x1
sleep 5
flock /tmp/taihu-bench.lock ./grp.sh b1_t1_B 1 1 20s lenet_conv1,lenet_conv2,cifar_quick_conv1,cifar_quick_conv2,cifar_quick_conv3
sleep 5
flock /tmp/taihu-bench.lock ./grp.sh b1_t1_C 1 1 20s vgg16_conv3_2,vgg16_conv1_2
echo done > pass_b1.done
