#!/usr/bin/env bash
# tests/cluster/hang_check.sh <on_cluster.sh> <scripts/cluster>: a cluster test that hangs
# fails fast with a message. Runs a 2-host job that never ends (sleep 600 in each host)
# through on_cluster.sh with TAIHU_CLUSTER_TEST_TIMEOUT=15 (a cold first launch took over
# 5 s to start the sleeps, so a 5 s limit listed only the daemons) and checks that it fails within
# 45 s, says "a hang", lists the processes it found in the hosts, and leaves none behind.
set -uo pipefail
on=$1 cluster=$2
out=$(mktemp /tmp/taihu-hang.XXXXXX)
trap 'rm -f "$out"' EXIT
t0=$(date +%s)
TAIHU_CLUSTER_TEST_TIMEOUT=15 "$on" cluster.hang_probe "$cluster" mpirun -np 2 sleep 600 >"$out" 2>&1
rc=$?
elapsed=$(($(date +%s) - t0))
cat "$out"
[ $rc -ne 0 ] || { echo "FAIL: a hanging job exited 0"; exit 1; }
[ $elapsed -le 45 ] || { echo "FAIL: took ${elapsed} s to give up (bound 45 s)"; exit 1; }
grep -q "a hang" "$out" || { echo "FAIL: no hang message"; exit 1; }
# The job's processes: the sleeps must be listed (every host starts its daemon, so the
# job does reach them within 15 s).
grep -q "sleep 600" "$out" || { echo "FAIL: the hung processes (sleep 600) were not listed"; exit 1; }
left=""
for ns in $(ip netns list | awk '{print $1}' | grep '^taihu-h'); do left+=$(ip netns pids "$ns" | tr '\n' ' '); done
[ -z "${left// /}" ] || { echo "FAIL: processes left in the hosts: $left"; exit 1; }
pgrep -f "mpirun.*sleep 600" >/dev/null && { echo "FAIL: mpirun still running"; exit 1; }
echo "OK: the hanging job failed after ${elapsed} s with the hosts' state, nothing left"
