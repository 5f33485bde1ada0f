#!/usr/bin/env bash
# tests/cluster/on_cluster.sh <test-name> <command...>: runs one cluster test command,
# or exits 77 (ctest SKIP_RETURN_CODE) with the reason when no cluster is up because
# this machine cannot make network namespaces. A cluster that should be up but is not
# (the setup test failed for another reason) is a failure, never a skip.
set -uo pipefail
name=$1; shift
state=${TAIHU_CLUSTER_DIR:-/run/taihu-cluster}
if [ ! -f "$state/config" ]; then
  if [ -f "${TAIHU_CLUSTER_SKIP_FILE:-/tmp/taihu-cluster-skip}" ]; then
    echo "SKIP $name: $(cat "${TAIHU_CLUSTER_SKIP_FILE:-/tmp/taihu-cluster-skip}")"
    exit 77
  fi
  echo "FAIL $name: no cluster is up ($state/config missing) and scripts/cluster up did not report namespaces as impossible"
  exit 1
fi
start=$(date +%s.%N)
"$@"
rc=$?
echo "$name: exit $rc after $(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}') s"
exit $rc
