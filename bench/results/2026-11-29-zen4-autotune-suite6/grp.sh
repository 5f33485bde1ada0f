#!/bin/bash
# usage: grp.sh <tag> <batch> <threads> <budget> <layers> [extra...]  (logs per batch/threads in /tmp/at6)
cd /tmp/at6
tag=$1; b=$2; t=$3; bud=$4; layers=$5; shift 5
{ echo "== $tag $(date -u +%H:%M:%S) $(uptime | sed 's/.*load/load/')"
  /work/main/build/bin/bench_autotune --suite dnn --budget-per-layer $bud --batch $b --threads $t --anchors none --layers $layers --log suite_b${b}_t${t}.jsonl --dnn-records rec_b${b}_t${t}.jsonl --csv $tag.csv "$@" 2>&1
  echo "== end $(date -u +%H:%M:%S) $(uptime | sed 's/.*load/load/')"; } > $tag.txt
