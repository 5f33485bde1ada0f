#!/usr/bin/env bash
# scripts/cluster.d/predict.sh <taihu-allreduce-sim> <out-dir> [calibration-cache]: on the
# cluster that is up (8 hosts, 2 groups), measures the links with link_probe.c and
# feeds them to the simulator. Writes <out-dir>/links.txt and <out-dir>/sim.txt.
#   inside a group: every host exchanging with a neighbour at once (8 flows; on 2 cores
#     the CPUs, not the 1gbit links, set this rate) -> tier supernode bandwidth, latency
#     from an 8-byte exchange;
#   between groups: a lone flow (-> tier system bandwidth; the group's 4 hosts share
#     that one uplink: oversubscription 4); 4 pairs exchanging 8 MiB across at once,
#     mean of 5 (-> exchange=F, the share of the uplink such rendezvous-size two-way
#     exchanges get: 4 x 8 MiB / their time over the lone flow's rate; measured 0.76 on
#     2026-11-28: both directions of each exchange share one TCP connection and MPI's
#     rendezvous fragments, whose acknowledgements queue behind the other direction's
#     data); 2 MiB exchanges are recorded too.
# gamma (s per byte reduced) from the calibration cache when given, else 7e-11.
set -euo pipefail
simulator=$1 out=$2 cache=${3:-}
here=$(cd "$(dirname "$0")/.." && pwd)
cluster=$here/cluster
mkdir -p "$out"
tmp=$(mktemp -d /tmp/taihu-predict.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
mpicc -O2 -o "$tmp/link_probe" "$here/cluster.d/link_probe.c"
probe() { "$cluster" mpirun -np 8 "$tmp/link_probe" "$@" 2>&1 | grep -E '^(exchange|oneway)'; }
{
  probe 8 1
  probe 8388608 1
  probe 8 4
  probe 2097152 4
  probe 8388608 4
  probe 8388608 4 oneway
} | tee "$out/links.txt"
field() {  # field <kind> <d> <bytes-test> <key>
  awk -v kind="$1" -v d="d=$2" -v test="$3" -v key="$4" '
    $1 == kind && $3 == d && ((test == "small" && $2 == 8) || (test == "big" && $2 > 8)) {
      for (i = 4; i <= NF; ++i) { split($i, kv, "="); if (kv[1] == key) print kv[2] } }' "$out/links.txt"
}
a0=$(field exchange 1 small seconds)
b0=$(awk -v m="$(field exchange 1 big per_flow_MBps)" 'BEGIN{print m * 1e6}')
a1=$(field exchange 4 small seconds)
lone=$(awk -v m="$(field oneway 4 big per_flow_MBps)" 'BEGIN{print m * 1e6}')
over=4
# Exchange efficiency across: 4 flows' total rate (mean time) over the lone flow's, at most 1.
exchange=$(awk -v lone="$lone" '$1 == "exchange" && $2 == 8388608 && $3 == "d=4" {
    for (i = 4; i <= NF; ++i) { split($i, kv, "="); if (kv[1] == "mean_seconds") m = kv[2] }
    f = 4 * $2 / m / lone; printf "%.3f", (f > 1 ? 1 : f) }' "$out/links.txt")
gamma=7e-11
# A cache line is "<key> v2 node_alpha node_beta shm_sync shm_copy gamma ..." (older: no v2).
[ -n "$cache" ] && [ -f "$cache" ] && gamma=$(awk '!/^#/ {print ($2 == "v2" ? $7 : $6); exit}' "$cache")
system="gamma=$gamma tier=supernode,4,$b0,$a0,1 tier=system,0,$lone,$a1,$over exchange=$exchange"
{
  echo "system: $system"
  echo "columns: nodes ring recursive_doubling rabenseifner flat_default hierarchical topology_aware flat/topo (ms)"
  for placement in block round_robin; do
    for bytes in 1048576 4194304 16777216 67108864; do
      printf '%-12s %9d ' "$placement" "$bytes"
      "$simulator" --system "$system" --ranks-per-node 1 --max-nodes 8 --placement $placement --png "" --bytes $bytes | tail -1
    done
  done
} | tee "$out/sim.txt"
