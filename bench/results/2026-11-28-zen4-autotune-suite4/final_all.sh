#!/bin/bash
cd /tmp/at-suite
flock /tmp/taihu-bench.lock ./grp_final.sh final_g1 1 1 20s resnet50_res3_3x3,resnet50_res2_3x3,resnet50_res4_3x3,resnet50_res2_1x1
sleep 5
flock /tmp/taihu-bench.lock ./grp_final.sh final_g2 1 1 20s lenet_conv1,lenet_conv2,cifar_quick_conv1,cifar_quick_conv2,cifar_quick_conv3
sleep 5
flock /tmp/taihu-bench.lock ./grp_final.sh final_g3 1 1 20s vgg16_conv3_2,vgg16_conv1_2
