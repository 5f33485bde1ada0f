#!/bin/bash
# TVM MetaSchedule on res4 3x3 (batch 1, 1 thread, 20 s), one bench-lock slot of at most 5 minutes
cd /tmp/at5
{ echo "== tvm_res4 $(date -u +%H:%M:%S) $(uptime | sed 's/.*load/load/')"
  timeout 290 /work/main/build/bin/bench_autotune --suite dnn --budget-per-layer 20s --batch 1 --threads 1 --anchors tvm --layers resnet50_res4_3x3 --log suite_b1_t1.jsonl --dnn-records rec_b1_t1.jsonl --csv tvm_res4.csv 2>&1
  echo "rc=$?"
  echo "== end $(date -u +%H:%M:%S) $(uptime | sed 's/.*load/load/')"; } > tvm_res4.txt
