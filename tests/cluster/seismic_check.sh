#!/usr/bin/env bash
# tests/cluster/seismic_check.sh <scripts/cluster> <taihu-seismic>: the distributed
# `taihu-seismic run` on 4 cluster hosts writes the same SEG-Y bytes as one process.
set -euo pipefail
cluster=$1 seis=$2
dir=$(mktemp -d /tmp/taihu-cluster-seis.XXXXXX)
trap 'rm -rf "$dir"' EXIT
args=(run --shape 160x48 --spacing 10 --tmax 0.15 --width 10 --shots 300:1200:300 --no-png)
TAIHU_NUM_THREADS=1 "$seis" "${args[@]}" --dir "$dir/one" >"$dir/one.log" 2>&1 || { cat "$dir/one.log"; exit 1; }
"$cluster" mpirun -np 4 -x TAIHU_NUM_THREADS=1 "$seis" "${args[@]}" --dir "$dir/four" >"$dir/four.log" 2>&1 ||
  { cat "$dir/four.log"; exit 1; }
grep -a "^wrote" "$dir/four.log" || true
cmp "$dir/one/shots.segy" "$dir/four/shots.segy"
echo "OK: SEG-Y from 4 hosts identical to 1 process ($(stat -c %s "$dir/one/shots.segy") bytes)"
