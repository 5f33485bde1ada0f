#!/bin/bash
cd /tmp/at5
flock /tmp/taihu-bench.lock ./grp.sh b1_t1_res4 1 1 20s resnet50_res4_3x3
cp suite_b1_t1.jsonl suite_b32_t1.jsonl
sleep 3
flock /tmp/taihu-bench.lock ./grp.sh b32_t1_res4 32 1 15s resnet50_res4_3x3
echo done > seq.done
