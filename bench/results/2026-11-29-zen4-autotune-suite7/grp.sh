#!/bin/bash
# usage: grp.sh <tag> <batch> <threads> <budget> <layers> <log> [extra...]  (scratch /tmp/at7)
cd /tmp/at7
tag=$1; b=$2; t=$3; bud=$4; layers=$5; log=$6; shift 6
{ echo "== $tag $(date -u +%H:%M:%S) $(uptime | sed 's/.*load/load/')"
  /work/main/build/bin/bench_autotune --suite dnn --budget-per-layer $bud --batch $b --threads $t --anchors none --layers $layers --log $log --dnn-records rec_$tag.jsonl --csv $tag.csv "$@" 2>&1
  echo "== end $(date -u +%H:%M:%S) $(uptime | sed 's/.*load/load/')"; } > $tag.txt
