#!/usr/bin/env bash
# scripts/cluster.d/bench.sh <bench_allreduce> <taihu-allreduce-sim> <out-dir> [intra] [inter]:
# the README's measured-vs-predicted cluster table. Brings up 8 hosts in 2 groups
# (default intra 1gbit, inter 100mbit: 10:1), then
#   rr-default.txt       bench_allreduce 4 B..64 MiB, ranks dealt round-robin over the groups,
#                        vs Open MPI's tuned default
#   topo-default.txt     the same in topology order
#   topo-forcedK.txt     topology order vs Open MPI's forced algorithm K (1..6), 16 MiB
#   topo-best-64M.txt    the fastest forced K at 16 MiB, again at 64 MiB
#   topo-taihu-ALG.txt   taihu forced to ring / rabenseifner / hierarchical, 1..64 MiB
#   links.txt, sim.txt   the measured links and taihu-allreduce-sim's predictions (predict.sh)
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
# The simulator given the measured links (links.txt, sim.txt).
"$here/cluster.d/predict.sh" "$simulator" "$out" "$cache"
