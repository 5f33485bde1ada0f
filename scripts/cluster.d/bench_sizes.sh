#!/usr/bin/env bash
# scripts/cluster.d/bench_sizes.sh <bench_allreduce> <out-dir> small|large|model [intra] [inter]:
# one timed part of the cluster allreduce figures, short enough for one hold of the
# bench lock (< 10 min on the 2-core Xeon). Brings up 8 hosts in 2 groups (default
# intra 1gbit, inter 100mbit: 10:1) unless that cluster is up, and leaves it up (`scripts/cluster
# down` after the last part). Calibration cache: <out-dir>/calibration.txt (a fresh probe,
# small-message table included, on the first run of each rank order).
#   small: 4 B .. 64 KiB, ranks dealt round-robin (rr-small.txt) and in topology order
#          (topo-small.txt) vs Open MPI's tuned default, then topology order vs each forced
#          algorithm K = 1..6 (topo-small-forcedK.txt); --seconds 1, 21 rounds (forced: 0.5 s, 15), in and out of place.
#   large: 64 MiB in place, 3 rounds: round-robin vs the default (rr-64M.txt), topology
#          order vs the default (topo-64M.txt) and vs forced Rabenseifner (6), the best
#          forced algorithm at 16 and 64 MiB in every earlier sweep (topo-64M-forced6.txt).
#   model: topology order at 64 MiB in place vs forced ring (4) and segmented ring (5)
#          (topo-64M-forcedK.txt), then taihu forced to ring / rabenseifner
#          (topo-64M-taihu-ALG.txt) for the simulator table (hierarchical is the automatic
#          choice in `large`).
set -euo pipefail
bench=$1 out=$2 part=$3 intra=${4:-1gbit} inter=${5:-100mbit}
here=$(cd "$(dirname "$0")/.." && pwd)
cluster=$here/cluster
mkdir -p "$out"
config=${TAIHU_CLUSTER_DIR:-/run/taihu-cluster}/config
if ! { [ -f "$config" ] && grep -qx "hosts=8" "$config" && grep -qx "groups=2" "$config" &&
       grep -qx "intra=$intra" "$config" && grep -qx "inter=$inter" "$config"; }; then
  "$cluster" up --hosts 8 --groups 2 --intra "$intra" --inter "$inter" | tee "$out/cluster.txt"
fi
cache=$out/calibration.txt
run() {  # run <name> <cluster mpirun args...>
  local name=$1; shift
  echo "== $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg) $name: $*" | tee "$out/$name.txt"
  "$cluster" mpirun -np 8 -x TAIHU_COMM_CACHE="$cache" -x TAIHU_VERBOSE=1 "$@" 2>&1 |
    grep -v 'plm:rsh: Warning: setpgid' | tee -a "$out/$name.txt"
}
forced=(--mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_allreduce_algorithm)
case $part in
  small)
    run rr-small --order round-robin "$bench" --min-bytes 4 --max-bytes 65536 --seconds 1 --rounds 21
    run topo-small --order topology "$bench" --min-bytes 4 --max-bytes 65536 --seconds 1 --rounds 21
    for k in 1 2 3 4 5 6; do
      run "topo-small-forced$k" --order topology "${forced[@]}" $k "$bench" --min-bytes 4 --max-bytes 65536 --seconds 0.5 --rounds 15
    done ;;
  large)
    big=(--min-bytes 67108864 --max-bytes 67108864 --rounds 3 --in-place-only --seconds 0.1)
    run rr-64M --order round-robin "$bench" "${big[@]}"
    run topo-64M --order topology "$bench" "${big[@]}"
    run topo-64M-forced6 --order topology "${forced[@]}" 6 "$bench" "${big[@]}" ;;
  model)
    big=(--min-bytes 67108864 --max-bytes 67108864 --rounds 3 --in-place-only --seconds 0.1)
    for k in 4 5; do
      run "topo-64M-forced$k" --order topology "${forced[@]}" $k "$bench" "${big[@]}"
    done
    for alg in ring rabenseifner; do
      run "topo-64M-taihu-$alg" --order topology "${forced[@]}" 6 "$bench" --algorithm $alg "${big[@]}"
    done ;;
  *) echo "bench_sizes.sh: part must be small, large or model" >&2; exit 1 ;;
esac
