#!/usr/bin/env bash
# scripts/cluster.d/bench.sh <bench_allreduce> <taihu-allreduce-sim> <out-dir> [intra] [inter]:
# the README's measured-vs-predicted cluster table. Brings up 8 hosts in 2 groups
# (default intra 1gbit, inter 100mbit: 10:1), then
#   links.txt            link parameters with every host exchanging at once (link_probe.c)
#   rr-default.txt       bench_allreduce 4 B..64 MiB, ranks dealt round-robin over the groups,
#                        vs Open MPI's tuned default
#   topo-default.txt     the same in topology order
#   topo-forcedK.txt     topology order vs Open MPI's forced algorithm K (1..6), 16 MiB
#   topo-best-64M.txt    the fastest forced K at 16 MiB, again at 64 MiB
#   topo-taihu-ALG.txt   taihu forced to ring / rabenseifner / hierarchical, 1..64 MiB
#   sim.txt              taihu-allreduce-sim given links.txt
# and takes the cluster down. Run it under the bench lock; ~35 min on 2 cores.
set -euo pipefail
bench=$1 simulator=$2 out=$3 intra=${4:-1gbit} inter=${5:-100mbit}
here=$(cd "$(dirname "$0")/.." && pwd)
cluster=$here/cluster
mkdir -p "$out"
"$cluster" up --hosts 8 --groups 2 --intra "$intra" --inter "$inter" | tee "$out/cluster.txt"
trap '"$cluster" down >/dev/null' EXIT
cache=$out/calibration.txt
rm -f "$cache"
run() {  # run <name> <cluster mpirun args...>
  local name=$1; shift
  echo "== $(date -u +%FT%TZ) $name: $*" | tee "$out/$name.txt"
  "$cluster" mpirun -np 8 -x TAIHU_COMM_CACHE="$cache" "$@" 2>&1 | grep -v 'plm:rsh: Warning: setpgid' | tee -a "$out/$name.txt"
}
mpicc -O2 -o "$out/link_probe" "$here/cluster.d/link_probe.c"
: >"$out/links.txt"
for d in 1 4; do
  for n in 8 8388608; do
    [ $d = 4 ] && [ $n = 8388608 ] && n=2097152
    "$cluster" mpirun -np 8 "$out/link_probe" $n $d 2>&1 | grep '^exchange' | tee -a "$out/links.txt"
  done
done
opt=(--mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_allreduce_algorithm)
run rr-default --order round-robin -x TAIHU_VERBOSE=1 "$bench" --seconds 0.1
run topo-default --order topology "$bench" --seconds 0.1
for k in 1 2 3 4 5 6; do
  run "topo-forced$k" --order topology "${opt[@]}" $k "$bench" --min-bytes 16777216 --max-bytes 16777216 --seconds 0.1
done
best=$(for k in 1 2 3 4 5 6; do awk -v k=$k '/allreduce\/8\//{print $3, k}' "$out/topo-forced$k.txt"; done | sort -g | head -1 | cut -d' ' -f2)
run topo-best-64M --order topology "${opt[@]}" "$best" "$bench" --min-bytes 67108864 --max-bytes 67108864 --seconds 0.1
for alg in ring rabenseifner hierarchical; do
  run "topo-taihu-$alg" --order topology "${opt[@]}" "$best" "$bench" --algorithm $alg --min-bytes 1048576 --seconds 0.1
done
# The simulator with the measured links: per-flow exchange rate inside a group (all
# hosts busy), and the uplink's capacity per direction (4 flows share it).
read -r a0 b0 a1 b1 < <(awk '
  /d=1/ && $2 == 8 {split($4, x, "="); a0 = x[2]}
  /d=1/ && $2 > 8 {split($4, x, "="); split($5, y, "="); b0 = y[2] * 1e6}
  /d=4/ && $2 == 8 {split($4, x, "="); a1 = x[2]}
  /d=4/ && $2 > 8 {split($5, y, "="); b1 = y[2] * 1e6 * 4}
  END {print a0, b0, a1, b1}' "$out/links.txt")
gamma=$(awk '!/^#/ {print $6; exit}' "$cache")
system="gamma=$gamma tier=supernode,4,$b0,$a0,1 tier=system,0,$b1,$a1,4"
{
  echo "system: $system"
  for placement in block round_robin; do
    for bytes in 1048576 4194304 16777216 67108864; do
      echo "-- placement $placement, $bytes bytes"
      "$simulator" --system "$system" --ranks-per-node 1 --max-nodes 8 --placement $placement --png "" --bytes $bytes | tail -2
    done
  done
} | tee "$out/sim.txt"
