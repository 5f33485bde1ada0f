#!/bin/sh
# usage: abn.sh VAR "vals" N rounds problems... : lib B, alternating VAR values N times at 2 threads
V=$1; shift; VALS=$1; shift; N=$1; shift
for i in $(seq $N); do
  for v in $VALS; do
    env $V=$v flock /tmp/taihu-bench.lock /tmp/h43tt/run2.sh /tmp/h43tt/B "$@" | sed "s/^/$v /"
  done
done
