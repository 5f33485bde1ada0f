#!/bin/bash
# usage: run.sh <tag> <batch> <threads> <budget> <layers> <log>  (the copied binary and libs, scratch /tmp/at-suite8)
cd /tmp/at-suite8
tag=$1; b=$2; t=$3; bud=$4; layers=$5; log=$6; shift 6
export LD_LIBRARY_PATH=/tmp/at-suite8/lib
{ echo "== $tag $(date -u +%H:%M:%S) $(uptime | sed 's/.*load/load/')"
  ./bench_autotune_8 --suite dnn --budget-per-layer $bud --batch $b --threads $t --anchors none --layers $layers --log $log --dnn-records rec_$tag.jsonl --csv $tag.csv "$@" 2>&1 | grep -v ' medians (us)'
  echo "== end $(date -u +%H:%M:%S) $(uptime | sed 's/.*load/load/')"; } > $tag.txt
