#!/usr/bin/env bash
# tests/cluster/supernodes_check.sh <scripts/cluster> <cluster_allreduce_loop>: with no
# topology file, taihu::comm finds the cluster's supernodes from measured link
# bandwidth: 8 hosts in 2 groups of 4 must come out as 2 groups of 4, in topology
# order and with ranks dealt round-robin over the groups (then the groups are not runs
# of consecutive ranks); a second job on the same hosts reads the grouping from the
# cache instead of probing again.
# The fixture's links (10gbit inside, 1gbit across) are both faster than 8 hosts on 2
# busy cores can drive, so the test reshapes the cluster to the benchmark's 1gbit /
# 100mbit (10:1; the CPUs still reach ~60-120 MB/s inside a group) and puts the
# fixture's cluster back afterwards.
set -uo pipefail
cluster=$1 loop=$2
state=${TAIHU_CLUSTER_DIR:-/run/taihu-cluster}
# shellcheck disable=SC1091
. "$state/config"
restore=(--hosts "$hosts" --groups "$groups" --intra "$intra" --inter "$inter")
tmp=$(mktemp -d /tmp/taihu-supernodes.XXXXXX)
trap '"$cluster" up "${restore[@]}" >/dev/null; rm -rf "$tmp"' EXIT
"$cluster" up --hosts 8 --groups 2 --intra 1gbit --inter 100mbit || { echo "FAIL: cannot reshape the cluster"; exit 1; }
fail() { echo "FAIL: $*"; exit 1; }
job() {  # job <order> <log>
  TAIHU_TOPOLOGY_FILE=none "$cluster" mpirun --order "$1" -np 8 -x TAIHU_VERBOSE=1 \
    -x TAIHU_COMM_CACHE="$tmp/cache-$1.txt" "$loop" --bytes 4096 --seconds 0.2 >"$2" 2>&1
  local rc=$?
  grep -E 'taihu: comm: (supernodes|8 ranks)' "$2"
  [ $rc = 0 ] || { cat "$2"; fail "the $1-order job exited $rc"; }
}
for order in topology round-robin; do
  job "$order" "$tmp/$order-1.log"
  grep -q 'supernodes from measured link bandwidth: 2 group(s) (2 groups of 4' "$tmp/$order-1.log" ||
    fail "$order order: the bandwidth probe did not find 2 groups of 4"
  grep -q 'x groups of 4 (topology from measured link bandwidth)' "$tmp/$order-1.log" ||
    fail "$order order: the layout does not use the measured groups"
  grep -q '^groups:' "$tmp/cache-$order.txt" || fail "$order order: the grouping was not cached"
  job "$order" "$tmp/$order-2.log"
  grep -q 'supernodes from measured link bandwidth: 2 group(s) (cache ' "$tmp/$order-2.log" ||
    fail "$order order: the second job did not read the cached grouping"
done
echo "PASS: 2 supernodes of 4 measured in both rank orders, cached"
