#!/bin/bash
# usage: hogs_ab.sh <number of unpinned hogs> <schedule file> [threads]
cd /tmp/at-suite
P=()
for i in $(seq 1 $1); do sh -c 'while :; do :; done' & P+=($!); done
sleep 0.5; uptime
/work/main/build/bin/bench_autotune --suite-compare mb1ic256ih56oc64oh56kh1 --schedule $2 --threads ${3:-2} 2>&1 | grep -E "tuned|pointwise|explicit"
for p in "${P[@]}"; do kill $p; done
