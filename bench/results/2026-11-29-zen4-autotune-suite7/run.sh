#!/bin/bash
# usage: run.sh <tag> <batch> <threads> <budget> <layers> <log>  (the copied binary and libs, scratch /tmp/at7)
cd /tmp/at7
tag=$1; b=$2; t=$3; bud=$4; layers=$5; log=$6; shift 6
export LD_LIBRARY_PATH=/tmp/at7/lib
{ echo "== $tag $(date -u +%H:%M:%S) $(uptime | sed 's/.*load/load/')"
  ./bench_autotune_172 --suite dnn --budget-per-layer $bud --batch $b --threads $t --anchors none --layers $layers --log $log --dnn-records rec_$tag.jsonl --csv $tag.csv "$@" 2>&1
  echo "== end $(date -u +%H:%M:%S) $(uptime | sed 's/.*load/load/')"; } > $tag.txt
