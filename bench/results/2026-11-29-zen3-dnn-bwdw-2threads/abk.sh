#!/bin/sh
# usage: abk.sh N rounds problems... : lib B, xi split (KSPLIT=0, arm A) / default (arm B) alternating N times, 2 threads
N=$1; shift
for i in $(seq $N); do
  TAIHU_WINOGRAD_BWDW_KSPLIT=0 flock /tmp/taihu-bench.lock /tmp/h43tt/run2.sh /tmp/h43tt/B "$@" | sed "s/^/A /"
  TAIHU_WINOGRAD_BWDW_KSPLIT= flock /tmp/taihu-bench.lock /tmp/h43tt/run2.sh /tmp/h43tt/B "$@" | sed "s/^/B /"
done
