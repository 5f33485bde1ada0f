#!/bin/bash
# usage: hog_ab.sh <taskset cpus for hog or "none"> <schedule file>
cd /tmp/at-suite
if [ "$1" != none ]; then taskset -c $1 sh -c 'while :; do :; done' & HOG=$!; fi
uptime
/work/main/build/bin/bench_autotune --suite-compare mb1ic256ih56oc64oh56kh1 --schedule $2 --threads 2 2>&1 | grep -E "tuned|pointwise|explicit"
[ -n "$HOG" ] && kill $HOG
