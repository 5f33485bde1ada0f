#!/bin/bash
# batch 1, 1 thread, 20 s a layer, in chunks of <= 2-3 min under the bench lock; one shared log p_b1.jsonl
cd /tmp/at-suite10
export TAIHU_ANCHORS_DIR=/work/main/build/anchors
R1=resnet50_res3_3x3,resnet50_res2_3x3
R2=resnet50_res4_3x3,resnet50_res2_1x1
S=lenet_conv1,lenet_conv2,cifar_quick_conv1,cifar_quick_conv2,cifar_quick_conv3
V=vgg16_conv3_2,vgg16_conv1_2
rm -f p_b1.jsonl
flock /tmp/taihu-bench.lock ./run.sh b1_R1 1 1 20s $R1 p_b1.jsonl; sleep 3
flock /tmp/taihu-bench.lock ./run.sh b1_R2 1 1 20s $R2 p_b1.jsonl; sleep 3
flock /tmp/taihu-bench.lock ./run.sh b1_S 1 1 20s $S p_b1.jsonl; sleep 3
flock /tmp/taihu-bench.lock ./run.sh b1_V 1 1 20s $V p_b1.jsonl
echo done > pass.done
