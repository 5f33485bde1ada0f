#!/usr/bin/env bash
# tests/cluster/on_cluster.sh <test-name> <command...>: runs one cluster test command,
# or exits 77 (ctest SKIP_RETURN_CODE) with the reason when no cluster is up because
# this machine cannot make network namespaces. A cluster that should be up but is not
# (the setup test failed for another reason) is a failure, never a skip.
# Fails fast instead of hanging: before the command, a link left down or a process left
# in a host by an earlier test is reported and cleared, and every host must answer
# (`scripts/cluster check`: links up, TCP to and from the launcher, address resolutions
# a link bounce left stale dropped); the command gets
# TAIHU_CLUSTER_TEST_TIMEOUT seconds (default 240; alone every test takes < 20 s, and
# ctest's own limit is 600 s), after which the processes still in the hosts, their
# sockets and the links are printed, everything in the hosts is ended, and it fails.
set -uo pipefail
name=$1; shift
cluster=$(dirname "$0")/../../scripts/cluster
state=${TAIHU_CLUSTER_DIR:-/run/taihu-cluster}
bound=${TAIHU_CLUSTER_TEST_TIMEOUT:-240}
if [ ! -f "$state/config" ]; then
  if [ -f "${TAIHU_CLUSTER_SKIP_FILE:-/tmp/taihu-cluster-skip}" ]; then
    echo "SKIP $name: $(cat "${TAIHU_CLUSTER_SKIP_FILE:-/tmp/taihu-cluster-skip}")"
    exit 77
  fi
  echo "FAIL $name: no cluster is up ($state/config missing) and scripts/cluster up did not report namespaces as impossible"
  exit 1
fi
hosts=$(awk -F= '$1 == "hosts" {print $2}' "$state/config")

# Every taihu-* host namespace and the pids in it.
host_pids() {
  local h
  for h in $(seq 0 $((hosts - 1))); do ip netns pids "taihu-h$h" 2>/dev/null | sed "s/^/$h /"; done
}

# Leftovers of an earlier test (a job that outlived its test, a link a test took down).
left=$(host_pids)
if [ -n "$left" ]; then
  echo "$name: processes left in the hosts by an earlier test, ended now:"
  while read -r h pid; do echo "  host $h pid $pid: $(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null)"; kill -9 "$pid" 2>/dev/null; done <<<"$left"
fi
for dev in $(ip -o link show 2>/dev/null | awk -F': ' '{print $2}' | cut -d@ -f1 | grep '^taihu-' || true); do
  if ip -o link show "$dev" 2>/dev/null | grep -q 'state DOWN'; then
    echo "$name: link $dev was left down by an earlier test; set up again"
    ip link set "$dev" up 2>/dev/null
  fi
done
if ! "$cluster" check >/dev/null; then
  echo "FAIL $name: not every host answers before the test (above); not started"
  exit 1
fi

start=$(date +%s.%N)
setsid "$@" &
job=$!
ticks=0
while kill -0 "$job" 2>/dev/null && [ $ticks -lt $((bound * 10)) ]; do sleep 0.1; ticks=$((ticks + 1)); done
if kill -0 "$job" 2>/dev/null; then
  echo "FAIL $name: still running after $bound s (TAIHU_CLUSTER_TEST_TIMEOUT): a hang. State before ending it:"
  while read -r h pid; do
    [ -n "$pid" ] || continue
    echo "  host $h pid $pid ($(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null)): $(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | cut -c1-160)"
  done <<<"$(host_pids)"
  for h in $(seq 0 $((hosts - 1))); do
    echo "  host $h TCP: $(ip netns exec "taihu-h$h" ss -tn 2>/dev/null | awk 'NR > 1 {printf "%s %s>%s q%s/%s; ", $1, $4, $5, $2, $3}')"
  done
  echo "  links: $(ip -o link show 2>/dev/null | awk -F': ' '$2 ~ /^taihu-/ {split($2, n, "@"); s = ($3 ~ /state UP/) ? "up" : "DOWN"; printf "%s %s, ", n[1], s}')"
  kill -TERM -- "-$job" 2>/dev/null; sleep 3; kill -KILL -- "-$job" 2>/dev/null
  while read -r h pid; do [ -n "$pid" ] && kill -9 "$pid" 2>/dev/null; done <<<"$(host_pids)"
  wait "$job" 2>/dev/null
  exit 1
fi
wait "$job"
rc=$?
echo "$name: exit $rc after $(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}') s"
exit $rc
