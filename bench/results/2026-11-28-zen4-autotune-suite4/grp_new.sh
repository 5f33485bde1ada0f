#!/bin/bash
# usage: grp.sh <tag> <batch> <threads> <budget> <layers> [extra...]
cd /tmp/at-suite
tag=$1; b=$2; t=$3; bud=$4; layers=$5; shift 5
{ echo "== $tag $(date -u +%H:%M:%S) $(uptime | sed 's/.*load/load/')"
  /tmp/at-suite/bench_autotune --suite dnn --budget-per-layer $bud --batch $b --threads $t --anchors none --layers $layers --log suite_new_b${b}_t${t}.jsonl --dnn-records rec_new_b${b}_t${t}.jsonl --csv $tag.csv "$@" 2>&1
  echo "== end $(date -u +%H:%M:%S) $(uptime | sed 's/.*load/load/')"; } > $tag.txt
